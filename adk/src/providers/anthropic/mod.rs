//! A model for Anthropic's Messages API (feature `anthropic`): Claude, natively, with
//! what a gateway in the chat completion format drops: its `thinking` blocks and their
//! signatures, prompt caching, images and PDFs, and typed overloaded and rate-limit
//! errors.
//!
//! [`AnthropicModel`] is a tower service at the model seam, like
//! [`OpenAiModel`](crate::providers::openai::OpenAiModel): give it to
//! [`Agent::builder`](crate::Agent::builder), or wrap it first in any tower middleware.
//! It is cheap to clone (one shared HTTP client) and always ready.
//!
//! # Example
//!
//! Configuration from a builder (this runs: building sends nothing):
//!
//! ```
//! use tower_adk::providers::anthropic::AnthropicModel;
//!
//! let model = AnthropicModel::builder()
//!     .base_url("http://127.0.0.1:4000")
//!     .api_key("sk-ant-local")
//!     .model("claude-sonnet-4-5")
//!     .thinking_budget(Some(2048))
//!     .build()?;
//! assert_eq!(model.endpoint(), "http://127.0.0.1:4000/v1/messages");
//! # Ok::<_, tower_adk::providers::anthropic::ConfigError>(())
//! ```
//!
//! An agent on Claude (`ANTHROPIC_API_KEY`, `ANTHROPIC_MODEL`, and `ANTHROPIC_BASE_URL`
//! for a proxy), thinking between its tool calls and caching its prompt, counting the
//! tokens it uses:
//!
//! ```no_run
//! use tower_adk::model::UsageMeter;
//! use tower_adk::providers::anthropic::{AnthropicModelBuilder, CacheBreakpoints, PromptCache};
//! use tower_adk::testing::text_tool;
//! use tower_adk::{Agent, AgentRequest};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let model = AnthropicModelBuilder::from_env()
//!     .max_tokens(16_000)
//!     .thinking_budget(Some(4_000))
//!     .interleaved_thinking(true)
//!     .build()?;
//! let agent = Agent::builder(model).tool(text_tool("time", "12:00")).build()?;
//!
//! let usage = UsageMeter::new();
//! let request = AgentRequest::user("What time is it?")
//!     .with_handler(PromptCache::new(CacheBreakpoints::all()))
//!     .with_extension(usage.clone());
//! let result = agent.run(request).await?;
//! let total = usage.total();
//! println!("{} ({} tokens, {} from the cache)", result.final_message.content(),
//!     total.total_tokens, total.cache_read_tokens);
//! # Ok(())
//! # }
//! ```
//!
//! # What is sent
//!
//! - System messages as `system` text blocks; user, assistant and tool messages as
//!   `user` and `assistant` turns, consecutive messages of one role merged into one turn
//!   (the API wants them to alternate); tool results as `tool_result` blocks of a user
//!   turn, with `is_error` for failures.
//! - Images as `image` blocks and PDFs as `document` blocks (base64 data, a `data:` URL,
//!   or a URL), in user turns and in tool results (an MCP tool's image reaches Claude as
//!   an image). A file of another type, or an image or file in the model's own turn,
//!   fails the call with [`AnthropicError::UnsupportedPart`] naming it.
//! - The model's reasoning as it came: each [`Reasoning`](crate::content::Reasoning) part
//!   of provider [`PROVIDER`] as its `thinking` block (text and signature) or
//!   `redacted_thinking` block, byte for byte, in its place among the turn's text and
//!   tool calls; Claude refuses a tool loop whose thinking does not come back so. The
//!   reasoning of other providers is not sent, nor thinking without its signature.
//! - A call's tool arguments as the `tool_use` input (arguments that are not a JSON
//!   object, already answered as invalid, go as `{}`).
//! - The tools (`input_schema`), `tool_choice` (`auto` is the default; `none`, `any`,
//!   a named tool; `disable_parallel_tool_use` when parallel calls are off),
//!   `max_tokens` (the call's, else the builder's), `temperature`, `top_p`,
//!   `stop_sequences`, a response format as `output_config.format`, `thinking` with its
//!   budget, and `cache_control` breakpoints from [`CacheBreakpoints`]. Extra fields come
//!   from [`AnthropicModelBuilder::extra_body`].
//!
//! # What is read
//!
//! A streamed reply (the default) becomes [`ModelDelta`](crate::ModelDelta)s as it
//! arrives (see [`EventDecoder`]): text, reasoning text as it is
//! thought (the loop streams it as its own event), each thinking block closed by its
//! signature, redacted blocks whole, tool calls with their arguments as they stream
//! (`input_json_delta`), all in the order of the reply's blocks. A whole reply (with
//! [`AnthropicModelBuilder::stream`] off) is read into the same message.
//!
//! # Usage
//!
//! The reply's usage, with the cache reads (`cache_read_input_tokens`) and writes
//! (`cache_creation_input_tokens`), which Anthropic counts apart from `input_tokens`,
//! added into the prompt tokens: reported as the reply's last
//! [`ModelDelta::Usage`](crate::ModelDelta::Usage) under the configured model name, and
//! added to a [`UsageMeter`] found in the request's extensions. A call that fails records
//! nothing.
//!
//! # Errors and retries
//!
//! Every failure is an [`AnthropicError`]: Anthropic overloaded (529, or an
//! `overloaded_error` event in the stream) and rate limits (429, with the `retry-after`
//! wait) are variants of their own, retryable; other statuses keep Anthropic's error type;
//! connections that fail or drop, read timeouts, streams that end without `message_stop`
//! and malformed events are errors too. [`AnthropicError::is_retryable`] tells a retry
//! policy which errors are worth another try. As with the OpenAI model, errors up to the
//! response head fail the future (where a tower `Retry` layer sees them), later ones
//! arrive in the stream.

mod cache;
mod config;
mod error;
pub mod sse;
mod wire;

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::{Map, Value};
use tower::Service;

pub use self::cache::{CacheBreakpoints, PromptCache};
pub use self::config::{
    API_VERSION, AnthropicModelBuilder, DEFAULT_BASE_URL, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_TOKENS, DEFAULT_READ_TIMEOUT, INTERLEAVED_THINKING_BETA,
};
pub use self::error::AnthropicError;
use self::sse::EventDecoder;
use self::wire::Reply;
use crate::model::ModelRequest;
use crate::model::ModelResponse;
use crate::model::UsageMeter;
/// Why a model could not be built: the error every HTTP provider's builder shares.
pub use crate::providers::connection::ConfigError;
use crate::providers::http::{Endpoint, ProviderError};

/// The provider name of Anthropic's [`Reasoning`](crate::content::Reasoning) parts: only
/// they go back to an Anthropic model.
pub const PROVIDER: &str = "anthropic";

/// A model served by Anthropic's Messages API.
///
/// A tower `Service<ModelRequest>`, always ready; clones share one HTTP client (and its
/// connection pool). See the [module docs](self) for what it sends and reads.
#[derive(Clone)]
pub struct AnthropicModel {
    shared: Arc<Shared>,
}

/// What every clone of a model shares.
struct Shared {
    endpoint: Endpoint,
    max_tokens: u32,
    thinking_budget: Option<u32>,
    cache: Option<CacheBreakpoints>,
    stream: bool,
    extra_body: Map<String, Value>,
}

impl AnthropicModel {
    /// A builder with the defaults (Anthropic's base URL, no key, no model name).
    pub fn builder() -> AnthropicModelBuilder {
        AnthropicModelBuilder::default()
    }

    /// A model configured from `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` and
    /// `ANTHROPIC_MODEL` (see [`AnthropicModelBuilder::from_env`]).
    ///
    /// # Errors
    ///
    /// [`ConfigError`], e.g. when `ANTHROPIC_MODEL` is not set.
    pub fn from_env() -> Result<Self, ConfigError> {
        AnthropicModelBuilder::from_env().build()
    }

    /// The model name sent with every request.
    pub fn model_name(&self) -> &str {
        &self.shared.endpoint.model
    }

    /// The URL requests go to: `{base_url}/v1/messages`.
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
    ) -> Result<ModelResponse, AnthropicError> {
        let body = wire::request_body(&self, &request)?;
        let meter = request.extensions().get::<UsageMeter>().cloned();
        drop(request);
        // Writing out a JSON value cannot fail.
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let whole = |body: &[u8]| {
            let reply: Reply = serde_json::from_slice(body)
                .map_err(|e| AnthropicError::malformed_response(e.to_string(), body))?;
            Ok(reply.into_message())
        };
        self.endpoint
            .call(body, meter, EventDecoder::new(), whole)
            .await
    }
}

impl Service<ModelRequest> for AnthropicModel {
    type Response = ModelResponse;
    type Error = AnthropicError;
    type Future = ResponseFuture;

    /// Always ready: the HTTP client queues requests in its own pool.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: ModelRequest) -> Self::Future {
        crate::telemetry::record_model("anthropic", &self.shared.endpoint.model);
        ResponseFuture::new(Arc::clone(&self.shared).complete(request))
    }
}

/// The future of an [`AnthropicModel`] call: resolves when the response head has arrived (a
/// streamed reply) or the whole reply has (otherwise).
pub type ResponseFuture = crate::providers::ResponseFuture<AnthropicError>;

impl fmt::Debug for AnthropicModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicModel")
            .field("endpoint", &self.shared.endpoint.url.as_str())
            .field("model", &self.shared.endpoint.model)
            .field("stream", &self.shared.stream)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
