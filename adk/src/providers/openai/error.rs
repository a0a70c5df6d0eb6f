//! Errors of the OpenAI-compatible model: [`OpenAiError`] when a call fails, made from
//! the server's status, error body and `retry-after` headers and telling whether a retry
//! may cure it. (A model that cannot be built is a [`ConfigError`](super::ConfigError),
//! which every HTTP provider shares.)

use std::error::Error as StdError;
use std::time::Duration;

use ::http::{HeaderMap, StatusCode};

use crate::providers::http::{self, ProviderError, excerpt, retry_after, server_message};
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
    /// An event of the stream is not the JSON the API streams (a chat completion chunk,
    /// a Responses API event).
    #[error("a chunk of the stream is not valid JSON ({source}): {data}")]
    MalformedChunk {
        /// The chunk's data (its start, if it is long).
        data: String,
        /// What is wrong with it.
        #[source]
        source: serde_json::Error,
    },
    /// The response (or the stream's framing) is not what an OpenAI-compatible server
    /// sends: a chat completion, or a Responses API response.
    #[error("the response is not what the API sends ({reason}): {body}")]
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
        http::find(error)
    }

    /// The error for an error response: its status, headers and body.
    fn from_response(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
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
}

impl ProviderError for OpenAiError {
    fn timeout(error: reqwest::Error) -> Self {
        OpenAiError::Timeout(error)
    }

    fn request(error: reqwest::Error) -> Self {
        OpenAiError::Request(error)
    }

    fn dropped(error: reqwest::Error) -> Self {
        OpenAiError::ConnectionDropped(error)
    }

    fn response(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
        OpenAiError::from_response(status, headers, body)
    }

    fn incomplete() -> Self {
        OpenAiError::StreamIncomplete
    }

    fn malformed(reason: String, body: String) -> Self {
        OpenAiError::MalformedResponse { reason, body }
    }
}

impl From<SseError> for OpenAiError {
    fn from(error: SseError) -> Self {
        OpenAiError::from_sse(error)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use http::{HeaderMap, HeaderValue, StatusCode};

    use super::OpenAiError;

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
}
