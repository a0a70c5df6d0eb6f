//! Errors in the shape of the OpenAI API: `{"error": {"message", "type", "param", "code"}}`.

use std::borrow::Cow;

use axum::Json;
use axum::http::StatusCode;
use axum::http::header::{RETRY_AFTER, WWW_AUTHENTICATE};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::server::{ApiError, Rejection};
use crate::wire::WireError;

/// A failure of an OpenAI-compatible route: the status and code of the server's
/// [`ApiError`], with the `type` an OpenAI client expects.
#[derive(Debug, Clone)]
pub(crate) struct OpenAiError {
    status: StatusCode,
    error: WireError,
    retry_after: Option<u64>,
}

impl OpenAiError {
    /// 404 `model_not_found`: no agent of that name.
    pub(crate) fn unknown_model(model: &str) -> Self {
        let message = format!("the model `{model}` does not exist (it names no agent)");
        OpenAiError::from(ApiError::not_found("model_not_found", message))
    }

    /// The `type` of the OpenAI API for a status.
    fn kind(&self) -> &'static str {
        match self.status.as_u16() {
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            429 => "rate_limit_error",
            500.. => "server_error",
            _ => "invalid_request_error",
        }
    }

    /// The body: `{"error": {...}}` (also a streamed chunk, for a run that fails after
    /// its first chunk).
    pub(crate) fn body(&self) -> serde_json::Value {
        #[derive(Serialize)]
        struct Body<'a> {
            error: Inner<'a>,
        }
        #[derive(Serialize)]
        struct Inner<'a> {
            message: &'a str,
            #[serde(rename = "type")]
            kind: &'a str,
            param: Option<()>,
            code: &'a Cow<'static, str>,
        }
        let body = Body {
            error: Inner {
                message: &self.error.message,
                kind: self.kind(),
                param: None,
                code: &self.error.code,
            },
        };
        serde_json::to_value(body).unwrap_or_default()
    }
}

impl From<ApiError> for OpenAiError {
    fn from(error: ApiError) -> Self {
        OpenAiError {
            status: error.status(),
            error: error.error().clone(),
            retry_after: error.retry_after(),
        }
    }
}

impl From<&crate::agent::AgentError> for OpenAiError {
    fn from(error: &crate::agent::AgentError) -> Self {
        OpenAiError::from(ApiError::from(error))
    }
}

impl From<Rejection> for OpenAiError {
    fn from(rejection: Rejection) -> Self {
        let status = StatusCode::UNAUTHORIZED;
        OpenAiError::from(ApiError::new(
            status,
            "invalid_api_key",
            rejection.message().to_owned(),
        ))
    }
}

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        let body = Json(self.body());
        if self.status == StatusCode::UNAUTHORIZED {
            (self.status, [(WWW_AUTHENTICATE, "Bearer")], body).into_response()
        } else if let Some(seconds) = self.retry_after {
            (self.status, [(RETRY_AFTER, seconds)], body).into_response()
        } else {
            (self.status, body).into_response()
        }
    }
}
