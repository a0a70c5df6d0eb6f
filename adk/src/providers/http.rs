//! What the HTTP providers share about failed calls: the server's message and code from
//! an error body, the wait a `retry-after` header asks for, and excerpts of bodies kept
//! in errors.

use std::time::Duration;

use http::HeaderMap;
use serde_json::Value;

/// The longest piece of a body or chunk kept in an error.
const EXCERPT: usize = 1000;

/// The server's message and code from an error body: OpenAI's
/// `{"error": {"message", "code", "type"}}`, `{"error": "..."}`, `{"message": ...}`,
/// FastAPI's `{"detail": ...}`, or the body as text. `None` for an empty body.
pub(crate) fn server_message(body: &str) -> (Option<String>, Option<String>) {
    let body = body.trim();
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return ((!body.is_empty()).then(|| excerpt(body)), None);
    };
    let error = value.get("error").unwrap_or(&value);
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    };
    let message = match error {
        Value::String(s) => Some(s.clone()),
        Value::Object(map) => ["message", "detail", "msg"]
            .iter()
            .find_map(|key| map.get(*key).and_then(text)),
        _ => None,
    };
    let code = ["code", "type"]
        .iter()
        .find_map(|key| error.get(*key).and_then(text));
    (
        Some(excerpt(&message.unwrap_or_else(|| error.to_string()))),
        code,
    )
}

/// The wait a server asked for: `retry-after-ms` (OpenAI's, in milliseconds) or
/// `retry-after` in seconds. The HTTP-date form of `retry-after` is not read.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let value = headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()?;
        (value.is_finite() && value >= 0.0).then_some(value)
    };
    let seconds = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// The start of a text, cut on a character boundary.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{excerpt, server_message};

    #[test]
    fn the_message_and_code_come_from_the_error_object() {
        let body =
            r#"{"error": {"message": "Invalid key", "type": "auth", "code": "invalid_api_key"}}"#;
        assert_eq!(
            server_message(body),
            (Some("Invalid key".into()), Some("invalid_api_key".into()))
        );
        assert_eq!(
            server_message(r#"{"error": "model not loaded"}"#),
            (Some("model not loaded".into()), None)
        );
        assert_eq!(
            server_message(r#"{"detail": "Not Found"}"#),
            (Some("Not Found".into()), None)
        );
        assert_eq!(
            server_message("upstream connect error"),
            (Some("upstream connect error".into()), None)
        );
        assert_eq!(server_message("  "), (None, None));
    }

    #[test]
    fn a_long_body_is_cut_on_a_character_boundary() {
        let long = "é".repeat(3000);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), 1001);
        assert!(cut.ends_with('…'));
    }
}
