//! Prompt caching: where the `cache_control` breakpoints go ([`CacheBreakpoints`], a
//! value in the request's extensions or the model's default), and [`PromptCache`], the
//! handler that sets them on every model call of a run.

use serde_json::{Value, json};

use crate::handler::{Handler, ModelNext};
use crate::model::{ModelRequest, ModelResponse};

/// Where Anthropic's prompt cache breakpoints (`cache_control`) go in a request: on the
/// system prompt, on the tool definitions, on the last message; with the default
/// five-minute lifetime or an hour.
///
/// Anthropic caches the prefix of a request up to each breakpoint (tools, then system,
/// then messages), and reads it back in later requests that start the same way: in a
/// tool loop, marking the last message makes each call read what the previous one wrote.
/// The reads and writes come back in the usage
/// ([`Usage::cache_read_tokens`](crate::model::Usage::cache_read_tokens) and
/// [`cache_write_tokens`](crate::model::Usage::cache_write_tokens)).
///
/// The model reads them from the request's extensions (put them there for a whole run
/// in the [`AgentRequest`](crate::AgentRequest), or per call with [`PromptCache`]), else
/// from [`AnthropicModelBuilder::cache`](super::AnthropicModelBuilder::cache).
///
/// # Example
///
/// ```
/// use tower_adk::AgentRequest;
/// use tower_adk::providers::anthropic::CacheBreakpoints;
///
/// let request = AgentRequest::user("Summarise the contract.")
///     .with_extension(CacheBreakpoints::new().system().tools().last_message());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheBreakpoints {
    system: bool,
    tools: bool,
    last_message: bool,
    one_hour: bool,
}

impl CacheBreakpoints {
    /// No breakpoint.
    pub fn new() -> Self {
        CacheBreakpoints::default()
    }

    /// Breakpoints on the system prompt, the tools and the last message.
    pub fn all() -> Self {
        CacheBreakpoints::new().system().tools().last_message()
    }

    /// A breakpoint on the last system block.
    pub fn system(mut self) -> Self {
        self.system = true;
        self
    }

    /// A breakpoint on the last tool definition.
    pub fn tools(mut self) -> Self {
        self.tools = true;
        self
    }

    /// A breakpoint on the last block of the last message (the last that may carry one:
    /// thinking blocks may not).
    pub fn last_message(mut self) -> Self {
        self.last_message = true;
        self
    }

    /// Cache entries that live an hour (`"ttl": "1h"`, billed higher) instead of five
    /// minutes.
    pub fn one_hour(mut self) -> Self {
        self.one_hour = true;
        self
    }

    pub(super) fn marks_system(&self) -> bool {
        self.system
    }

    pub(super) fn marks_tools(&self) -> bool {
        self.tools
    }

    pub(super) fn marks_last_message(&self) -> bool {
        self.last_message
    }

    /// The `cache_control` value of a breakpoint, if `on`.
    pub(super) fn control(&self, on: bool) -> Option<Value> {
        on.then(|| match self.one_hour {
            true => json!({"type": "ephemeral", "ttl": "1h"}),
            false => json!({"type": "ephemeral"}),
        })
    }
}

/// A handler that sets [`CacheBreakpoints`] on every model call of a run: with it in an
/// agent's handlers, an Anthropic model caches as the breakpoints say (other providers
/// ignore them).
///
/// It sets the breakpoints in [`wrap_model`](Handler::wrap_model), for that call only, so
/// a handler after it (nearer the model) can change them for a call.
///
/// # Example
///
/// ```
/// use tower_adk::AgentRequest;
/// use tower_adk::providers::anthropic::{CacheBreakpoints, PromptCache};
///
/// let request = AgentRequest::user("Summarise the contract.")
///     .with_handler(PromptCache::new(CacheBreakpoints::all()));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PromptCache {
    breakpoints: CacheBreakpoints,
}

impl PromptCache {
    /// Sets these breakpoints on every model call.
    pub fn new(breakpoints: CacheBreakpoints) -> Self {
        PromptCache { breakpoints }
    }
}

impl Handler for PromptCache {
    async fn wrap_model(
        &self,
        mut request: ModelRequest,
        next: ModelNext,
    ) -> Result<ModelResponse, tower::BoxError> {
        request.extensions_mut().insert(self.breakpoints);
        next.run(request).await
    }
}
