//! Errors of the Gemini model: [`GeminiError`] when a call fails, made from the API's
//! `{"error": {"code", "message", "status", "details"}}` body (the wait of a `RetryInfo`
//! detail included) and telling whether a retry may cure it. (A model that cannot be
//! built is a [`ConfigError`](super::ConfigError), which every HTTP provider shares.)

use std::error::Error as StdError;
use std::time::Duration;

use ::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::Value;

use crate::providers::http::{self, ProviderError, excerpt, retry_after};
use crate::providers::sse::SseError;

/// Why a call to the Gemini API failed.
///
/// Errors come from the service's future (the API refused the request, or could not be
/// reached, or a part of the history cannot be sent) or from the reply's stream (the
/// stream broke, or the reply ended for a reason other than a normal stop). Either way
/// the agent ends the run with [`AgentError::Model`](crate::AgentError::Model) holding
/// this error; downcast it, or use [`GeminiError::find`] on any error that may wrap it.
///
/// [`is_retryable`](GeminiError::is_retryable) tells the errors that a retry may cure
/// (`429 RESOURCE_EXHAUSTED`, `503 UNAVAILABLE`, `500 INTERNAL`, `504 DEADLINE_EXCEEDED`,
/// dropped connections, timeouts, a malformed function call) from the ones it would only
/// repeat (an invalid argument, a wrong key, a reply blocked for safety).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GeminiError {
    /// The API answered with an error status (other than 429).
    #[error("the Gemini API answered {status} {}: {message}", google_status.as_deref().unwrap_or(""))]
    Status {
        /// The HTTP status.
        status: StatusCode,
        /// The API's status name (`INVALID_ARGUMENT`, `UNAVAILABLE`, ...), if it gave one.
        google_status: Option<String>,
        /// The API's message.
        message: String,
        /// How long the API asked to wait (a `RetryInfo` detail, or `Retry-After`).
        retry_after: Option<Duration>,
    },
    /// The API answered 429 `RESOURCE_EXHAUSTED`: a quota or rate limit.
    #[error("rate limited by the Gemini API (429): {message}")]
    RateLimited {
        /// The API's message.
        message: String,
        /// How long the API asked to wait (its `RetryInfo.retryDelay`), if it did.
        retry_after: Option<Duration>,
    },
    /// A part of the history cannot be sent to Gemini (nothing was sent).
    #[error("the {part} cannot be sent to Gemini: {reason}")]
    UnsupportedPart {
        /// Which part, e.g. `image of message 3`.
        part: String,
        /// Why.
        reason: String,
    },
    /// The reply ended for a reason other than a normal stop (`finishReason` `SAFETY`,
    /// `RECITATION`, `PROHIBITED_CONTENT`, `MALFORMED_FUNCTION_CALL`, ...), or the
    /// prompt was blocked (`promptFeedback.blockReason`). What came before it in a stream
    /// has reached the caller.
    #[error("the Gemini reply ended with {reason}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Finished {
        /// The finish or block reason, as the API names it.
        reason: String,
        /// The API's `finishMessage` or `blockReasonMessage`, if it gave one.
        message: Option<String>,
    },
    /// The request failed before any response came back.
    #[error("the request failed before a response arrived: {0}")]
    Request(#[source] reqwest::Error),
    /// The API sent nothing for longer than the read timeout (or the connect timeout
    /// passed).
    #[error("the Gemini API did not answer in time: {0}")]
    Timeout(#[source] reqwest::Error),
    /// The connection dropped while the reply was coming in.
    #[error("the connection dropped before the reply was complete: {0}")]
    ConnectionDropped(#[source] reqwest::Error),
    /// The stream ended before a chunk with a finish reason: the reply may be cut short.
    #[error("the stream ended before the reply's finish reason; the reply may be incomplete")]
    StreamIncomplete,
    /// A chunk of the stream is not the JSON of a `GenerateContentResponse`.
    #[error("a chunk of the stream is not valid JSON ({source}): {data}")]
    MalformedChunk {
        /// The chunk's data (its start, if it is long).
        data: String,
        /// What is wrong with it.
        #[source]
        source: serde_json::Error,
    },
    /// The response is not what the Gemini API sends.
    #[error("the response is not a Gemini reply ({reason}): {body}")]
    MalformedResponse {
        /// What is wrong.
        reason: String,
        /// The body, or its start.
        body: String,
    },
    /// The API reported an error inside the stream (an `{"error": ...}` chunk).
    #[error("the Gemini API reported an error in the stream ({}): {message}", google_status.as_deref().unwrap_or("no status"))]
    StreamError {
        /// The API's status name, if it gave one.
        google_status: Option<String>,
        /// The API's message.
        message: String,
    },
}

/// Finish reasons that a new attempt may cure: the model wrote a malformed call or
/// reply, or stopped for no given reason.
const RETRYABLE_FINISH: [&str; 3] = ["MALFORMED_FUNCTION_CALL", "MALFORMED_RESPONSE", "OTHER"];

impl GeminiError {
    /// Whether trying the same request again may succeed: rate limits (429), 408, 500,
    /// 502, 503 and 504 (or the statuses `UNAVAILABLE`, `INTERNAL`, `DEADLINE_EXCEEDED`,
    /// `RESOURCE_EXHAUSTED` in a stream), failed connections, timeouts, streams cut short,
    /// and replies that ended with `MALFORMED_FUNCTION_CALL`, `MALFORMED_RESPONSE` or
    /// `OTHER`. Refused requests (other 4xx), blocked replies, parts that cannot be sent
    /// and malformed responses are not.
    pub fn is_retryable(&self) -> bool {
        match self {
            GeminiError::RateLimited { .. }
            | GeminiError::Timeout(_)
            | GeminiError::ConnectionDropped(_)
            | GeminiError::StreamIncomplete => true,
            GeminiError::Request(error) => !error.is_builder(),
            GeminiError::Status { status, .. } => {
                matches!(status.as_u16(), 408 | 500 | 502 | 503 | 504)
            }
            GeminiError::StreamError { google_status, .. } => matches!(
                google_status.as_deref(),
                Some("UNAVAILABLE" | "INTERNAL" | "DEADLINE_EXCEEDED" | "RESOURCE_EXHAUSTED")
            ),
            GeminiError::Finished { reason, .. } => RETRYABLE_FINISH.contains(&reason.as_str()),
            GeminiError::UnsupportedPart { .. }
            | GeminiError::MalformedChunk { .. }
            | GeminiError::MalformedResponse { .. } => false,
        }
    }

    /// Whether the API rate-limited the request (429).
    pub fn is_rate_limited(&self) -> bool {
        matches!(self, GeminiError::RateLimited { .. })
    }

    /// Whether a connect or read timeout passed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, GeminiError::Timeout(_))
    }

    /// The HTTP status of an error response (429 for [`GeminiError::RateLimited`]).
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            GeminiError::Status { status, .. } => Some(*status),
            GeminiError::RateLimited { .. } => Some(StatusCode::TOO_MANY_REQUESTS),
            _ => None,
        }
    }

    /// How long the API asked to wait before trying again, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            GeminiError::Status { retry_after, .. }
            | GeminiError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The first `GeminiError` in an error's chain of sources (the error itself
    /// included), for errors that wrap it, such as a `BoxError` from a retry layer or an
    /// [`AgentError`](crate::AgentError).
    pub fn find<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a GeminiError> {
        http::find(error)
    }

    /// The error for an error response: its status, headers and body.
    pub(super) fn from_response(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
        let error = ApiError::read(body);
        let message = error.message.unwrap_or_else(|| {
            let body = String::from_utf8_lossy(body);
            match body.trim() {
                "" => status.canonical_reason().unwrap_or("no message").to_owned(),
                text => excerpt(text),
            }
        });
        let retry_after = error.retry_delay.or_else(|| retry_after(headers));
        if status == StatusCode::TOO_MANY_REQUESTS {
            GeminiError::RateLimited {
                message,
                retry_after,
            }
        } else {
            GeminiError::Status {
                status,
                google_status: error.status,
                message,
                retry_after,
            }
        }
    }

    /// The error for an `{"error": ...}` chunk in a stream.
    pub(super) fn from_error_chunk(data: &str) -> Self {
        let error = ApiError::read(data.as_bytes());
        GeminiError::StreamError {
            google_status: error.status,
            message: error.message.unwrap_or_else(|| excerpt(data)),
        }
    }

    pub(super) fn malformed_chunk(data: &str, source: serde_json::Error) -> Self {
        GeminiError::MalformedChunk {
            data: excerpt(data),
            source,
        }
    }
}

/// What an error body says: Google's `{"error": {"code", "message", "status",
/// "details": [...]}}`, with the wait of a `google.rpc.RetryInfo` detail.
#[derive(Debug, Default)]
struct ApiError {
    message: Option<String>,
    status: Option<String>,
    retry_delay: Option<Duration>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorObject,
}

#[derive(Deserialize)]
struct ErrorObject {
    message: Option<String>,
    status: Option<String>,
    #[serde(default)]
    details: Vec<Value>,
}

impl ApiError {
    fn read(body: &[u8]) -> Self {
        let Ok(ErrorBody { error }) = serde_json::from_slice::<ErrorBody>(body) else {
            return ApiError::default();
        };
        let retry_delay = error.details.iter().find_map(|detail| {
            let kind = detail.get("@type")?.as_str()?;
            kind.ends_with("google.rpc.RetryInfo")
                .then(|| detail.get("retryDelay")?.as_str().and_then(duration))?
        });
        ApiError {
            message: error.message.map(|m| excerpt(&m)),
            status: error.status,
            retry_delay,
        }
    }
}

/// A protobuf `Duration` in its JSON form: seconds with up to nine decimals and an `s`
/// (`"56s"`, `"0.539477544s"`).
fn duration(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| Duration::try_from_secs_f64(seconds).ok())
        .flatten()
}

impl ProviderError for GeminiError {
    fn timeout(error: reqwest::Error) -> Self {
        GeminiError::Timeout(error)
    }

    fn request(error: reqwest::Error) -> Self {
        GeminiError::Request(error)
    }

    fn dropped(error: reqwest::Error) -> Self {
        GeminiError::ConnectionDropped(error)
    }

    fn response(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
        GeminiError::from_response(status, headers, body)
    }

    fn incomplete() -> Self {
        GeminiError::StreamIncomplete
    }

    fn malformed(reason: String, body: String) -> Self {
        GeminiError::MalformedResponse { reason, body }
    }
}

impl From<SseError> for GeminiError {
    fn from(error: SseError) -> Self {
        GeminiError::from_sse(error)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use http::{HeaderMap, HeaderValue, StatusCode};

    use super::GeminiError;

    const QUOTA: &str = r#"{"error": {"code": 429, "message": "You exceeded your current quota.", "status": "RESOURCE_EXHAUSTED", "details": [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "56.5s"}]}}"#;

    #[test]
    fn a_429_is_rate_limited_with_the_wait_of_its_retry_info() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        let error =
            GeminiError::from_response(StatusCode::TOO_MANY_REQUESTS, &headers, QUOTA.as_bytes());
        assert!(error.is_rate_limited() && error.is_retryable());
        assert_eq!(error.retry_after(), Some(Duration::from_millis(56_500)));
        assert_eq!(
            error.to_string(),
            "rate limited by the Gemini API (429): You exceeded your current quota."
        );
    }

    #[test]
    fn without_retry_info_the_retry_after_header_gives_the_wait() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        let body = br#"{"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}"#;
        let error = GeminiError::from_response(StatusCode::SERVICE_UNAVAILABLE, &headers, body);
        assert!(error.is_retryable());
        assert_eq!(error.retry_after(), Some(Duration::from_secs(3)));
        assert!(
            matches!(&error, GeminiError::Status { google_status: Some(s), .. } if s == "UNAVAILABLE")
        );
    }

    #[test]
    fn client_errors_are_not_retryable_and_server_errors_are() {
        let status = |code: u16| {
            GeminiError::from_response(StatusCode::from_u16(code).unwrap(), &HeaderMap::new(), b"")
        };
        for code in [400, 401, 403, 404] {
            assert!(!status(code).is_retryable(), "{code}");
        }
        for code in [408, 429, 500, 502, 503, 504] {
            assert!(status(code).is_retryable(), "{code}");
        }
    }

    #[test]
    fn a_blocked_reply_is_not_retryable_and_a_malformed_call_is() {
        let finished = |reason: &str| GeminiError::Finished {
            reason: reason.into(),
            message: None,
        };
        assert!(!finished("SAFETY").is_retryable());
        assert!(!finished("RECITATION").is_retryable());
        assert!(finished("MALFORMED_FUNCTION_CALL").is_retryable());
    }

    #[test]
    fn an_error_chunk_keeps_its_status_and_message() {
        let error = GeminiError::from_error_chunk(
            r#"{"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}"#,
        );
        assert!(error.is_retryable());
        assert!(error.to_string().contains("INTERNAL"), "{error}");
    }
}
