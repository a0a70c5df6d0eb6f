//! [`ApiError`]: every failure of the server as a status and a JSON body with a stable
//! code.

use std::borrow::Cow;
use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::http::header::RETRY_AFTER;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::agent::{AgentError, InvalidThread, ResumeError};
use crate::checkpoint::CheckpointError;
use crate::wire::WireError;

/// A failure answered by the server: a status and `{"error": {"code", "message"}}`.
///
/// | status | codes |
/// |---|---|
/// | 400 | `invalid_body` (not JSON, not UTF-8, not an object, or not a run: the message says which), `invalid_thread` (a thread's name past the [bounds](crate::agent::check_thread)), `invalid_path` (a path segment that is not UTF-8), `invalid_query`, `malformed_checkpoint_id`, `invalid_last_event_id`, `invalid_cursor` |
/// | 401 | `unauthorized` |
/// | 404 | `unknown_agent`, `unknown_thread` (none, or one the caller may not touch), `unknown_run`, `checkpoint_unknown`, `not_found` |
/// | 405 | `method_not_allowed` |
/// | 408 | `body_timeout` (the body did not arrive within [`Limits::body_timeout`](super::Limits::body_timeout)) |
/// | 409 | `thread_busy`, `thread_interrupted`, `checkpoint_used`, `checkpoint_ended` |
/// | 413 | `body_too_large` (past [`Limits::body_bytes`](super::Limits::body_bytes)) |
/// | 415 | `unsupported_media_type` (a body sent as neither JSON, text nor a form: see [`Limits`](super::Limits#bodies)) |
/// | 422 | `missing_decision`, `unknown_interrupt`, `wrong_decision`, `invalid_edit` |
/// | 429 | `rate_limited`, `too_many_runs` (the caller's [limits](super::Limits)), with `Retry-After` |
/// | 500 | the other [`AgentError::code`]s and [`CheckpointError::code`]s |
/// | 502 | `model_failed` |
/// | 503 | `not_ready`, `shutting_down` (the server drains: see [`Shutdown`](super::Shutdown)), `cancelled` (the run was cut at the drain's deadline; `checkpoint` says where a resume takes it over) |
/// | 504 | `run_timeout` |
///
/// # Example
///
/// ```
/// use tower_adk::checkpoint::CheckpointError;
/// use tower_adk::server::ApiError;
///
/// let error = ApiError::from(&CheckpointError::ThreadBusy("t1".into()));
/// assert_eq!(error.status(), 409);
/// assert_eq!(error.error().code, "thread_busy");
/// ```
#[derive(Debug, Clone)]
pub struct ApiError {
    status: StatusCode,
    error: WireError,
    /// When to ask again, in whole seconds (a 429's `Retry-After`).
    retry_after: Option<u64>,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        ApiError {
            status,
            error: WireError::new(code, message),
            retry_after: None,
        }
    }

    /// The same error, answered with `Retry-After: SECONDS` (rounded up to a whole
    /// second, at least 1).
    pub fn with_retry_after(mut self, after: Duration) -> Self {
        let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
        self.retry_after = Some(seconds.max(1));
        self
    }

    /// The `Retry-After` it is answered with, in seconds, if any.
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The code and the message.
    pub fn error(&self) -> &WireError {
        &self.error
    }

    pub(crate) fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub(crate) fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, code, message)
    }
}

impl From<&AgentError> for ApiError {
    fn from(error: &AgentError) -> Self {
        let status = match error {
            AgentError::Checkpoint(error) => return ApiError::from(&**error),
            AgentError::Resume(error) => return ApiError::from(&**error),
            AgentError::InvalidThread(_) => StatusCode::BAD_REQUEST,
            AgentError::Model(_) => StatusCode::BAD_GATEWAY,
            AgentError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
            AgentError::Cancelled { .. } => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            status,
            error: error.into(),
            retry_after: None,
        }
    }
}

impl From<&CheckpointError> for ApiError {
    fn from(error: &CheckpointError) -> Self {
        let status = match error {
            CheckpointError::UnknownThread(_) => StatusCode::NOT_FOUND,
            CheckpointError::ThreadBusy(_) | CheckpointError::ThreadInterrupted(_) => {
                StatusCode::CONFLICT
            }
            CheckpointError::MalformedId(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            status,
            error: error.into(),
            retry_after: None,
        }
    }
}

impl From<&ResumeError> for ApiError {
    fn from(error: &ResumeError) -> Self {
        let status = match error {
            ResumeError::Unknown(_) => StatusCode::NOT_FOUND,
            ResumeError::Used(..) | ResumeError::Ended(_) => StatusCode::CONFLICT,
            _ => StatusCode::UNPROCESSABLE_ENTITY,
        };
        ApiError {
            status,
            error: error.into(),
            retry_after: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        #[derive(Serialize)]
        struct Body<'a> {
            error: &'a WireError,
        }
        let body = Json(Body { error: &self.error });
        match self.retry_after {
            Some(seconds) => (self.status, [(RETRY_AFTER, seconds)], body).into_response(),
            None => (self.status, body).into_response(),
        }
    }
}

impl From<InvalidThread> for ApiError {
    fn from(error: InvalidThread) -> Self {
        ApiError::from(&AgentError::from(error))
    }
}

impl From<CheckpointError> for ApiError {
    fn from(error: CheckpointError) -> Self {
        ApiError::from(&error)
    }
}
