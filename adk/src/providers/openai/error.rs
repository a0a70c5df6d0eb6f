//! Errors of the OpenAI-compatible model: [`OpenAiError`] when a call fails, made from
//! the server's status, error body and `retry-after` headers and telling whether a retry
//! may cure it; [`ConfigError`] when a model cannot be built.

use std::error::Error as StdError;
use std::time::Duration;

use http::{HeaderMap, StatusCode};
use serde_json::Value;

use crate::providers::http::{excerpt, retry_after};
use crate::providers::sse::SseError;

/// Why a call to an OpenAI-compatible server failed.
///
/// Errors come from the service's future (the server refused the request, or could not
/// be reached) or from the reply's stream (the stream broke after it started). Either way
/// the agent ends the run with [`AgentError::Model`](crate::AgentError::Model) holding
/// this error; downcast it, or use [`OpenAiError::find`] on any error that may wrap it.
///
/// Malformed tool-call *arguments* are not an error: a call's arguments stay the raw text
/// the model produced (see [`ToolCall`](crate::ToolCall)), and the loop answers a call
/// whose arguments are not valid JSON with an invalid-arguments tool result, so the
/// model can correct itself.
///
/// [`is_retryable`](OpenAiError::is_retryable) tells the errors that a retry may cure
/// (rate limits, overloaded or failing servers, dropped connections, timeouts) from the
/// ones it would only repeat (a bad request, a wrong key, a server speaking another
/// protocol).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenAiError {
    /// The server answered with an error status (other than 429).
    #[error("the server answered {status}: {message}")]
    Status {
        /// The HTTP status.
        status: StatusCode,
        /// The server's message (its `error.message`, or the body itself).
        message: String,
        /// The server's error code or type, if it gave one.
        code: Option<String>,
        /// How long the server asked to wait before trying again, if it did.
        retry_after: Option<Duration>,
    },
    /// The server answered 429: too many requests or tokens.
    #[error("rate limited by the server (429): {message}")]
    RateLimited {
        /// The server's message.
        message: String,
        /// How long the server asked to wait (`retry-after-ms` or `retry-after`), if it
        /// did.
        retry_after: Option<Duration>,
    },
    /// The request failed before any response came back: the connection was refused or
    /// reset, the host was not found, TLS failed.
    #[error("the request failed before a response arrived: {0}")]
    Request(#[source] reqwest::Error),
    /// The server sent nothing for longer than the read timeout (or the connect timeout
    /// passed), before or during the reply.
    #[error("the server did not answer in time: {0}")]
    Timeout(#[source] reqwest::Error),
    /// The connection dropped while the reply was coming in.
    #[error("the connection dropped before the reply was complete: {0}")]
    ConnectionDropped(#[source] reqwest::Error),
    /// The stream ended cleanly but without its `data: [DONE]` terminator: the reply may
    /// be cut short.
    #[error("the stream ended without `[DONE]`; the reply may be incomplete")]
    StreamIncomplete,
    /// A chunk of the stream is not the JSON of a chat completion chunk.
    #[error("a chunk of the stream is not valid JSON ({source}): {data}")]
    MalformedChunk {
        /// The chunk's data (its start, if it is long).
        data: String,
        /// What is wrong with it.
        #[source]
        source: serde_json::Error,
    },
    /// The response (or the stream's framing) is not what an OpenAI-compatible server
    /// sends.
    #[error("the response is not a chat completion ({reason}): {body}")]
    MalformedResponse {
        /// What is wrong.
        reason: String,
        /// The body, or its start.
        body: String,
    },
    /// The server reported an error inside the stream (an `{"error": ...}` chunk).
    #[error("the server reported an error in the stream: {message}")]
    StreamError {
        /// The server's message.
        message: String,
        /// The server's error code or type, if it gave one.
        code: Option<String>,
    },
}

impl OpenAiError {
    /// Whether trying the same request again may succeed: rate limits (429), the statuses
    /// 408, 409 and 5xx, failed connections, timeouts, dropped connections, streams cut
    /// short and error events in a stream. A refused request (other 4xx), malformed
    /// responses and malformed chunks are not retryable.
    pub fn is_retryable(&self) -> bool {
        match self {
            OpenAiError::RateLimited { .. }
            | OpenAiError::Timeout(_)
            | OpenAiError::ConnectionDropped(_)
            | OpenAiError::StreamIncomplete
            | OpenAiError::StreamError { .. } => true,
            OpenAiError::Request(error) => !error.is_builder(),
            OpenAiError::Status { status, .. } => {
                matches!(status.as_u16(), 408 | 409) || status.is_server_error()
            }
            OpenAiError::MalformedChunk { .. } | OpenAiError::MalformedResponse { .. } => false,
        }
    }

    /// Whether the server rate-limited the request (429).
    pub fn is_rate_limited(&self) -> bool {
        matches!(self, OpenAiError::RateLimited { .. })
    }

    /// Whether a connect or read timeout passed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, OpenAiError::Timeout(_))
    }

    /// The HTTP status of an error response (429 for [`OpenAiError::RateLimited`]).
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            OpenAiError::Status { status, .. } => Some(*status),
            OpenAiError::RateLimited { .. } => Some(StatusCode::TOO_MANY_REQUESTS),
            _ => None,
        }
    }

    /// How long the server asked to wait before trying again, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            OpenAiError::Status { retry_after, .. }
            | OpenAiError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The first `OpenAiError` in an error's chain of sources (the error itself
    /// included), for errors that wrap it, such as a `BoxError` from a retry layer or an
    /// [`AgentError`](crate::AgentError).
    pub fn find<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a OpenAiError> {
        let mut next = Some(error);
        while let Some(error) = next {
            if let Some(found) = error.downcast_ref::<OpenAiError>() {
                return Some(found);
            }
            next = error.source();
        }
        None
    }

    /// The error of a request that failed before its response arrived.
    pub(super) fn from_send(error: reqwest::Error) -> Self {
        if error.is_timeout() {
            OpenAiError::Timeout(error)
        } else {
            OpenAiError::Request(error)
        }
    }

    /// The error of a response body that could not be read to its end.
    pub(super) fn from_body(error: reqwest::Error) -> Self {
        if error.is_timeout() {
            OpenAiError::Timeout(error)
        } else {
            OpenAiError::ConnectionDropped(error)
        }
    }

    /// The error for an error response: its status, headers and body.
    pub(super) fn from_response(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
        let (message, code) = server_message(&String::from_utf8_lossy(body));
        let message =
            message.unwrap_or_else(|| status.canonical_reason().unwrap_or("no message").to_owned());
        let retry_after = retry_after(headers);
        if status == StatusCode::TOO_MANY_REQUESTS {
            OpenAiError::RateLimited {
                message,
                retry_after,
            }
        } else {
            OpenAiError::Status {
                status,
                message,
                code,
                retry_after,
            }
        }
    }

    /// The error for an `{"error": ...}` chunk (or an `event: error`) in a stream.
    pub(super) fn from_error_event(data: &str) -> Self {
        let (message, code) = server_message(data);
        OpenAiError::StreamError {
            message: message.unwrap_or_else(|| "no message".to_owned()),
            code,
        }
    }

    pub(super) fn malformed_chunk(data: &str, source: serde_json::Error) -> Self {
        OpenAiError::MalformedChunk {
            data: excerpt(data),
            source,
        }
    }

    pub(super) fn malformed_response(reason: impl Into<String>, body: &[u8]) -> Self {
        OpenAiError::MalformedResponse {
            reason: reason.into(),
            body: excerpt(&String::from_utf8_lossy(body)),
        }
    }
}

/// The server's message and code from an error body: OpenAI's
/// `{"error": {"message", "code", "type"}}`, `{"error": "..."}`, `{"message": ...}`,
/// FastAPI's `{"detail": ...}`, or the body as text. `None` for an empty body.
fn server_message(body: &str) -> (Option<String>, Option<String>) {
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

/// Why an [`OpenAiModel`](super::OpenAiModel) could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// No model name was given, neither to the builder nor in `OPENAI_MODEL`.
    #[error("no model name: set one with `.model(...)` or in OPENAI_MODEL")]
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
    /// The HTTP client could not be built (e.g. no TLS backend).
    #[error("the HTTP client could not be built: {0}")]
    Client(#[source] reqwest::Error),
}

impl From<SseError> for OpenAiError {
    fn from(error: SseError) -> Self {
        match error {
            SseError::Incomplete => OpenAiError::StreamIncomplete,
            SseError::EventTooLong { start } => OpenAiError::MalformedResponse {
                reason: "an event longer than 8 MiB".to_owned(),
                body: excerpt(&start),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use http::{HeaderMap, HeaderValue, StatusCode};

    use super::{OpenAiError, server_message};
    use crate::providers::http::excerpt;

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
    fn a_429_is_rate_limited_with_the_wait_in_milliseconds_preferred() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("2"));
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        let error = OpenAiError::from_response(StatusCode::TOO_MANY_REQUESTS, &headers, b"");
        assert!(error.is_rate_limited() && error.is_retryable());
        assert_eq!(error.retry_after(), Some(Duration::from_millis(1500)));
        assert_eq!(
            error.to_string(),
            "rate limited by the server (429): Too Many Requests"
        );
    }

    #[test]
    fn a_retry_after_that_is_a_date_or_negative_is_ignored() {
        for value in ["Wed, 21 Oct 2015 07:28:00 GMT", "-1", "NaN"] {
            let mut headers = HeaderMap::new();
            headers.insert("retry-after", HeaderValue::from_static(value));
            let error = OpenAiError::from_response(StatusCode::SERVICE_UNAVAILABLE, &headers, b"");
            assert_eq!(error.retry_after(), None, "{value}");
        }
    }

    #[test]
    fn client_errors_are_not_retryable_and_server_errors_are() {
        let status = |code: u16| {
            OpenAiError::from_response(StatusCode::from_u16(code).unwrap(), &HeaderMap::new(), b"")
        };
        for code in [400, 401, 403, 404, 422] {
            assert!(!status(code).is_retryable(), "{code}");
        }
        for code in [408, 409, 500, 502, 503, 504, 529] {
            assert!(status(code).is_retryable(), "{code}");
        }
    }

    #[test]
    fn a_long_body_is_cut_on_a_character_boundary() {
        let long = "é".repeat(3000);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), 1001);
        assert!(cut.ends_with('…'));
    }
}
