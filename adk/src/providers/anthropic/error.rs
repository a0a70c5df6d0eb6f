//! Errors of the Anthropic model: [`AnthropicError`] when a call fails, made from the
//! server's status, its error body (`{"type": "error", "error": {"type", "message"}}`),
//! its `retry-after` header and the stream's `error` events, telling whether a retry may
//! cure it. (A model that cannot be built is a [`ConfigError`](super::ConfigError), which
//! every HTTP provider shares.)

use std::error::Error as StdError;
use std::time::Duration;

use ::http::{HeaderMap, StatusCode};

use crate::providers::http::{self, ProviderError, excerpt, retry_after, server_message};
use crate::providers::sse::SseError;

/// The status Anthropic answers when it is overloaded (`overloaded_error`).
const OVERLOADED: u16 = 529;

/// Why a call to the Anthropic Messages API failed.
///
/// Errors come from the service's future (the server refused the request, or could not
/// be reached, or a part of the history cannot be sent) or from the reply's stream (an
/// `error` event, a stream that broke). Either way the agent ends the run with
/// [`AgentError::Model`](crate::AgentError::Model) holding this error; downcast it, or
/// use [`AnthropicError::find`] on any error that may wrap it.
///
/// [`is_retryable`](AnthropicError::is_retryable) tells the errors that a retry may cure
/// (overloaded, rate limited, failing servers, dropped connections, timeouts) from those
/// it would only repeat (a bad request, a wrong key, a part Anthropic cannot take).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnthropicError {
    /// Anthropic is overloaded: a 529 answer, or an `overloaded_error` event in the stream.
    #[error("Anthropic is overloaded: {message}")]
    Overloaded {
        /// The server's message.
        message: String,
        /// How long the server asked to wait, if it did.
        retry_after: Option<Duration>,
    },
    /// Too many requests or tokens: a 429 answer, or a `rate_limit_error` event.
    #[error("rate limited by Anthropic: {message}")]
    RateLimited {
        /// The server's message.
        message: String,
        /// How long the server asked to wait (`retry-after`), if it did.
        retry_after: Option<Duration>,
    },
    /// The server answered with another error status.
    #[error("the server answered {status}: {message}")]
    Status {
        /// The HTTP status.
        status: StatusCode,
        /// The server's message (its `error.message`, or the body itself).
        message: String,
        /// Anthropic's error type (`invalid_request_error`, `authentication_error`, ...),
        /// if it gave one.
        kind: Option<String>,
        /// How long the server asked to wait before trying again, if it did.
        retry_after: Option<Duration>,
    },
    /// The server reported another error inside the stream (an `error` event).
    #[error("the server reported an error in the stream ({kind}): {message}")]
    StreamError {
        /// Anthropic's error type, e.g. `api_error`.
        kind: String,
        /// The server's message.
        message: String,
    },
    /// A part of the history cannot be sent to Anthropic (a file type it does not read,
    /// an image in the model's own turn): the call is refused before anything is sent,
    /// rather than the part dropped.
    #[error("{part} cannot be sent to Anthropic: {reason}")]
    UnsupportedPart {
        /// The part, described (`a file: report.docx, application/...`).
        part: String,
        /// Why.
        reason: String,
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
    /// The stream ended cleanly but without its `message_stop` event: the reply may be cut
    /// short.
    #[error("the stream ended without `message_stop`; the reply may be incomplete")]
    StreamIncomplete,
    /// An event of the stream is not the JSON of a Messages stream event.
    #[error("an event of the stream is not valid JSON ({source}): {data}")]
    MalformedEvent {
        /// The event's data (its start, if it is long).
        data: String,
        /// What is wrong with it.
        #[source]
        source: serde_json::Error,
    },
    /// The response (or the stream's framing) is not what the Messages API sends.
    #[error("the response is not a Messages API reply ({reason}): {body}")]
    MalformedResponse {
        /// What is wrong.
        reason: String,
        /// The body, or its start.
        body: String,
    },
}

impl AnthropicError {
    /// Whether trying the same request again may succeed: overloaded (529), rate limited
    /// (429), the statuses 408, 409 and 5xx, failed connections, timeouts, dropped
    /// connections, streams cut short and `api_error` events. A refused request (other
    /// 4xx), an unsupported part and malformed replies are not retryable.
    pub fn is_retryable(&self) -> bool {
        match self {
            AnthropicError::Overloaded { .. }
            | AnthropicError::RateLimited { .. }
            | AnthropicError::Timeout(_)
            | AnthropicError::ConnectionDropped(_)
            | AnthropicError::StreamIncomplete => true,
            AnthropicError::StreamError { kind, .. } => {
                matches!(kind.as_str(), "api_error" | "timeout_error")
            }
            AnthropicError::Request(error) => !error.is_builder(),
            AnthropicError::Status { status, .. } => {
                matches!(status.as_u16(), 408 | 409) || status.is_server_error()
            }
            AnthropicError::UnsupportedPart { .. }
            | AnthropicError::MalformedEvent { .. }
            | AnthropicError::MalformedResponse { .. } => false,
        }
    }

    /// Whether Anthropic was overloaded (529 or an `overloaded_error` event).
    pub fn is_overloaded(&self) -> bool {
        matches!(self, AnthropicError::Overloaded { .. })
    }

    /// Whether the request was rate limited (429 or a `rate_limit_error` event).
    pub fn is_rate_limited(&self) -> bool {
        matches!(self, AnthropicError::RateLimited { .. })
    }

    /// Whether a connect or read timeout passed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, AnthropicError::Timeout(_))
    }

    /// The HTTP status of the answer: 529 for [`Overloaded`](AnthropicError::Overloaded)
    /// and 429 for [`RateLimited`](AnthropicError::RateLimited) (also when they came as
    /// an event of the stream, which Anthropic documents as the same errors).
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            AnthropicError::Status { status, .. } => Some(*status),
            AnthropicError::Overloaded { .. } => StatusCode::from_u16(OVERLOADED).ok(),
            AnthropicError::RateLimited { .. } => Some(StatusCode::TOO_MANY_REQUESTS),
            _ => None,
        }
    }

    /// How long the server asked to wait before trying again, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            AnthropicError::Overloaded { retry_after, .. }
            | AnthropicError::RateLimited { retry_after, .. }
            | AnthropicError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The first `AnthropicError` in an error's chain of sources (the error itself
    /// included), for errors that wrap it, such as a `BoxError` from a retry layer or an
    /// [`AgentError`](crate::AgentError).
    pub fn find<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a AnthropicError> {
        http::find(error)
    }

    /// The error for an error response: its status, headers and body.
    fn from_response(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
        let (message, kind) = server_message(&String::from_utf8_lossy(body));
        let message =
            message.unwrap_or_else(|| status.canonical_reason().unwrap_or("no message").to_owned());
        let retry_after = retry_after(headers);
        match (status.as_u16(), kind.as_deref()) {
            (OVERLOADED, _) | (_, Some("overloaded_error")) => AnthropicError::Overloaded {
                message,
                retry_after,
            },
            (429, _) => AnthropicError::RateLimited {
                message,
                retry_after,
            },
            _ => AnthropicError::Status {
                status,
                message,
                kind,
                retry_after,
            },
        }
    }

    /// The error for an `error` event of the stream.
    pub(super) fn from_error_event(data: &str) -> Self {
        let (message, kind) = server_message(data);
        let message = message.unwrap_or_else(|| "no message".to_owned());
        match kind.as_deref() {
            Some("overloaded_error") => AnthropicError::Overloaded {
                message,
                retry_after: None,
            },
            Some("rate_limit_error") => AnthropicError::RateLimited {
                message,
                retry_after: None,
            },
            _ => AnthropicError::StreamError {
                kind: kind.unwrap_or_else(|| "error".to_owned()),
                message,
            },
        }
    }

    pub(super) fn malformed_event(data: &str, source: serde_json::Error) -> Self {
        AnthropicError::MalformedEvent {
            data: excerpt(data),
            source,
        }
    }
}

impl ProviderError for AnthropicError {
    fn timeout(error: reqwest::Error) -> Self {
        AnthropicError::Timeout(error)
    }

    fn request(error: reqwest::Error) -> Self {
        AnthropicError::Request(error)
    }

    fn dropped(error: reqwest::Error) -> Self {
        AnthropicError::ConnectionDropped(error)
    }

    fn response(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
        AnthropicError::from_response(status, headers, body)
    }

    fn incomplete() -> Self {
        AnthropicError::StreamIncomplete
    }

    fn malformed(reason: String, body: String) -> Self {
        AnthropicError::MalformedResponse { reason, body }
    }
}

impl From<SseError> for AnthropicError {
    fn from(error: SseError) -> Self {
        AnthropicError::from_sse(error)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use http::{HeaderMap, HeaderValue, StatusCode};

    use super::AnthropicError;

    const OVERLOADED: &[u8] =
        br#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;

    #[test]
    fn a_529_is_overloaded_and_retryable() {
        let status = StatusCode::from_u16(529).unwrap();
        let error = AnthropicError::from_response(status, &HeaderMap::new(), OVERLOADED);
        assert!(error.is_overloaded() && error.is_retryable(), "{error:?}");
        assert_eq!(error.status(), Some(status));
        assert_eq!(error.to_string(), "Anthropic is overloaded: Overloaded");
    }

    #[test]
    fn a_429_is_rate_limited_with_its_wait() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("7"));
        let body =
            br#"{"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}"#;
        let error = AnthropicError::from_response(StatusCode::TOO_MANY_REQUESTS, &headers, body);
        assert!(error.is_rate_limited() && error.is_retryable());
        assert_eq!(error.retry_after(), Some(Duration::from_secs(7)));
        assert_eq!(error.status(), Some(StatusCode::TOO_MANY_REQUESTS));
    }

    #[test]
    fn a_refused_request_keeps_its_kind_and_is_not_retryable() {
        let body = br#"{"type": "error", "error": {"type": "invalid_request_error", "message": "messages.1.content.0.thinking.signature: Field required"}}"#;
        let error = AnthropicError::from_response(StatusCode::BAD_REQUEST, &HeaderMap::new(), body);
        match &error {
            AnthropicError::Status { kind, message, .. } => {
                assert_eq!(kind.as_deref(), Some("invalid_request_error"));
                assert!(message.contains("signature"));
            }
            other => panic!("{other:?}"),
        }
        assert!(!error.is_retryable());
    }

    #[test]
    fn error_events_are_typed_by_their_kind() {
        let overloaded = AnthropicError::from_error_event(std::str::from_utf8(OVERLOADED).unwrap());
        assert!(overloaded.is_overloaded() && overloaded.is_retryable());
        let api = AnthropicError::from_error_event(
            r#"{"type": "error", "error": {"type": "api_error", "message": "boom"}}"#,
        );
        assert!(matches!(&api, AnthropicError::StreamError { kind, .. } if kind == "api_error"));
        assert!(api.is_retryable());
        let invalid = AnthropicError::from_error_event(
            r#"{"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}"#,
        );
        assert!(!invalid.is_retryable());
    }
}
