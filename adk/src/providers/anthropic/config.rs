//! Configuring an [`AnthropicModel`]: [`AnthropicModelBuilder`], its defaults (base URL,
//! the most tokens of a reply, timeouts, streaming), and the `ANTHROPIC_*` environment
//! variables it reads.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::cache::CacheBreakpoints;
use super::{AnthropicModel, Shared};
use crate::providers::connection::{ConfigError, Connection, Provider};

/// The base URL used when none is given: Anthropic's API.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// The beta that lets Claude 4 models think between tool calls within a reply
/// ([`AnthropicModelBuilder::interleaved_thinking`]).
pub const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

/// The most tokens of a reply when neither the builder nor the call sets it (the API
/// requires a value).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The default wait for a connection to the server.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The default longest silence of the server while a reply is awaited or streamed.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);

/// Builds an [`AnthropicModel`]; from [`AnthropicModel::builder`] or
/// [`AnthropicModelBuilder::from_env`].
///
/// | setting | default | from the environment |
/// |---|---|---|
/// | [`base_url`](Self::base_url) | `https://api.anthropic.com` | `ANTHROPIC_BASE_URL` |
/// | [`api_key`](Self::api_key) | none (no `x-api-key` header) | `ANTHROPIC_API_KEY` |
/// | [`model`](Self::model) | none: required | `ANTHROPIC_MODEL` |
/// | [`max_tokens`](Self::max_tokens) | 4096 | |
/// | [`thinking_budget`](Self::thinking_budget) | none: no extended thinking | |
/// | [`interleaved_thinking`](Self::interleaved_thinking) | off | |
/// | [`cache`](Self::cache) | no breakpoints | |
/// | [`stream`](Self::stream) | `true` | |
/// | [`connect_timeout`](Self::connect_timeout) | 10 s | |
/// | [`read_timeout`](Self::read_timeout) | 300 s | |
///
/// # Example
///
/// ```
/// use tower_adk::providers::anthropic::AnthropicModel;
///
/// let model = AnthropicModel::builder()
///     .api_key("sk-ant-...")
///     .model("claude-sonnet-4-5")
///     .max_tokens(16_000)
///     .thinking_budget(Some(8_000))
///     .interleaved_thinking(true)
///     .build()?;
/// assert_eq!(model.endpoint(), "https://api.anthropic.com/v1/messages");
/// # Ok::<_, tower_adk::providers::anthropic::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct AnthropicModelBuilder {
    connection: Connection,
    max_tokens: u32,
    thinking_budget: Option<u32>,
    betas: Vec<String>,
    cache: Option<CacheBreakpoints>,
}

/// Anthropic's connection: its base URL, `ANTHROPIC_*` variables and `x-api-key`.
static ANTHROPIC: Provider = Provider {
    base_url: DEFAULT_BASE_URL,
    connect_timeout: DEFAULT_CONNECT_TIMEOUT,
    read_timeout: DEFAULT_READ_TIMEOUT,
    base_url_var: "ANTHROPIC_BASE_URL",
    api_key_vars: &["ANTHROPIC_API_KEY"],
    model_var: "ANTHROPIC_MODEL",
    key_header: "x-api-key",
    key_prefix: "",
};

impl Default for AnthropicModelBuilder {
    fn default() -> Self {
        AnthropicModelBuilder {
            connection: Connection::new(&ANTHROPIC),
            max_tokens: DEFAULT_MAX_TOKENS,
            thinking_budget: None,
            betas: Vec::new(),
            cache: None,
        }
    }
}

impl AnthropicModelBuilder {
    /// A builder with the defaults, then the settings found in the environment:
    /// `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` and `ANTHROPIC_MODEL` (empty values count
    /// as unset). The builder's methods can still change any of them.
    pub fn from_env() -> Self {
        AnthropicModelBuilder::default().with_vars(|name| std::env::var(name).ok())
    }

    /// Applies the settings that `var` finds (`var` reads the environment, or a map in
    /// tests).
    fn with_vars(mut self, var: impl Fn(&str) -> Option<String>) -> Self {
        self.connection = self.connection.with_vars(var);
        self
    }

    /// The server's base URL, as Anthropic's SDKs take it: requests go to
    /// `{base_url}/v1/messages` (or `{base_url}/messages` when it already ends in `/v1`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.connection.base_url = url.into();
        self
    }

    /// The API key, sent as `x-api-key`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.connection.api_key = Some(key.into());
        self
    }

    /// The model name sent with every request (required), e.g. `claude-sonnet-4-5`.
    pub fn model(mut self, name: impl Into<String>) -> Self {
        self.connection.model = Some(name.into());
        self
    }

    /// The most tokens of a reply, thinking included, when the call does not set
    /// [`ModelOptions::max_tokens`](crate::ModelOptions::max_tokens).
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Extended thinking with this budget of tokens (`"thinking": {"type": "enabled",
    /// "budget_tokens": n}`; at least 1,024, and below [`max_tokens`](Self::max_tokens)).
    /// `None`: no thinking. With thinking on, Anthropic refuses a `temperature` and a
    /// forced tool choice.
    pub fn thinking_budget(mut self, tokens: Option<u32>) -> Self {
        self.thinking_budget = tokens;
        self
    }

    /// Lets Claude 4 models think between tool calls within a reply (the
    /// `interleaved-thinking-2025-05-14` beta).
    pub fn interleaved_thinking(mut self, on: bool) -> Self {
        self.betas.retain(|beta| beta != INTERLEAVED_THINKING_BETA);
        if on {
            self.betas.push(INTERLEAVED_THINKING_BETA.to_owned());
        }
        self
    }

    /// Adds a beta to the `anthropic-beta` header of every request.
    pub fn beta(mut self, name: impl Into<String>) -> Self {
        self.betas.push(name.into());
        self
    }

    /// The prompt cache breakpoints of calls whose request carries none (see
    /// [`CacheBreakpoints`] and [`PromptCache`](super::PromptCache)).
    pub fn cache(mut self, breakpoints: CacheBreakpoints) -> Self {
        self.cache = Some(breakpoints);
        self
    }

    /// Whether to ask for streamed replies (server-sent events): text and thinking then
    /// reach the caller as they are produced.
    pub fn stream(mut self, stream: bool) -> Self {
        self.connection.stream = stream;
        self
    }

    /// Adds a header to every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.connection.headers.push((name.into(), value.into()));
        self
    }

    /// Adds a field to the body of every request (`top_k`, `metadata`, `service_tier`,
    /// server tools in `tools` are not merged: a field that the request sets wins over an
    /// extra field of the same name).
    pub fn extra_body(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.connection.extra_body.insert(name.into(), value.into());
        self
    }

    /// The longest wait for a connection; `None` waits as long as the system does.
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connection.connect_timeout = timeout;
        self
    }

    /// The longest silence of the server, reset by every piece of the reply that arrives
    /// (Anthropic sends `ping` events during long thinking); `None` waits forever.
    pub fn read_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connection.read_timeout = timeout;
        self
    }

    /// Builds the model and its HTTP client.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when no model name is set, the base URL is not an `http(s)` URL,
    /// a header (or the API key) is not a valid header value, the thinking budget is not
    /// below `max_tokens`, or the client cannot be built.
    pub fn build(self) -> Result<AnthropicModel, ConfigError> {
        let model = self.connection.required_model()?;
        if let Some(budget) = self.thinking_budget.filter(|b| *b >= self.max_tokens) {
            return Err(ConfigError::ThinkingBudget {
                budget,
                max_tokens: self.max_tokens,
            });
        }
        let base = self.connection.base();
        // `{base_url}/v1/messages`, or `{base_url}/messages` for a base that ends in `/v1`.
        let url = match base.ends_with("/v1") {
            true => format!("{base}/messages"),
            false => format!("{base}/v1/messages"),
        };
        let betas = self.betas.join(",");
        let mut own = vec![("anthropic-version", API_VERSION)];
        if !betas.is_empty() {
            own.push(("anthropic-beta", &betas));
        }
        let endpoint = self.connection.endpoint(model, &url, &own)?;
        Ok(AnthropicModel {
            shared: Arc::new(Shared {
                endpoint,
                max_tokens: self.max_tokens,
                thinking_budget: self.thinking_budget,
                cache: self.cache,
                stream: self.connection.stream,
                extra_body: self.connection.extra_body,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::HashMap;

    use super::{AnthropicModelBuilder, ConfigError};

    fn from_vars(vars: &[(&str, &str)]) -> AnthropicModelBuilder {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        AnthropicModelBuilder::default().with_vars(|name| vars.get(name).cloned())
    }

    #[test]
    fn the_environment_gives_the_base_url_the_key_and_the_model() {
        let builder = from_vars(&[
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"),
            ("ANTHROPIC_API_KEY", "sk-ant-test"),
            ("ANTHROPIC_MODEL", "claude-test"),
        ]);
        assert!(!format!("{builder:?}").contains("sk-ant-test"));
        let model = builder.build().unwrap();
        assert_eq!(model.endpoint(), "http://127.0.0.1:9/v1/messages");
        assert_eq!(model.model_name(), "claude-test");
        assert!(!format!("{model:?}").contains("sk-ant-test"));
    }

    #[test]
    fn a_base_url_with_its_version_is_not_given_another() {
        let model = from_vars(&[
            ("ANTHROPIC_BASE_URL", "http://h/v1"),
            ("ANTHROPIC_MODEL", "m"),
        ])
        .build()
        .unwrap();
        assert_eq!(model.endpoint(), "http://h/v1/messages");
    }

    #[test]
    fn a_missing_model_and_a_budget_past_max_tokens_are_errors() {
        let error = from_vars(&[("ANTHROPIC_MODEL", " ")]).build().unwrap_err();
        assert!(matches!(error, ConfigError::MissingModel), "{error}");
        let error = AnthropicModelBuilder::default()
            .model("m")
            .max_tokens(2048)
            .thinking_budget(Some(2048))
            .build()
            .unwrap_err();
        assert!(
            matches!(error, ConfigError::ThinkingBudget { .. }),
            "{error}"
        );
    }

    #[test]
    fn a_key_that_is_not_a_header_value_is_an_error() {
        let error = AnthropicModelBuilder::default()
            .model("m")
            .api_key("line\nbreak")
            .build()
            .unwrap_err();
        assert!(
            matches!(error, ConfigError::InvalidHeader { .. }),
            "{error}"
        );
    }
}
