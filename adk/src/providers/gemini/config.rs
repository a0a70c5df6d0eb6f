//! Configuring a [`GeminiModel`]: [`GeminiModelBuilder`], its defaults (base URL, API
//! version, timeouts, streaming), [`Thinking`], and the `GEMINI_*` environment variables
//! it reads.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::request::ToolMedia;
use super::{GeminiModel, Shared};
use crate::providers::connection::{ConfigError, Connection, Provider};

/// The base URL used when none is given: Google's Generative Language API.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";

/// The API version used when none is given.
pub const DEFAULT_API_VERSION: &str = "v1beta";

/// The default wait for a connection to the API.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The default longest silence of the API while a reply is awaited or streamed.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(120);

/// How much the model thinks, and whether it shows it: the request's
/// `generationConfig.thinkingConfig`.
///
/// Gemini 3 models take a [`level`](Thinking::level) (`minimal`, `low`, `medium`,
/// `high`), Gemini 2.5 models a [`budget`](Thinking::budget) of tokens (`0` turns
/// thinking off where the model allows it, `-1` lets the model decide). With
/// [`include_thoughts`](Thinking::include_thoughts) the reply carries thought summaries,
/// which stream as reasoning of provider `gemini`. The default sends no thinking config:
/// the model's own default.
///
/// ```
/// use tower_adk::providers::gemini::{GeminiModel, Thinking};
///
/// let model = GeminiModel::builder()
///     .model("gemini-3-flash-preview")
///     .thinking(Thinking::level("low").include_thoughts(true))
///     .build()?;
/// # Ok::<_, tower_adk::providers::gemini::ConfigError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Thinking {
    budget: Option<i32>,
    level: Option<String>,
    include_thoughts: bool,
}

impl Thinking {
    /// A thinking budget in tokens (`thinkingBudget`, Gemini 2.5).
    pub fn budget(tokens: i32) -> Self {
        Thinking {
            budget: Some(tokens),
            ..Thinking::default()
        }
    }

    /// A thinking level (`thinkingLevel`, Gemini 3): `minimal`, `low`, `medium`, `high`.
    pub fn level(level: impl Into<String>) -> Self {
        Thinking {
            level: Some(level.into().to_ascii_uppercase()),
            ..Thinking::default()
        }
    }

    /// Whether the reply includes thought summaries (`includeThoughts`).
    #[must_use]
    pub fn include_thoughts(mut self, include: bool) -> Self {
        self.include_thoughts = include;
        self
    }

    /// The `thinkingConfig` object, or `None` when nothing is set.
    pub(super) fn to_json(&self) -> Option<Value> {
        let mut config = Map::new();
        if let Some(budget) = self.budget {
            config.insert("thinkingBudget".into(), json!(budget));
        }
        if let Some(level) = &self.level {
            config.insert("thinkingLevel".into(), json!(level));
        }
        if self.include_thoughts {
            config.insert("includeThoughts".into(), json!(true));
        }
        (!config.is_empty()).then_some(Value::Object(config))
    }
}

/// Builds a [`GeminiModel`]; from [`GeminiModel::builder`] or
/// [`GeminiModelBuilder::from_env`].
///
/// | setting | default | from the environment |
/// |---|---|---|
/// | [`base_url`](Self::base_url) | `https://generativelanguage.googleapis.com` | `GEMINI_BASE_URL` |
/// | [`api_key`](Self::api_key) | none (no `x-goog-api-key` header) | `GEMINI_API_KEY`, else `GOOGLE_API_KEY` |
/// | [`model`](Self::model) | none: required | `GEMINI_MODEL` |
/// | [`api_version`](Self::api_version) | `v1beta` | |
/// | [`stream`](Self::stream) | `true` | |
/// | [`thinking`](Self::thinking) | the model's default | |
/// | [`tool_media`](Self::tool_media) | inside the function response | |
/// | [`connect_timeout`](Self::connect_timeout) | 10 s | |
/// | [`read_timeout`](Self::read_timeout) | 120 s | |
///
/// # Example
///
/// ```
/// use tower_adk::providers::gemini::GeminiModel;
///
/// let model = GeminiModel::builder()
///     .base_url("http://127.0.0.1:8080")
///     .api_key("test-key")
///     .model("gemini-2.5-flash")
///     .generation_config("topK", 40)
///     .build()?;
/// assert_eq!(
///     model.endpoint(),
///     "http://127.0.0.1:8080/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
/// );
/// # Ok::<_, tower_adk::providers::gemini::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct GeminiModelBuilder {
    connection: Connection,
    api_version: String,
    thinking: Thinking,
    tool_media: ToolMedia,
    generation_config: Map<String, Value>,
}

/// Gemini's connection: its base URL, `GEMINI_*` variables (`GOOGLE_API_KEY` as the
/// key's fallback) and `x-goog-api-key` (the key never goes in the URL).
static GEMINI: Provider = Provider {
    base_url: DEFAULT_BASE_URL,
    connect_timeout: DEFAULT_CONNECT_TIMEOUT,
    read_timeout: DEFAULT_READ_TIMEOUT,
    base_url_var: "GEMINI_BASE_URL",
    api_key_vars: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    model_var: "GEMINI_MODEL",
    key_header: "x-goog-api-key",
    key_prefix: "",
};

impl Default for GeminiModelBuilder {
    fn default() -> Self {
        GeminiModelBuilder {
            connection: Connection::new(&GEMINI),
            api_version: DEFAULT_API_VERSION.to_owned(),
            thinking: Thinking::default(),
            tool_media: ToolMedia::default(),
            generation_config: Map::new(),
        }
    }
}

impl GeminiModelBuilder {
    /// A builder with the defaults, then the settings found in the environment:
    /// `GEMINI_BASE_URL`, `GEMINI_API_KEY` (or `GOOGLE_API_KEY`) and `GEMINI_MODEL`
    /// (empty values count as unset). The builder's methods can still change any of them.
    pub fn from_env() -> Self {
        GeminiModelBuilder::default().with_vars(|name| std::env::var(name).ok())
    }

    /// Applies the settings that `var` finds (`var` reads the environment, or a map in
    /// tests).
    fn with_vars(mut self, var: impl Fn(&str) -> Option<String>) -> Self {
        self.connection = self.connection.with_vars(var);
        self
    }

    /// The API's base URL, without the version: requests go to
    /// `{base_url}/{api_version}/models/{model}:streamGenerateContent?alt=sse` (or
    /// `:generateContent`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.connection.base_url = url.into();
        self
    }

    /// The API version in the path (`v1beta`, which has every feature used here).
    pub fn api_version(mut self, version: impl Into<String>) -> Self {
        self.api_version = version.into();
        self
    }

    /// The API key, sent as the `x-goog-api-key` header (never in the URL).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.connection.api_key = Some(key.into());
        self
    }

    /// The model (`gemini-2.5-flash`, `gemini-3-pro-preview`, ...; a `models/` prefix is
    /// taken off).
    pub fn model(mut self, name: impl Into<String>) -> Self {
        self.connection.model = Some(name.into());
        self
    }

    /// Whether to ask for streamed replies (`streamGenerateContent?alt=sse`) or whole
    /// ones (`generateContent`).
    pub fn stream(mut self, stream: bool) -> Self {
        self.connection.stream = stream;
        self
    }

    /// How much the model thinks, and whether the reply shows thought summaries.
    pub fn thinking(mut self, thinking: Thinking) -> Self {
        self.thinking = thinking;
        self
    }

    /// Where a tool result's images and files go (inside the `functionResponse` by
    /// default; beside it for models before Gemini 3).
    pub fn tool_media(mut self, media: ToolMedia) -> Self {
        self.tool_media = media;
        self
    }

    /// Adds a header to every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.connection.headers.push((name.into(), value.into()));
        self
    }

    /// Adds a field to every request's `generationConfig` (`topK`, `responseModalities`,
    /// `mediaResolution`, ...). A field the request sets from its
    /// [`ModelOptions`](crate::ModelOptions) wins.
    pub fn generation_config(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.generation_config.insert(name.into(), value.into());
        self
    }

    /// Adds a field to the body of every request (`safetySettings`, `cachedContent`,
    /// ...). A field the request sets wins.
    pub fn extra_body(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.connection.extra_body.insert(name.into(), value.into());
        self
    }

    /// The longest wait for a connection; `None` waits as long as the system does.
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connection.connect_timeout = timeout;
        self
    }

    /// The longest silence of the API, reset by every piece of the reply that arrives.
    /// A stalled API then fails the call with
    /// [`GeminiError::Timeout`](super::GeminiError::Timeout). `None` waits forever.
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
    pub fn build(self) -> Result<GeminiModel, ConfigError> {
        let model = self.connection.required_model()?;
        let model = model.trim().trim_start_matches("models/").to_owned();
        if model.is_empty() {
            return Err(ConfigError::MissingModel);
        }
        let method = if self.connection.stream {
            ":streamGenerateContent?alt=sse"
        } else {
            ":generateContent"
        };
        let url = format!(
            "{}/{}/models/{model}{method}",
            self.connection.base(),
            self.api_version.trim().trim_matches('/'),
        );
        let endpoint = self.connection.endpoint(model, &url, &[])?;
        Ok(GeminiModel {
            shared: Arc::new(Shared {
                endpoint,
                stream: self.connection.stream,
                thinking: self.thinking,
                tool_media: self.tool_media,
                generation_config: self.generation_config,
                extra_body: self.connection.extra_body,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::HashMap;

    use super::{ConfigError, GeminiModelBuilder};

    fn from_vars(vars: &[(&str, &str)]) -> GeminiModelBuilder {
        let vars: HashMap<String, String> = (vars.iter())
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        GeminiModelBuilder::default().with_vars(|name| vars.get(name).cloned())
    }

    #[test]
    fn the_environment_gives_the_base_url_the_key_and_the_model() {
        let builder = from_vars(&[
            ("GEMINI_BASE_URL", "http://127.0.0.1:9/"),
            ("GOOGLE_API_KEY", "google-key"),
            ("GEMINI_API_KEY", "gemini-key"),
            ("GEMINI_MODEL", "models/gemini-2.5-flash"),
        ]);
        let debug = format!("{builder:?}");
        assert!(
            !debug.contains("gemini-key"),
            "the key is redacted: {debug}"
        );
        let model = builder.build().unwrap();
        assert_eq!(
            model.endpoint(),
            "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(model.model_name(), "gemini-2.5-flash");
    }

    #[test]
    fn google_api_key_is_read_when_gemini_api_key_is_not_set() {
        let builder = from_vars(&[("GOOGLE_API_KEY", "google-key"), ("GEMINI_API_KEY", " ")]);
        assert_eq!(builder.connection.api_key.as_deref(), Some("google-key"));
    }

    #[test]
    fn a_missing_model_is_an_error() {
        let error = from_vars(&[("GEMINI_MODEL", "")]).build().unwrap_err();
        assert!(matches!(error, ConfigError::MissingModel), "{error}");
    }

    #[test]
    fn whole_replies_go_to_generate_content() {
        let model = GeminiModelBuilder::default()
            .model("gemini-2.5-pro")
            .stream(false)
            .build()
            .unwrap();
        assert_eq!(
            model.endpoint(),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent"
        );
    }

    #[test]
    fn a_base_url_that_is_not_http_is_an_error() {
        for url in ["ftp://host", "not a url"] {
            let error = GeminiModelBuilder::default()
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
}
