//! What every HTTP provider's builder sets alike: where the server is ([`Connection`]:
//! base URL, key, extra headers, timeouts), the model's name, streaming and the extra
//! fields of every body; the environment variables that set them ([`Provider`]); and
//! [`ConfigError`], why a model could not be built.

use std::fmt;
use std::time::Duration;

use ::http::header::HeaderMap;
use serde_json::{Map, Value};

use crate::providers::http::{self, Endpoint};

/// Why an HTTP provider's model could not be built.
///
/// Each provider names it too (`openai::ConfigError`, `anthropic::ConfigError`,
/// `gemini::ConfigError`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// No model name was given, neither to the builder nor in the provider's environment
    /// variable (`OPENAI_MODEL`, `ANTHROPIC_MODEL`, `GEMINI_MODEL`).
    #[error(
        "no model name: set one with `.model(...)` or in the provider's variable \
         (OPENAI_MODEL, ANTHROPIC_MODEL, GEMINI_MODEL)"
    )]
    MissingModel,
    /// The base URL is not an `http` or `https` URL.
    #[error("the base URL `{url}` is invalid: {reason}")]
    InvalidBaseUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A header's name or value (the API key's included) is not valid in HTTP.
    #[error("the header `{name}` is invalid: {reason}")]
    InvalidHeader {
        /// The header's name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Anthropic's models: the thinking budget is not below the most tokens a reply may
    /// have, as Anthropic requires.
    #[error("the thinking budget ({budget} tokens) must be below max_tokens ({max_tokens})")]
    ThinkingBudget {
        /// The budget.
        budget: u32,
        /// The most tokens of a reply.
        max_tokens: u32,
    },
    /// The HTTP client could not be built (e.g. no TLS backend).
    #[error("the HTTP client could not be built: {0}")]
    Client(#[source] reqwest::Error),
}

/// What sets one provider's connection apart: its defaults, the environment variables
/// it reads, and the header that carries its API key.
#[derive(Debug)]
pub(crate) struct Provider {
    /// The base URL used when none is given.
    pub(crate) base_url: &'static str,
    /// The default wait for a connection.
    pub(crate) connect_timeout: Duration,
    /// The default longest silence of the server.
    pub(crate) read_timeout: Duration,
    /// The variable of the base URL.
    pub(crate) base_url_var: &'static str,
    /// The variables of the API key, the first one set winning.
    pub(crate) api_key_vars: &'static [&'static str],
    /// The variable of the model's name.
    pub(crate) model_var: &'static str,
    /// The header that carries the key.
    pub(crate) key_header: &'static str,
    /// What comes before the key in its header (`Bearer `), if anything.
    pub(crate) key_prefix: &'static str,
}

/// A provider's connection settings, as its builder holds them until it builds the
/// model's [`Endpoint`].
#[derive(Clone)]
pub(crate) struct Connection {
    pub(crate) provider: &'static Provider,
    pub(crate) base_url: String,
    pub(crate) api_key: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) stream: bool,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) extra_body: Map<String, Value>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) read_timeout: Option<Duration>,
}

impl Connection {
    /// The provider's defaults: its base URL and timeouts, no key, no model name,
    /// streaming on.
    pub(crate) fn new(provider: &'static Provider) -> Self {
        Connection {
            provider,
            base_url: provider.base_url.to_owned(),
            api_key: None,
            model: None,
            stream: true,
            headers: Vec::new(),
            extra_body: Map::new(),
            connect_timeout: Some(provider.connect_timeout),
            read_timeout: Some(provider.read_timeout),
        }
    }

    /// Applies the settings that `var` finds (`var` reads the environment, or a map in
    /// tests) in the provider's variables, empty values counting as unset.
    pub(crate) fn with_vars(mut self, var: impl Fn(&str) -> Option<String>) -> Self {
        let var = |name: &str| var(name).filter(|value| !value.trim().is_empty());
        let provider = self.provider;
        if let Some(url) = var(provider.base_url_var) {
            self.base_url = url;
        }
        if let Some(key) = provider.api_key_vars.iter().find_map(|name| var(name)) {
            self.api_key = Some(key);
        }
        if let Some(model) = var(provider.model_var) {
            self.model = Some(model);
        }
        self
    }

    /// The model's name.
    ///
    /// # Errors
    ///
    /// [`ConfigError::MissingModel`] when none is set.
    pub(crate) fn required_model(&self) -> Result<String, ConfigError> {
        self.model.clone().ok_or(ConfigError::MissingModel)
    }

    /// The base URL without surrounding blanks or a trailing `/`.
    pub(crate) fn base(&self) -> &str {
        self.base_url.trim().trim_end_matches('/')
    }

    /// The endpoint of `model` at `url` (made from the base URL): the URL checked, and a
    /// client that sends the builder's headers, the key and `own` (the provider's fixed
    /// headers, which win over a builder's header of the same name) with every request.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when the URL is not an `http(s)` URL, a header (or the API key) is
    /// not a valid header value, or the client cannot be built.
    pub(crate) fn endpoint(
        &self,
        model: String,
        url: &str,
        own: &[(&str, &str)],
    ) -> Result<Endpoint, ConfigError> {
        let url = http::endpoint(url).map_err(|reason| ConfigError::InvalidBaseUrl {
            url: self.base_url.clone(),
            reason,
        })?;
        let client = http::client(
            self.header_map(own)?,
            self.connect_timeout,
            self.read_timeout,
        )
        .map_err(ConfigError::Client)?;
        Ok(Endpoint { client, url, model })
    }

    /// The headers of every request: the builder's, then the provider's own and the key.
    fn header_map(&self, own: &[(&str, &str)]) -> Result<HeaderMap, ConfigError> {
        let invalid = |(name, reason)| ConfigError::InvalidHeader { name, reason };
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let (name, value) = http::header(name, value, false).map_err(invalid)?;
            headers.append(name, value);
        }
        for (name, value) in own {
            let (name, value) = http::header(name, value, false).map_err(invalid)?;
            headers.insert(name, value);
        }
        if let Some(key) = &self.api_key {
            let provider = self.provider;
            let value = format!("{}{key}", provider.key_prefix);
            let (name, value) = http::header(provider.key_header, &value, true).map_err(invalid)?;
            headers.insert(name, value);
        }
        Ok(headers)
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<_> = self.headers.iter().map(|(name, _)| name).collect();
        f.debug_struct("Connection")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("stream", &self.stream)
            .field("headers", &headers)
            .field("extra_body", &self.extra_body)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::{Connection, Provider};

    static TEST: Provider = Provider {
        base_url: "http://127.0.0.1:9",
        connect_timeout: Duration::from_secs(1),
        read_timeout: Duration::from_secs(2),
        base_url_var: "TEST_BASE_URL",
        api_key_vars: &["TEST_API_KEY", "OTHER_API_KEY"],
        model_var: "TEST_MODEL",
        key_header: "authorization",
        key_prefix: "Bearer ",
    };

    #[test]
    fn the_key_and_the_providers_own_headers_replace_a_builder_header_of_the_same_name() {
        let mut connection = Connection::new(&TEST);
        connection.api_key = Some("sk-test".into());
        connection.headers = vec![
            ("Authorization".into(), "Basic other".into()),
            ("x-version".into(), "old".into()),
            ("x-extra".into(), "1".into()),
        ];
        let headers = connection.header_map(&[("x-version", "new")]).unwrap();
        let all = |name: &str| -> Vec<_> { headers.get_all(name).iter().collect() };
        assert_eq!(all("authorization"), ["Bearer sk-test"]);
        assert!(headers["authorization"].is_sensitive());
        assert_eq!(all("x-version"), ["new"]);
        assert_eq!(all("x-extra"), ["1"]);
    }

    #[test]
    fn the_first_key_variable_set_wins_and_empty_ones_count_as_unset() {
        let vars = [
            ("TEST_API_KEY", " "),
            ("OTHER_API_KEY", "other"),
            ("TEST_MODEL", "m"),
        ];
        let connection = Connection::new(&TEST).with_vars(|name| {
            (vars.iter().find(|(n, _)| *n == name)).map(|(_, v)| (*v).to_owned())
        });
        assert_eq!(connection.api_key.as_deref(), Some("other"));
        assert_eq!(connection.required_model().unwrap(), "m");
        assert_eq!(connection.base_url, "http://127.0.0.1:9");
        assert_eq!(connection.read_timeout, Some(Duration::from_secs(2)));
    }
}
