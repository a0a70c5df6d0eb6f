//! Configuring an [`OpenAiModel`]: [`OpenAiModelBuilder`], its defaults (base URL,
//! timeouts, streaming), and the `OPENAI_*` environment variables it reads.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{OpenAiModel, Shared};
use crate::providers::connection::{ConfigError, Connection, Provider};
use crate::providers::http::Endpoint;

/// The base URL used when none is given: OpenAI's API.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The default wait for a connection to the server.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The default longest silence of the server while a reply is awaited or streamed.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(120);

/// Builds an [`OpenAiModel`]; from [`OpenAiModel::builder`] or
/// [`OpenAiModelBuilder::from_env`].
///
/// | setting | default | from the environment |
/// |---|---|---|
/// | [`base_url`](Self::base_url) | `https://api.openai.com/v1` | `OPENAI_BASE_URL` |
/// | [`api_key`](Self::api_key) | none (no `Authorization` header) | `OPENAI_API_KEY` |
/// | [`model`](Self::model) | none: required | `OPENAI_MODEL` |
/// | [`stream`](Self::stream) | `true` | |
/// | [`stream_usage`](Self::stream_usage) | `true` | |
/// | [`max_completion_tokens`](Self::max_completion_tokens) | `false` | |
/// | [`connect_timeout`](Self::connect_timeout) | 10 s | |
/// | [`read_timeout`](Self::read_timeout) | 120 s | |
///
/// # Example
///
/// ```
/// use tower_adk::providers::openai::OpenAiModel;
/// use std::time::Duration;
///
/// let model = OpenAiModel::builder()
///     .base_url("http://127.0.0.1:8080/v1")
///     .model("smollm2")
///     .read_timeout(Some(Duration::from_secs(30)))
///     .extra_body("top_k", 40)
///     .build()?;
/// assert_eq!(model.model_name(), "smollm2");
/// assert_eq!(model.endpoint(), "http://127.0.0.1:8080/v1/chat/completions");
/// # Ok::<_, tower_adk::providers::openai::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct OpenAiModelBuilder {
    connection: Connection,
    stream_usage: bool,
    max_completion_tokens: bool,
}

impl Default for OpenAiModelBuilder {
    fn default() -> Self {
        OpenAiModelBuilder {
            connection: Connection::new(&OPENAI),
            stream_usage: true,
            max_completion_tokens: false,
        }
    }
}

/// OpenAI's connection: its base URL, `OPENAI_*` variables and `Authorization: Bearer`
/// key, shared by [`OpenAiModelBuilder`] and the Responses API's builder.
pub(super) static OPENAI: Provider = Provider {
    base_url: DEFAULT_BASE_URL,
    connect_timeout: DEFAULT_CONNECT_TIMEOUT,
    read_timeout: DEFAULT_READ_TIMEOUT,
    base_url_var: "OPENAI_BASE_URL",
    api_key_vars: &["OPENAI_API_KEY"],
    model_var: "OPENAI_MODEL",
    key_header: "authorization",
    key_prefix: "Bearer ",
};

/// The endpoint at `{base_url}/{path}` of an OpenAI connection.
pub(super) fn endpoint(connection: &Connection, path: &str) -> Result<Endpoint, ConfigError> {
    let model = connection.required_model()?;
    connection.endpoint(model, &format!("{}/{path}", connection.base()), &[])
}

impl OpenAiModelBuilder {
    /// A builder with the defaults, then the settings found in the environment:
    /// `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` (empty values count as
    /// unset). The builder's methods can still change any of them.
    pub fn from_env() -> Self {
        OpenAiModelBuilder::default().with_vars(|name| std::env::var(name).ok())
    }

    /// Applies the settings that `var` finds (`var` reads the environment, or a map in
    /// tests).
    fn with_vars(mut self, var: impl Fn(&str) -> Option<String>) -> Self {
        self.connection = self.connection.with_vars(var);
        self
    }

    /// The server's base URL, up to and including the API version, e.g.
    /// `http://127.0.0.1:8000/v1`; requests go to `{base_url}/chat/completions`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.connection.base_url = url.into();
        self
    }

    /// The API key, sent as `Authorization: Bearer {key}`. Local servers often need none.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.connection.api_key = Some(key.into());
        self
    }

    /// The model name sent with every request (required; local servers that serve one
    /// model often ignore it).
    pub fn model(mut self, name: impl Into<String>) -> Self {
        self.connection.model = Some(name.into());
        self
    }

    /// Whether to ask for streamed replies (server-sent events): text then reaches the
    /// caller as it is produced. Some servers stream tool calls poorly (llama.cpp's Python
    /// server does only with a named `tool_choice`); turn streaming off for them.
    pub fn stream(mut self, stream: bool) -> Self {
        self.connection.stream = stream;
        self
    }

    /// Whether a streamed request asks for the usage chunk at the end
    /// (`"stream_options": {"include_usage": true}`). Turn it off for servers that reject
    /// `stream_options`.
    pub fn stream_usage(mut self, include: bool) -> Self {
        self.stream_usage = include;
        self
    }

    /// Sends [`ModelOptions::max_tokens`](crate::ModelOptions::max_tokens) as
    /// `max_completion_tokens` (which OpenAI's reasoning models require) instead of
    /// `max_tokens` (which most compatible servers read).
    pub fn max_completion_tokens(mut self, yes: bool) -> Self {
        self.max_completion_tokens = yes;
        self
    }

    /// Adds a header to every request (e.g. `OpenAI-Organization`, or a test server's
    /// scenario header).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.connection.headers.push((name.into(), value.into()));
        self
    }

    /// Adds a field to the body of every request, for options that only some servers
    /// have (vLLM's `top_k`, llama.cpp's `min_p`, `response_format`, ...). A field that
    /// the request sets from its [`ModelOptions`](crate::ModelOptions) or its content wins
    /// over an extra field of the same name.
    pub fn extra_body(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.connection.extra_body.insert(name.into(), value.into());
        self
    }

    /// The longest wait for a connection; `None` waits as long as the system does.
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connection.connect_timeout = timeout;
        self
    }

    /// The longest silence of the server, reset by every piece of the reply that arrives:
    /// the wait for the response head, for a whole non-streamed reply, or between two
    /// pieces of a stream. A stalled server then fails the call with
    /// [`OpenAiError::Timeout`](super::OpenAiError::Timeout) instead of hanging it. `None`
    /// waits forever. It does not bound a stream that keeps sending (keep-alive comments
    /// included): for a deadline on a whole run use the agent's
    /// [`run_timeout`](crate::AgentBuilder::run_timeout); a tower timeout layer around the
    /// model stops counting once the stream is returned.
    pub fn read_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connection.read_timeout = timeout;
        self
    }

    /// Builds the model and its HTTP client.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when no model name is set, the base URL is not an `http(s)` URL,
    /// a header (or the API key) is not a valid header value, or the client cannot be
    /// built.
    pub fn build(self) -> Result<OpenAiModel, ConfigError> {
        let endpoint = endpoint(&self.connection, "chat/completions")?;
        Ok(OpenAiModel {
            shared: Arc::new(Shared {
                endpoint,
                stream: self.connection.stream,
                stream_usage: self.stream_usage,
                max_completion_tokens: self.max_completion_tokens,
                extra_body: self.connection.extra_body,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::HashMap;

    use super::{ConfigError, OpenAiModelBuilder};

    fn from_vars(vars: &[(&str, &str)]) -> OpenAiModelBuilder {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        OpenAiModelBuilder::default().with_vars(|name| vars.get(name).cloned())
    }

    #[test]
    fn the_environment_gives_the_base_url_the_key_and_the_model() {
        let builder = from_vars(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_MODEL", "gpt-test"),
        ]);
        let debug = format!("{builder:?}");
        assert!(!debug.contains("sk-test"), "the key is redacted: {debug}");
        let model = builder.build().unwrap();
        assert_eq!(model.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(model.model_name(), "gpt-test");
        assert!(!format!("{model:?}").contains("sk-test"));
    }

    #[test]
    fn empty_variables_count_as_unset() {
        let model = from_vars(&[("OPENAI_BASE_URL", ""), ("OPENAI_MODEL", "m")])
            .build()
            .unwrap();
        assert_eq!(
            model.endpoint(),
            "https://api.openai.com/v1/chat/completions"
        );
    }

    #[test]
    fn a_missing_model_is_an_error() {
        let error = from_vars(&[("OPENAI_MODEL", " ")]).build().unwrap_err();
        assert!(matches!(error, ConfigError::MissingModel), "{error}");
    }

    #[test]
    fn a_base_url_that_is_not_http_is_an_error() {
        for url in ["127.0.0.1:8080/v1", "ftp://host/v1", "not a url"] {
            let error = OpenAiModelBuilder::default()
                .model("m")
                .base_url(url)
                .build()
                .unwrap_err();
            assert!(
                matches!(error, ConfigError::InvalidBaseUrl { .. }),
                "{url}: {error}"
            );
        }
    }

    #[test]
    fn a_key_that_is_not_a_header_value_is_an_error() {
        let error = OpenAiModelBuilder::default()
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
