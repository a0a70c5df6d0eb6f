//! A model for OpenAI's Responses API (feature `openai-responses`): `POST
//! {base_url}/responses`, the API OpenAI's reasoning models are made for, and that
//! gateways such as LiteLLM serve in front of other providers.
//!
//! [`ResponsesModel`] is a tower service at the model seam, like
//! [`OpenAiModel`](super::OpenAiModel), whose configuration, HTTP client and errors
//! ([`OpenAiError`]) it shares. What it adds is the reasoning: a
//! reasoning model's reasoning items come back as [`Reasoning`](crate::content::Reasoning)
//! parts of the assistant's turn and go back to the model, byte for byte and in their
//! place, on the next turns, so the model goes on from its own reasoning after a tool
//! call instead of starting over.
//!
//! # Example
//!
//! Configuration from a builder (this runs: building sends nothing):
//!
//! ```
//! use tower_adk::providers::openai::responses::{ReasoningEffort, ReasoningSummary, ResponsesModel};
//!
//! let model = ResponsesModel::builder()
//!     .api_key("sk-...")
//!     .model("o4-mini")
//!     .reasoning_effort(ReasoningEffort::Medium)
//!     .reasoning_summary(ReasoningSummary::Auto)
//!     .build()?;
//! assert_eq!(model.endpoint(), "https://api.openai.com/v1/responses");
//! # Ok::<_, tower_adk::providers::openai::ConfigError>(())
//! ```
//!
//! An agent on the model named by `OPENAI_MODEL` (with `OPENAI_API_KEY`, and
//! `OPENAI_BASE_URL` for another server), printing the model's reasoning as it streams:
//!
//! ```no_run
//! use futures::StreamExt;
//! use tower_adk::providers::openai::responses::ResponsesModel;
//! use tower_adk::testing::text_tool;
//! use tower_adk::{Agent, AgentEvent, AgentRequest};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ResponsesModel::from_env()?;
//! let agent = Agent::builder(model).tool(text_tool("time", "12:00")).build()?;
//! let mut run = agent.run(AgentRequest::user("What time is it?"));
//! while let Some(event) = run.next().await {
//!     match event? {
//!         AgentEvent::ReasoningDelta(text) => eprint!("{text}"),
//!         AgentEvent::Completed(result) => println!("{}", result.final_message.content()),
//!         _ => {}
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # What is sent
//!
//! - The system messages that open the history as `instructions`; the rest as `input`
//!   items: user messages (text, or `input_text`, `input_image` and `input_file` parts:
//!   inline bytes as `data:` URLs, files at a URL as `file_url`), assistant turns (their
//!   text as assistant messages, this provider's reasoning items in their place before
//!   the text and calls that followed them, then a `function_call` item per tool call
//!   with its `call_id`), tool results as `function_call_output` items (text, or, when a
//!   tool returned images or files, a list of `input_text`, `input_image` and
//!   `input_file` parts: the Responses API takes them there, where the chat format needs
//!   a user message after the results).
//! - Reasoning parts of other providers are never sent; the model's own images or files
//!   in an assistant turn are named in its text (the format has no place for them).
//! - `store: false`, and `"include": ["reasoning.encrypted_content"]`, unless
//!   [`store`](ResponsesModelBuilder::store) or
//!   [`encrypted_reasoning`](ResponsesModelBuilder::encrypted_reasoning) say otherwise;
//!   `reasoning: {effort, summary}` when set.
//! - The run's tools as function tools (`strict` when the tool is), and the call's
//!   [`ModelOptions`](crate::ModelOptions): `tool_choice`, `parallel_tool_calls`,
//!   `temperature`, `top_p`, `max_tokens` as `max_output_tokens`, a response format as
//!   `text.format`. `stop` and `seed` are not part of the Responses API and are not sent.
//!
//! # What is read
//!
//! A streamed reply (the default) is read by [`EventDecoder`] from the semantic events
//! (see its table): text deltas, function-call argument deltas, reasoning summary
//! deltas as [`ModelDelta::Reasoning`](crate::ModelDelta::Reasoning) pieces, each
//! reasoning item's `encrypted_content` when the item is done, the usage from
//! `response.completed` (or `response.incomplete`, whose reply is kept as far as it
//! went). A whole reply (`stream(false)`, or a server that answers a streamed request
//! whole) is read from its `output` items the same way.
//!
//! A reasoning item becomes a [`Reasoning`](crate::content::Reasoning) part: provider
//! `openai-responses`, `id` the item's id, `kind` `encrypted_content` and `data` the
//! encrypted content as it came, `text` its summary (the parts joined by a blank line).
//! It goes back as a reasoning item with that id, that encrypted content and its summary
//! as one part: what the model reads back, the encrypted content, is byte for byte what
//! it sent; a summary of several parts comes back as one.
//!
//! # Usage
//!
//! The usage (`input_tokens` with `input_tokens_details.cached_tokens`, `output_tokens`
//! with `output_tokens_details.reasoning_tokens`) goes to the
//! [`UsageMeter`] found in the request's extensions and is
//! reported as [`ModelDelta::Usage`](crate::ModelDelta::Usage) under the configured model
//! name, as for [`OpenAiModel`](super::OpenAiModel).
//!
//! # Errors and retries
//!
//! Every failure is an [`OpenAiError`]: 429 is
//! [`RateLimited`](super::OpenAiError::RateLimited), other statuses
//! [`Status`](super::OpenAiError::Status) (5xx retryable), and a `response.failed` or
//! `error` event a retryable [`StreamError`](super::OpenAiError::StreamError) with the
//! server's message and code. A stream that ends before `response.completed` (or
//! `response.incomplete`) is [`StreamIncomplete`](super::OpenAiError::StreamIncomplete).
//!
//! # Differences from `OpenAiModel`
//!
//! The chat model reads no reasoning and sends none; this one keeps the reasoning of its
//! own provider and, like the chat model, drops everyone else's. A fallback from one to
//! the other therefore loses the reasoning (the chat model never sends it) but nothing
//! else of the history.

mod config;
mod decoder;
mod reply;
mod request;

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::{Map, Value};
use tower::Service;

pub use self::config::{ReasoningEffort, ReasoningSummary, ResponsesModelBuilder};
pub use self::decoder::EventDecoder;
use self::reply::WholeResponse;
use super::{ConfigError, OpenAiError, ResponseFuture};
use crate::model::{ModelRequest, ModelResponse, UsageMeter};
use crate::providers::http::{Endpoint, ProviderError};

/// The provider name of the reasoning parts this model reads and sends back.
pub const PROVIDER: &str = "openai-responses";

/// A model served through OpenAI's Responses API.
///
/// A tower `Service<ModelRequest>`, always ready; clones share one HTTP client (and its
/// connection pool). See the [module docs](self) for what it sends and reads.
#[derive(Clone)]
pub struct ResponsesModel {
    shared: Arc<Shared>,
}

/// What every clone of a model shares.
struct Shared {
    endpoint: Endpoint,
    stream: bool,
    store: bool,
    encrypted_reasoning: bool,
    effort: Option<ReasoningEffort>,
    summary: Option<ReasoningSummary>,
    extra_body: Map<String, Value>,
}

impl ResponsesModel {
    /// A builder with the defaults (OpenAI's base URL, no key, no model name).
    pub fn builder() -> ResponsesModelBuilder {
        ResponsesModelBuilder::default()
    }

    /// A model configured from `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL`
    /// (see [`ResponsesModelBuilder::from_env`]).
    ///
    /// # Errors
    ///
    /// [`ConfigError`], e.g. when `OPENAI_MODEL` is not set.
    pub fn from_env() -> Result<Self, ConfigError> {
        ResponsesModelBuilder::from_env().build()
    }

    /// The model name sent with every request.
    pub fn model_name(&self) -> &str {
        &self.shared.endpoint.model
    }

    /// The URL requests go to: `{base_url}/responses`.
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
    ) -> Result<ModelResponse, OpenAiError> {
        let body = request::body(&self, &request);
        let meter = request.extensions().get::<UsageMeter>().cloned();
        drop(request);
        let whole = |body: &[u8]| {
            let response: WholeResponse = serde_json::from_slice(body)
                .map_err(|e| OpenAiError::malformed_response(e.to_string(), body))?;
            response.into_message()
        };
        self.endpoint
            .call(body, meter, EventDecoder::new(), whole)
            .await
    }
}

impl Service<ModelRequest> for ResponsesModel {
    type Response = ModelResponse;
    type Error = OpenAiError;
    type Future = ResponseFuture;

    /// Always ready: the HTTP client queues requests in its own pool.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: ModelRequest) -> Self::Future {
        crate::telemetry::record_model("openai", &self.shared.endpoint.model);
        ResponseFuture::new(Arc::clone(&self.shared).complete(request))
    }
}

impl fmt::Debug for ResponsesModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponsesModel")
            .field("endpoint", &self.shared.endpoint.url.as_str())
            .field("model", &self.shared.endpoint.model)
            .field("stream", &self.shared.stream)
            .field("store", &self.shared.store)
            .field("effort", &self.shared.effort)
            .field("summary", &self.shared.summary)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
