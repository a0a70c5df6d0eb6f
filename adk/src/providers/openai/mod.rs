//! A model for OpenAI-compatible chat completion servers (feature `openai`): OpenAI itself,
//! vLLM, Ollama, llama.cpp's servers, LM Studio, and the many proxies that speak the same
//! `POST {base_url}/chat/completions`.
//!
//! [`OpenAiModel`] is a tower service at the model seam: give it to
//! [`Agent::builder`](crate::Agent::builder), or wrap it first in any tower middleware
//! (timeout, retry, rate limit, concurrency limit). It is cheap to clone (one shared HTTP
//! client and connection pool) and always ready.
//!
//! # Example
//!
//! Configuration from a builder (this runs: building sends nothing):
//!
//! ```
//! use tower_adk::providers::openai::OpenAiModel;
//!
//! let model = OpenAiModel::builder()
//!     .base_url("http://127.0.0.1:8000/v1")
//!     .api_key("sk-local")
//!     .model("gpt-4o-mini")
//!     .build()?;
//! assert!(model.is_streaming());
//! # Ok::<_, tower_adk::providers::openai::ConfigError>(())
//! ```
//!
//! An agent on the server named by `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL`,
//! counting the tokens it uses:
//!
//! ```no_run
//! use tower_adk::model::UsageMeter;
//! use tower_adk::providers::openai::OpenAiModel;
//! use tower_adk::testing::text_tool;
//! use tower_adk::{Agent, AgentRequest};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let model = OpenAiModel::from_env()?;
//! let agent = Agent::builder(model).tool(text_tool("time", "12:00")).build()?;
//!
//! let usage = UsageMeter::new();
//! let request = AgentRequest::user("What time is it?").with_extension(usage.clone());
//! let result = agent.run(request).await?;
//! println!("{} ({} tokens)", result.final_message.content(), usage.total().total_tokens);
//! # Ok(())
//! # }
//! ```
//!
//! # Configuration
//!
//! [`OpenAiModel::builder`] starts from the defaults, [`OpenAiModel::from_env`] and
//! [`OpenAiModelBuilder::from_env`] from the environment: `OPENAI_BASE_URL` (default
//! `https://api.openai.com/v1`), `OPENAI_API_KEY` (none: no `Authorization` header) and
//! `OPENAI_MODEL` (required). See [`OpenAiModelBuilder`] for every setting.
//!
//! # What is sent
//!
//! - The history: system, user, assistant and tool messages. An assistant turn that only
//!   called tools is sent with `"content": ""`, not `null` (llama.cpp rejects `null`);
//!   each tool result carries its `tool_call_id`.
//! - The run's tools in the function-calling format, `strict` when the tool is
//!   ([`ToolInfo::to_openai_function`](crate::ToolInfo::to_openai_function)).
//! - The call's [`ModelOptions`](crate::ModelOptions): `tool_choice` (`auto` is left to
//!   the server's default; `none`, `required`, or a named tool), `parallel_tool_calls`,
//!   `temperature`, `top_p`, `max_tokens` (or `max_completion_tokens`), `stop`, `seed`;
//!   tool options only when the request offers tools. Extra fields come from
//!   [`OpenAiModelBuilder::extra_body`].
//!
//! # What is read
//!
//! A streamed reply (the default) becomes [`ModelDelta`](crate::ModelDelta)s as it
//! arrives: text deltas at once, tool-call fragments assembled by their index (servers
//! that send a call's id and name once and those that repeat them in every fragment give
//! the same calls; a name is never doubled). A server that answers a streamed request
//! with a whole JSON reply is read as a whole reply. Only the first choice is read; a
//! refusal is read as text; reasoning fields are ignored.
//!
//! The stream is read by the two pieces of [`sse`]: [`SseParser`](sse::SseParser) cuts
//! the body into events without copying them, [`ChunkDecoder`] turns
//! each chunk into deltas. They are public, for providers that bring their own transport.
//!
//! Tool-call arguments are kept as the raw text the model produced, valid JSON or not:
//! the agent's loop parses them when the call runs and answers malformed ones with an
//! invalid-arguments tool result that the model reads and can correct.
//!
//! # Usage
//!
//! Token usage goes to a [`UsageMeter`] found in the request's
//! extensions (insert one in the `AgentRequest` to count a whole run), added once the
//! reply is complete: from the `usage` of a whole reply, or from the stream's last usage
//! when `[DONE]` arrives (streamed requests ask for it with
//! `"stream_options": {"include_usage": true}`, see
//! [`OpenAiModelBuilder::stream_usage`]). A call that fails records nothing.
//!
//! # Errors and retries
//!
//! Every failure is an [`OpenAiError`]: an error status with the server's message, a
//! rate limit with the wait the server asked for, a connection that fails or drops, a
//! read timeout, a stream that ends without `[DONE]`, a malformed chunk or reply, an error
//! event in the stream. Nothing panics, and a stalled server is cut off by the read
//! timeout ([`OpenAiModelBuilder::read_timeout`]). [`OpenAiError::is_retryable`] tells
//! a retry policy which errors are worth another try.
//!
//! The service's future resolves when the response head arrives, so errors up to then
//! (statuses, rate limits, refused connections) fail the future, where a tower `Retry`
//! layer sees and retries them. Errors after that (a stream that drops or is cut short)
//! arrive in the reply's stream, after some text may already have reached the caller: a
//! retry layer around the model does not see them. Turn streaming off
//! ([`OpenAiModelBuilder::stream`]) to have every error in the future. The example
//! `openai_retry` shows a timeout and a retry policy around the model.
//!
//! # Compatibility notes
//!
//! - llama.cpp's Python server (`llama_cpp.server`, `--chat_format
//!   chatml-function-calling`) streams tool calls only with a named `tool_choice`; use
//!   `stream(false)` with `auto` or `required`.
//! - Servers that reject `stream_options`: `stream_usage(false)`.
//! - OpenAI's reasoning models want `max_completion_tokens`:
//!   [`OpenAiModelBuilder::max_completion_tokens`].

mod config;
mod error;
#[cfg(feature = "openai-responses")]
pub mod responses;
pub mod sse;
mod wire;

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::{Map, Value};
use tower::Service;

pub use self::config::{
    DEFAULT_BASE_URL, DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT, OpenAiModelBuilder,
};
pub use self::error::OpenAiError;
use self::sse::ChunkDecoder;
use self::wire::ChatCompletion;
use crate::model::ModelRequest;
use crate::model::ModelResponse;
use crate::model::UsageMeter;
/// Why a model could not be built: the error every HTTP provider's builder shares.
pub use crate::providers::connection::ConfigError;
use crate::providers::http::{Endpoint, ProviderError};

/// A model served by an OpenAI-compatible chat completion server.
///
/// A tower `Service<ModelRequest>`, always ready; clones share one HTTP client (and its
/// connection pool). See the [module docs](self) for what it sends and reads.
#[derive(Clone)]
pub struct OpenAiModel {
    shared: Arc<Shared>,
}

/// What every clone of a model shares.
struct Shared {
    endpoint: Endpoint,
    stream: bool,
    stream_usage: bool,
    max_completion_tokens: bool,
    extra_body: Map<String, Value>,
}

impl OpenAiModel {
    /// A builder with the defaults (OpenAI's base URL, no key, no model name).
    pub fn builder() -> OpenAiModelBuilder {
        OpenAiModelBuilder::default()
    }

    /// A model configured from `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL`
    /// (see [`OpenAiModelBuilder::from_env`]).
    ///
    /// # Errors
    ///
    /// [`ConfigError`], e.g. when `OPENAI_MODEL` is not set.
    pub fn from_env() -> Result<Self, ConfigError> {
        OpenAiModelBuilder::from_env().build()
    }

    /// The model name sent with every request.
    pub fn model_name(&self) -> &str {
        &self.shared.endpoint.model
    }

    /// The URL requests go to: `{base_url}/chat/completions`.
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
        let body = wire::request_body(&self, &request);
        let meter = request.extensions().get::<UsageMeter>().cloned();
        drop(request);
        // Writing out a JSON value cannot fail.
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let whole = |body: &[u8]| {
            let completion: ChatCompletion = serde_json::from_slice(body)
                .map_err(|e| OpenAiError::malformed_response(e.to_string(), body))?;
            completion.into_message(body)
        };
        self.endpoint
            .call(body, meter, ChunkDecoder::new(), whole)
            .await
    }
}

impl Service<ModelRequest> for OpenAiModel {
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

/// The future of an [`OpenAiModel`] call: resolves when the response head has arrived (a
/// streamed reply) or the whole reply has (otherwise).
pub type ResponseFuture = crate::providers::ResponseFuture<OpenAiError>;

impl fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiModel")
            .field("endpoint", &self.shared.endpoint.url.as_str())
            .field("model", &self.shared.endpoint.model)
            .field("stream", &self.shared.stream)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::{OpenAiModel, ResponseFuture};

    #[test]
    fn the_model_and_its_future_are_send_and_sync() {
        fn send_sync<T: Send + Sync + 'static>() {}
        fn send<T: Send + 'static>() {}
        send_sync::<OpenAiModel>();
        send::<ResponseFuture>();
        send_sync::<super::OpenAiError>();
    }
}
