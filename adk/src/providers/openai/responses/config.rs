//! Configuring a [`ResponsesModel`]: [`ResponsesModelBuilder`], the reasoning settings
//! ([`ReasoningEffort`], [`ReasoningSummary`]) and whether anything is stored on the
//! server.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{ResponsesModel, Shared};
use crate::providers::connection::{ConfigError, Connection};
use crate::providers::openai::config::{OPENAI, endpoint};

/// How much a reasoning model thinks before it answers (`reasoning.effort`). Which values
/// a model takes is the model's to say: `minimal` and `none` only some do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReasoningEffort {
    /// `none`: no reasoning (the models that can skip it).
    None,
    /// `minimal`.
    Minimal,
    /// `low`.
    Low,
    /// `medium` (the API's default).
    Medium,
    /// `high`.
    High,
    /// `xhigh`.
    XHigh,
}

impl ReasoningEffort {
    /// The name the API knows it by.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::None => "none",
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
            ReasoningEffort::XHigh => "xhigh",
        }
    }
}

/// Whether, and how fully, the model summarises its reasoning (`reasoning.summary`): the
/// summary is the readable text of the reasoning parts, streamed as
/// [`ModelDelta::Reasoning`](crate::ModelDelta::Reasoning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReasoningSummary {
    /// `auto`: the most detailed summary the model offers.
    Auto,
    /// `concise`.
    Concise,
    /// `detailed`.
    Detailed,
}

impl ReasoningSummary {
    /// The name the API knows it by.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningSummary::Auto => "auto",
            ReasoningSummary::Concise => "concise",
            ReasoningSummary::Detailed => "detailed",
        }
    }
}

/// Builds a [`ResponsesModel`]; from [`ResponsesModel::builder`] or
/// [`ResponsesModelBuilder::from_env`].
///
/// | setting | default | from the environment |
/// |---|---|---|
/// | [`base_url`](Self::base_url) | `https://api.openai.com/v1` | `OPENAI_BASE_URL` |
/// | [`api_key`](Self::api_key) | none (no `Authorization` header) | `OPENAI_API_KEY` |
/// | [`model`](Self::model) | none: required | `OPENAI_MODEL` |
/// | [`stream`](Self::stream) | `true` | |
/// | [`store`](Self::store) | `false`: nothing kept on the server | |
/// | [`encrypted_reasoning`](Self::encrypted_reasoning) | `true` (when not stored) | |
/// | [`reasoning_effort`](Self::reasoning_effort) | the model's | |
/// | [`reasoning_summary`](Self::reasoning_summary) | none asked for | |
/// | [`connect_timeout`](Self::connect_timeout) | 10 s | |
/// | [`read_timeout`](Self::read_timeout) | 120 s | |
///
/// # Example
///
/// ```
/// use tower_adk::providers::openai::responses::{ReasoningEffort, ReasoningSummary, ResponsesModel};
///
/// let model = ResponsesModel::builder()
///     .base_url("http://127.0.0.1:4000/v1")
///     .model("o4-mini")
///     .reasoning_effort(ReasoningEffort::High)
///     .reasoning_summary(ReasoningSummary::Auto)
///     .build()?;
/// assert_eq!(model.endpoint(), "http://127.0.0.1:4000/v1/responses");
/// # Ok::<_, tower_adk::providers::openai::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ResponsesModelBuilder {
    connection: Connection,
    store: bool,
    encrypted_reasoning: bool,
    effort: Option<ReasoningEffort>,
    summary: Option<ReasoningSummary>,
}

impl Default for ResponsesModelBuilder {
    fn default() -> Self {
        ResponsesModelBuilder {
            connection: Connection::new(&OPENAI),
            store: false,
            encrypted_reasoning: true,
            effort: None,
            summary: None,
        }
    }
}

impl ResponsesModelBuilder {
    /// A builder with the defaults, then the settings found in the environment:
    /// `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` (empty values count as
    /// unset), as [`OpenAiModelBuilder::from_env`](crate::providers::openai::OpenAiModelBuilder::from_env)
    /// reads them. The builder's methods can still change any of them.
    pub fn from_env() -> Self {
        ResponsesModelBuilder::default().with_vars(|name| std::env::var(name).ok())
    }

    fn with_vars(mut self, var: impl Fn(&str) -> Option<String>) -> Self {
        self.connection = self.connection.with_vars(var);
        self
    }

    /// The server's base URL, up to and including the API version, e.g.
    /// `http://127.0.0.1:4000/v1`; requests go to `{base_url}/responses`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.connection.base_url = url.into();
        self
    }

    /// The API key, sent as `Authorization: Bearer {key}`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.connection.api_key = Some(key.into());
        self
    }

    /// The model name sent with every request (required).
    pub fn model(mut self, name: impl Into<String>) -> Self {
        self.connection.model = Some(name.into());
        self
    }

    /// Whether to ask for streamed replies (the semantic events): text, tool-call
    /// arguments and reasoning summaries then reach the caller as they are produced.
    pub fn stream(mut self, stream: bool) -> Self {
        self.connection.stream = stream;
        self
    }

    /// Whether the server keeps the responses (`store`). Off by default: every request
    /// carries the whole history, and a reasoning model's reasoning goes back as the
    /// encrypted content the server returned (see
    /// [`encrypted_reasoning`](Self::encrypted_reasoning)). On, the server keeps them
    /// and the reasoning items go back by their ids.
    pub fn store(mut self, store: bool) -> Self {
        self.store = store;
        self
    }

    /// Whether requests that store nothing ask for the reasoning's encrypted content
    /// (`"include": ["reasoning.encrypted_content"]`), which a reasoning model needs back
    /// to go on after a tool call. On by default; turn it off for models that refuse it
    /// (OpenAI answers 400 for models that do not reason) and for servers that do not
    /// know the field.
    pub fn encrypted_reasoning(mut self, include: bool) -> Self {
        self.encrypted_reasoning = include;
        self
    }

    /// How much the model reasons (`reasoning.effort`); by default the model's own.
    pub fn reasoning_effort(mut self, effort: ReasoningEffort) -> Self {
        self.effort = Some(effort);
        self
    }

    /// Asks for summaries of the reasoning (`reasoning.summary`); by default none.
    pub fn reasoning_summary(mut self, summary: ReasoningSummary) -> Self {
        self.summary = Some(summary);
        self
    }

    /// Adds a header to every request (e.g. `OpenAI-Organization`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.connection.headers.push((name.into(), value.into()));
        self
    }

    /// Adds a field to the body of every request (`service_tier`, `truncation`,
    /// `metadata`, ...). A field the request sets from its
    /// [`ModelOptions`](crate::ModelOptions), its content or the settings above wins over
    /// an extra field of the same name.
    pub fn extra_body(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.connection.extra_body.insert(name.into(), value.into());
        self
    }

    /// The longest wait for a connection; `None` waits as long as the system does.
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connection.connect_timeout = timeout;
        self
    }

    /// The longest silence of the server, reset by every piece of the reply that
    /// arrives; `None` waits forever. See
    /// [`OpenAiModelBuilder::read_timeout`](crate::providers::openai::OpenAiModelBuilder::read_timeout).
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
    pub fn build(self) -> Result<ResponsesModel, ConfigError> {
        let endpoint = endpoint(&self.connection, "responses")?;
        Ok(ResponsesModel {
            shared: Arc::new(Shared {
                endpoint,
                stream: self.connection.stream,
                store: self.store,
                encrypted_reasoning: self.encrypted_reasoning && !self.store,
                effort: self.effort,
                summary: self.summary,
                extra_body: self.connection.extra_body,
            }),
        })
    }
}

impl fmt::Display for ReasoningEffort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ReasoningSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::HashMap;

    use super::ResponsesModelBuilder;

    #[test]
    fn the_environment_gives_the_base_url_the_key_and_the_model() {
        let vars: HashMap<&str, &str> = [
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_MODEL", "o4-mini"),
        ]
        .into();
        let builder = ResponsesModelBuilder::default()
            .with_vars(|name| vars.get(name).map(|v| (*v).to_owned()));
        assert!(!format!("{builder:?}").contains("sk-test"), "redacted");
        let model = builder.build().unwrap();
        assert_eq!(model.endpoint(), "http://127.0.0.1:9/v1/responses");
        assert_eq!(model.model_name(), "o4-mini");
        assert!(!format!("{model:?}").contains("sk-test"));
    }
}
