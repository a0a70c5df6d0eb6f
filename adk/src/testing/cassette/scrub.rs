//! [`Scrubber`]: what is taken out of a cassette before it is written.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use regex::Regex;
use serde_json::Value;

use super::error::CassetteError;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The environment variables whose values are secrets by default.
pub const KEY_VARIABLES: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHER_API_KEY",
    "XAI_API_KEY",
    "HF_TOKEN",
];

/// The patterns of secrets taken out by default: OpenAI and Anthropic keys (`sk-...`),
/// bearer tokens, Google API keys (`AIza...`).
const KEY_PATTERNS: &[&str] = &[
    r"sk-[A-Za-z0-9_\-]{8,}",
    r"Bearer\s+[A-Za-z0-9._~+/=\-]{8,}",
    r"AIza[0-9A-Za-z_\-]{20,}",
];

/// Values shorter than this are not taken as secrets (they would blank common words).
const SHORTEST_SECRET: usize = 8;

/// What is taken out of a cassette before anything is written: each secret string, and
/// each match of a secret pattern, becomes [`REDACTED`], wherever it is (the history, the
/// tools, the answer's pieces, a recorded error). A reasoning part's opaque `data` is
/// kept byte for byte against the patterns (it is base64 that could match one by chance)
/// but not against the secret strings.
///
/// [`Scrubber::default`] holds the values of the usual key variables ([`KEY_VARIABLES`],
/// those set and at least 8 characters long) and the patterns of OpenAI, Anthropic and
/// Google keys and of bearer tokens; add the program's own with
/// [`secret`](Self::secret), [`variable`](Self::variable) and [`pattern`](Self::pattern).
///
/// A replaying model scrubs each request the same way before it compares it with the
/// recorded one, so a secret in a request matches the `[REDACTED]` in the file (when it
/// is a secret in both environments).
///
/// # Example
///
/// ```
/// use tower_adk::testing::cassette::Scrubber;
///
/// let scrubber = Scrubber::default().secret("hunter2-hunter2").pattern(r"acct-\d+")?;
/// assert_eq!(scrubber.scrub("pw hunter2-hunter2, acct-42"), "pw [REDACTED], [REDACTED]");
/// assert_eq!(scrubber.scrub("key sk-proj-abcdefghij12"), "key [REDACTED]");
/// # Ok::<_, tower_adk::testing::cassette::CassetteError>(())
/// ```
#[derive(Clone)]
pub struct Scrubber {
    secrets: Vec<Arc<str>>,
    patterns: Vec<Regex>,
}

impl Scrubber {
    /// A scrubber that takes nothing out.
    pub fn none() -> Self {
        Scrubber {
            secrets: Vec::new(),
            patterns: Vec::new(),
        }
    }

    /// Also takes out this string (if it is at least 8 characters long).
    pub fn secret(mut self, secret: impl AsRef<str>) -> Self {
        let secret = secret.as_ref();
        if secret.len() >= SHORTEST_SECRET && !self.secrets.iter().any(|s| &**s == secret) {
            self.secrets.push(secret.into());
            // Longest first, so a secret that contains another goes whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
        self
    }

    /// Also takes out the value of this environment variable, if it is set.
    pub fn variable(self, name: &str) -> Self {
        match std::env::var(name) {
            Ok(value) => self.secret(value),
            Err(_) => self,
        }
    }

    /// Also takes out every match of this regex.
    ///
    /// # Errors
    ///
    /// [`CassetteError::Pattern`] if it is not a valid regex.
    pub fn pattern(mut self, pattern: &str) -> Result<Self, CassetteError> {
        let regex = Regex::new(pattern).map_err(|e| CassetteError::Pattern {
            pattern: pattern.to_owned(),
            reason: e.to_string(),
        })?;
        self.patterns.push(regex);
        Ok(self)
    }

    /// The text with every secret and every match of a pattern replaced.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = self.scrub_secrets(text);
        self.scrub_patterns(text)
    }

    fn scrub_secrets<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut text = Cow::Borrowed(text);
        for secret in &self.secrets {
            if text.contains(&**secret) {
                text = Cow::Owned(text.replace(&**secret, REDACTED));
            }
        }
        text
    }

    fn scrub_patterns<'a>(&self, mut text: Cow<'a, str>) -> Cow<'a, str> {
        for pattern in &self.patterns {
            if let Some(replaced) = owned(pattern.replace_all(&text, REDACTED)) {
                text = Cow::Owned(replaced);
            }
        }
        text
    }

    /// Scrubs every string of a JSON value in place.
    pub(crate) fn scrub_value(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                if let Some(scrubbed) = owned(self.scrub(text)) {
                    *text = scrubbed;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.scrub_value(item)),
            Value::Object(fields) => {
                let reasoning = fields.get("type").and_then(Value::as_str) == Some("reasoning");
                for (key, field) in fields.iter_mut() {
                    match field {
                        Value::String(data) if reasoning && key == "data" => {
                            if let Some(scrubbed) = owned(self.scrub_secrets(data)) {
                                *data = scrubbed;
                            }
                        }
                        field => self.scrub_value(field),
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

/// The new text, if anything was replaced.
fn owned(text: Cow<'_, str>) -> Option<String> {
    match text {
        Cow::Owned(text) => Some(text),
        Cow::Borrowed(_) => None,
    }
}

impl Default for Scrubber {
    /// The usual key variables' values and the patterns of keys and bearer tokens.
    fn default() -> Self {
        let scrubber = KEY_VARIABLES
            .iter()
            .fold(Scrubber::none(), |s, name| s.variable(name));
        let patterns = KEY_PATTERNS.iter().filter_map(|p| Regex::new(p).ok());
        Scrubber {
            patterns: patterns.collect(),
            ..scrubber
        }
    }
}

impl fmt::Debug for Scrubber {
    /// Shows how many secrets it holds, never the secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scrubber")
            .field("secrets", &self.secrets.len())
            .field(
                "patterns",
                &self.patterns.iter().map(Regex::as_str).collect::<Vec<_>>(),
            )
            .finish()
    }
}
