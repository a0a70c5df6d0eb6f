//! Google's Gemini models, natively (feature `gemini`): the Generative Language API's
//! `models/{model}:streamGenerateContent?alt=sse` and `:generateContent`, with the key in
//! the `x-goog-api-key` header.
//!
//! [`GeminiModel`] is a tower service at the model seam, like
//! [`OpenAiModel`](crate::providers::openai::OpenAiModel): give it to
//! [`Agent::builder`](crate::Agent::builder), or wrap it first in any tower middleware.
//! It is cheap to clone (one shared HTTP client) and always ready.
//!
//! # Example
//!
//! Configuration from a builder (this runs: building sends nothing):
//!
//! ```
//! use tower_adk::providers::gemini::{GeminiModel, Thinking};
//!
//! let model = GeminiModel::builder()
//!     .api_key("my-key")
//!     .model("gemini-2.5-flash")
//!     .thinking(Thinking::budget(1024).include_thoughts(true))
//!     .build()?;
//! assert!(model.is_streaming());
//! # Ok::<_, tower_adk::providers::gemini::ConfigError>(())
//! ```
//!
//! An agent on the model named by `GEMINI_MODEL`, with the key in `GEMINI_API_KEY` (or
//! `GOOGLE_API_KEY`), looking at an image:
//!
//! ```no_run
//! use tower_adk::content::{Content, Part, Source};
//! use tower_adk::providers::gemini::GeminiModel;
//! use tower_adk::{Agent, AgentRequest, Message};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder(GeminiModel::from_env()?).build()?;
//! let photo = Part::image(Source::base64("image/png", "iVBORw0KGgo..."));
//! let question = Content::from(vec![Part::text("What is in this picture?"), photo]);
//! let result = agent.run(AgentRequest::new(vec![Message::user(question)])).await?;
//! println!("{}", result.final_message.content());
//! # Ok(())
//! # }
//! ```
//!
//! # What is sent
//!
//! - The history as `contents`: user turns and tool results as role `user`, assistant
//!   turns as role `model`; every system message as a part of `systemInstruction`.
//! - Images and files: inline (`inlineData` with their `mimeType`; a PDF too), or at a
//!   URL (`fileData` with `fileUri`: a Files API URI, or an `https` URL the API fetches,
//!   which then needs a media type). A part Gemini cannot take fails the call with
//!   [`GeminiError::UnsupportedPart`], naming it: nothing is dropped silently.
//! - Assistant tool calls as `functionCall` parts (with Gemini's own call id, when it gave
//!   one); tool results as `functionResponse` parts, all of a turn's in one `user`
//!   content, in the calls' order: `name`, the call's `id` when Gemini gave one, and the
//!   output as an object (the output itself when it is a JSON object, else
//!   `{"result": ...}`; a failure as `{"error": ...}`). A result's images and files go in
//!   the `functionResponse`'s `parts` (the current API's multimodal function responses),
//!   or beside it ([`GeminiModelBuilder::tool_media`]).
//! - The model's reasoning, back in its place, byte for byte: each `thoughtSignature` on
//!   the part it came on (a `functionCall`, a text, an image, a part of empty text), a
//!   signed thought as a `thought` part. Thought summaries without a signature are not
//!   sent back, and neither is any other provider's reasoning.
//! - The run's tools as one `functionDeclarations` tool, their JSON Schemas converted to
//!   the API's `Schema` (see below); `toolConfig` for
//!   [`ToolChoice`](crate::model::ToolChoice) other than `auto` (`NONE`, `ANY`, `ANY` with
//!   `allowedFunctionNames`).
//! - [`ModelOptions`](crate::ModelOptions) in `generationConfig`: `temperature`, `topP`,
//!   `maxOutputTokens`, `stopSequences`, `seed`, a response format as
//!   `responseMimeType` + `responseJsonSchema`; the [`Thinking`] config as
//!   `thinkingConfig`. `parallel_tool_calls` has no Gemini equivalent and is not sent.
//!
//! ## Tool schemas
//!
//! Function declarations use the API's `parameters` field, whose `Schema` is a subset of
//! OpenAPI 3.0 that every Gemini model and API version reads. Keywords older versions
//! refuse are converted or dropped: `$ref`s are inlined from `$defs`, `["T", "null"]`
//! types become `nullable`, `const` a one-value `enum`, `oneOf` an `anyOf`; `$schema`,
//! `additionalProperties` and the other keywords outside the API's list are dropped (the
//! loop still checks each call's arguments against the tool's full schema).
//!
//! # What is read
//!
//! A streamed reply becomes [`ModelDelta`](crate::ModelDelta)s as it arrives (see
//! [`ReplyDecoder`] for each kind of part): text, thought summaries as reasoning of
//! provider `gemini` (shown by the agent as reasoning events, never as text), images the
//! model made as [`Part::Image`](crate::content::Part::Image), function calls whole, and
//! each thought signature as a [`Reasoning`](crate::content::Reasoning) part with kind
//! `thought_signature` (its `id` is the call's id when it was on a `functionCall`).
//! Gemini gives calls no ids (Gemini 3 sometimes does): a call without one gets
//! `gemini-{responseId}-{n}`, which is not sent back; results are matched to calls by
//! their order and name, as the API expects. Only the first candidate is read.
//!
//! A reply that ends with a finish reason other than `STOP` or `MAX_TOKENS` (`SAFETY`,
//! `RECITATION`, `PROHIBITED_CONTENT`, `MALFORMED_FUNCTION_CALL`, ...), or whose prompt
//! was blocked, fails with [`GeminiError::Finished`] naming the reason: a run does not
//! go on as if the model had answered. In a stream, what came before reaches the caller
//! first.
//!
//! # Usage
//!
//! The last `usageMetadata` of the reply, recorded in a [`UsageMeter`] found in the
//! request's extensions and passed on as [`ModelDelta::Usage`](crate::ModelDelta::Usage):
//! `promptTokenCount` (plus `toolUsePromptTokenCount`) is the prompt,
//! `cachedContentTokenCount` its cached part (`cache_read_tokens`); the completion is
//! `candidatesTokenCount` plus `thoughtsTokenCount`, because Gemini bills thinking tokens
//! as output and counts them apart from the candidates, and `thoughtsTokenCount` is the
//! completion's `reasoning_tokens`. The total is Gemini's `totalTokenCount`.
//!
//! # Errors and retries
//!
//! Every failure is a [`GeminiError`], made from the API's
//! `{"error": {"code", "message", "status", "details"}}` body: 429 `RESOURCE_EXHAUSTED`
//! is [`GeminiError::RateLimited`] with the wait of its `RetryInfo.retryDelay`; 500, 503
//! `UNAVAILABLE` and 504 are retryable [`GeminiError::Status`]es. As with the OpenAI
//! model, the future resolves when the response head arrives, so a tower `Retry` layer
//! sees the errors up to then; errors in the stream come after text may have reached
//! the caller.

mod config;
mod error;
mod request;
mod schema;
mod stream;

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::{Map, Value};
use tower::Service;

pub use self::config::{
    DEFAULT_API_VERSION, DEFAULT_BASE_URL, DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT,
    GeminiModelBuilder, Thinking,
};
pub use self::error::GeminiError;
pub use self::request::ToolMedia;
use self::stream::Chunk;
pub use self::stream::ReplyDecoder;
use crate::model::MessageAccumulator;
use crate::model::ModelRequest;
use crate::model::ModelResponse;
use crate::model::UsageMeter;
/// Why a model could not be built: the error every HTTP provider's builder shares.
pub use crate::providers::connection::ConfigError;
use crate::providers::http::{Endpoint, ProviderError};
use crate::providers::sse::Flow;

/// A Gemini model on Google's Generative Language API.
///
/// A tower `Service<ModelRequest>`, always ready; clones share one HTTP client. See the
/// [module docs](self) for what it sends and reads.
#[derive(Clone)]
pub struct GeminiModel {
    shared: Arc<Shared>,
}

/// The provider name on Gemini's reasoning parts.
const PROVIDER: &str = "gemini";

/// What a thought signature's [`Reasoning::kind`](crate::content::Reasoning::kind) is.
const THOUGHT_SIGNATURE: &str = "thought_signature";

/// The prefix of the call ids this provider makes for calls that came without one: such
/// ids are ours, and are not sent back to Gemini as `functionCall.id`.
const MADE_ID: &str = "gemini-";

/// What every clone of a model shares.
struct Shared {
    endpoint: Endpoint,
    stream: bool,
    thinking: Thinking,
    tool_media: ToolMedia,
    generation_config: Map<String, Value>,
    extra_body: Map<String, Value>,
}

impl GeminiModel {
    /// A builder with the defaults (Google's base URL, `v1beta`, no key, no model name).
    pub fn builder() -> GeminiModelBuilder {
        GeminiModelBuilder::default()
    }

    /// A model configured from `GEMINI_BASE_URL`, `GEMINI_API_KEY` (or `GOOGLE_API_KEY`)
    /// and `GEMINI_MODEL` (see [`GeminiModelBuilder::from_env`]).
    ///
    /// # Errors
    ///
    /// [`ConfigError`], e.g. when `GEMINI_MODEL` is not set.
    pub fn from_env() -> Result<Self, ConfigError> {
        GeminiModelBuilder::from_env().build()
    }

    /// The model name in the request path.
    pub fn model_name(&self) -> &str {
        &self.shared.endpoint.model
    }

    /// The URL requests go to: `…:streamGenerateContent?alt=sse`, or `…:generateContent`
    /// when streaming is off.
    pub fn endpoint(&self) -> &str {
        self.shared.endpoint.url.as_str()
    }

    /// Whether replies are requested as streams.
    pub fn is_streaming(&self) -> bool {
        self.shared.stream
    }
}

impl Shared {
    /// One call: sends the request, then reads the reply whole or hands its stream over.
    async fn complete(
        self: Arc<Self>,
        request: ModelRequest,
    ) -> Result<ModelResponse, GeminiError> {
        let body = request::request_body(&self, &request)?;
        let meter = request.extensions().get::<UsageMeter>().cloned();
        drop(request);
        // Writing out a JSON value cannot fail.
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let whole = |body: &[u8]| {
            let chunk: Chunk = serde_json::from_slice(body)
                .map_err(|e| GeminiError::malformed_response(e.to_string(), body))?;
            let mut decoder = ReplyDecoder::new();
            let mut reply = MessageAccumulator::default();
            let mut deltas = Vec::new();
            decoder.read(chunk, &mut deltas);
            deltas.into_iter().for_each(|delta| reply.push(delta));
            if decoder.finish()? == Flow::More {
                return Err(GeminiError::malformed_response(
                    "a reply without a finish reason",
                    body,
                ));
            }
            Ok((reply.finish(), decoder.usage()))
        };
        self.endpoint
            .call(body, meter, ReplyDecoder::new(), whole)
            .await
    }
}

impl Service<ModelRequest> for GeminiModel {
    type Response = ModelResponse;
    type Error = GeminiError;
    type Future = ResponseFuture;

    /// Always ready: the HTTP client queues requests in its own pool.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: ModelRequest) -> Self::Future {
        crate::telemetry::record_model("gcp.gemini", &self.shared.endpoint.model);
        ResponseFuture::new(Arc::clone(&self.shared).complete(request))
    }
}

/// The future of a [`GeminiModel`] call: resolves when the response head has arrived (a
/// streamed reply) or the whole reply has (otherwise).
pub type ResponseFuture = crate::providers::ResponseFuture<GeminiError>;

impl fmt::Debug for GeminiModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GeminiModel")
            .field("endpoint", &self.endpoint())
            .field("model", &self.shared.endpoint.model)
            .field("stream", &self.shared.stream)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
