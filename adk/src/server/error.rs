//! [`ApiError`]: every failure of the server as a status and a JSON body with a stable
//! code.

use std::borrow::Cow;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::agent::{AgentError, ResumeError};
use crate::checkpoint::CheckpointError;
use crate::wire::WireError;

/// A failure answered by the server: a status and `{"error": {"code", "message"}}`.
///
/// | status | codes |
/// |---|---|
/// | 400 | `invalid_body`, `malformed_checkpoint_id`, `invalid_last_event_id`, `invalid_cursor` |
/// | 401 | `unauthorized` |
/// | 404 | `unknown_agent`, `unknown_thread` (none, or one the caller may not touch), `unknown_run`, `checkpoint_unknown`, `not_found` |
/// | 405 | `method_not_allowed` |
/// | 409 | `thread_busy`, `thread_interrupted`, `checkpoint_used`, `checkpoint_ended` |
/// | 422 | `missing_decision`, `unknown_interrupt`, `wrong_decision`, `invalid_edit` |
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
        }
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
            AgentError::Model(_) => StatusCode::BAD_GATEWAY,
            AgentError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
            AgentError::Cancelled { .. } => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            status,
            error: error.into(),
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
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        #[derive(Serialize)]
        struct Body<'a> {
            error: &'a WireError,
        }
        (self.status, Json(Body { error: &self.error })).into_response()
    }
}

impl From<CheckpointError> for ApiError {
    fn from(error: CheckpointError) -> Self {
        ApiError::from(&error)
    }
}
