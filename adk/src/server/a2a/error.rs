//! [`A2aError`]: how a refused A2A request is answered: a JSON-RPC error (its A2A code,
//! our stable code in `data`, as the
//! metadata of a `google.rpc.ErrorInfo`), or, for what every route answers with a status (a caller
//! past its limits, a server that drains), the server's own error.

use axum::http::StatusCode;

use crate::a2a::{A2aErrorCode, JsonRpcError};
use crate::server::error::ApiError;

/// A refused A2A request.
#[derive(Debug)]
pub(super) enum A2aError {
    /// Answered as a JSON-RPC error, with status 200.
    Rpc(JsonRpcError),
    /// Answered as on every route: 429 with `Retry-After`, 503.
    Http(ApiError),
}

impl A2aError {
    pub(super) fn new(kind: A2aErrorCode, message: impl Into<String>) -> Self {
        A2aError::Rpc(JsonRpcError::new(kind, message))
    }

    pub(super) fn invalid_params(message: impl Into<String>) -> Self {
        A2aError::new(A2aErrorCode::InvalidParams, message)
    }

    /// No such task, or one the caller may not see: told apart to no one.
    pub(super) fn task_not_found(id: &str) -> Self {
        A2aError::new(A2aErrorCode::TaskNotFound, format!("no task `{id}`"))
    }
}

/// The server's errors as A2A's: what does not exist or is not the caller's is
/// `TaskNotFound`; what the request got wrong (a bad context id, decisions that do not
/// fit, a busy context) `InvalidParams`; limits and draining keep their status; the rest
/// is `InternalError`. Our code and message go in `data`.
impl From<ApiError> for A2aError {
    fn from(error: ApiError) -> Self {
        let kind = match error.status() {
            StatusCode::NOT_FOUND => A2aErrorCode::TaskNotFound,
            StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY | StatusCode::CONFLICT => {
                A2aErrorCode::InvalidParams
            }
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
                if error.error().code != "cancelled" =>
            {
                return A2aError::Http(error);
            }
            _ => A2aErrorCode::InternalError,
        };
        let wire = error.error();
        let info = [("code", wire.code.to_string())];
        A2aError::Rpc(JsonRpcError::new(kind, wire.message.clone()).with_error_info(info))
    }
}
