//! Extractors whose refusals are the server's JSON errors: [`Body`], a request's body
//! read whole within the [`Limits`]; [`Path`] and [`Query`], axum's refused with
//! `invalid_path` and `invalid_query`; and [`json`], which reads a body into its type
//! with a message a person understands.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::limit::Limits;
use super::state::AppState;

/// A request's body, read whole: of a content type a body may have, within
/// [`Limits::body_bytes`] and [`Limits::body_timeout`] (see [`Limits`](Limits#bodies)).
#[derive(Debug)]
pub(crate) struct Body(pub(crate) Bytes);

impl FromRequest<AppState> for Body {
    type Rejection = ApiError;

    async fn from_request(mut request: Request, state: &AppState) -> Result<Self, ApiError> {
        let limits = &state.limits;
        media_type(request.headers())?;
        DefaultBodyLimit::max(limits.body_bytes).apply(&mut request);
        let read = Bytes::from_request(request, state);
        match tokio::time::timeout(limits.body_timeout, read).await {
            Ok(Ok(bytes)) => Ok(Body(bytes)),
            Ok(Err(rejection)) => Err(unread(&rejection, limits)),
            Err(_) => {
                let message = format!("the body did not arrive within {:?}", limits.body_timeout);
                Err(ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "body_timeout",
                    message,
                ))
            }
        }
    }
}

/// Refuses a content type that is not JSON, text, a form (what `curl -d` says) or none.
fn media_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return Ok(());
    };
    let essence = value.to_str().ok().and_then(|v| v.split(';').next());
    let read = essence.map(str::trim).is_some_and(|e| {
        let is = |name: &str| e.eq_ignore_ascii_case(name);
        let (kind, json) = (
            e.get(..12),
            e.len().checked_sub(5).and_then(|at| e.get(at..)),
        );
        is("application/json")
            || (kind.is_some_and(|k| k.eq_ignore_ascii_case("application/"))
                && json.is_some_and(|j| j.eq_ignore_ascii_case("+json")))
            || is("text/plain")
            || is("application/x-www-form-urlencoded")
    });
    if read {
        return Ok(());
    }
    let message = format!(
        "a body of type `{}` is not read: send JSON, as `application/json`",
        String::from_utf8_lossy(value.as_bytes())
    );
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        message,
    ))
}

/// Why a body could not be read: too large (413), or a connection that failed.
fn unread(rejection: &BytesRejection, limits: &Limits) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        let message = format!("the body is larger than {} bytes", limits.body_bytes);
        return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", message);
    }
    let message = format!("the body could not be read: {}", rejection.body_text());
    ApiError::bad_request("invalid_body", message)
}

/// Reads a body into `T`: refused with 400 `invalid_body` and a message that says what
/// is wrong, where: not UTF-8, not JSON, not a JSON object (`what` says what it should
/// be), or not `T`'s shape (serde's words, with the line and column).
pub(crate) fn json<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, ApiError> {
    let text = std::str::from_utf8(bytes).map_err(|error| {
        let at = error.valid_up_to();
        invalid(format!("the body is not UTF-8 text (byte {at} is not)"))
    })?;
    let start = text.trim_start_matches([' ', '\t', '\n', '\r']);
    if start.is_empty() {
        return Err(invalid(format!("the body is empty: send {what}")));
    }
    if !start.starts_with('{') {
        return Err(invalid(format!(
            "the body is not a JSON object: send {what}"
        )));
    }
    serde_json::from_str(text).map_err(|error| {
        use serde_json::error::Category;
        match error.classify() {
            Category::Syntax | Category::Eof | Category::Io => {
                invalid(format!("the body is not valid JSON: {error}"))
            }
            Category::Data => invalid(format!("the body is not {what}: {error}")),
        }
    })
}

fn invalid(message: String) -> ApiError {
    ApiError::bad_request("invalid_body", message)
}

/// axum's [`Path`](axum::extract::Path), refused with 400 `invalid_path` (a segment that
/// is not UTF-8, say).
#[derive(Debug)]
pub(crate) struct Path<T>(pub(crate) T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let path = axum::extract::Path::<T>::from_request_parts(parts, state).await;
        match path {
            Ok(axum::extract::Path(value)) => Ok(Path(value)),
            Err(rejection) => Err(ApiError::bad_request("invalid_path", rejection.body_text())),
        }
    }
}

/// axum's [`Query`](axum::extract::Query), refused with 400 `invalid_query`.
#[derive(Debug)]
pub(crate) struct Query<T>(pub(crate) T);

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let query = axum::extract::Query::<T>::from_request_parts(parts, state).await;
        match query {
            Ok(axum::extract::Query(value)) => Ok(Query(value)),
            Err(rejection) => Err(ApiError::bad_request(
                "invalid_query",
                rejection.body_text(),
            )),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Shape {
        input: String,
    }

    fn refusal(body: &[u8]) -> String {
        json::<Shape>(body, "{\"input\": \"...\"}")
            .unwrap_err()
            .error()
            .message
            .clone()
    }

    #[test]
    fn each_wrong_body_is_told_what_is_wrong() {
        assert!(refusal(b"{\"input\": \"\xff\"}").contains("not UTF-8 text (byte 11"));
        assert!(refusal(b" \n").contains("the body is empty"));
        assert!(refusal(b"[1,2]").contains("not a JSON object: send {\"input\""));
        assert!(refusal(b"\"hi\"").contains("not a JSON object"));
        assert!(refusal(b"{\"input\": ").contains("not valid JSON: EOF"));
        assert!(refusal(b"{\"input\": 1}").contains("is not {\"input\": \"...\"}: invalid type"));
        assert_eq!(
            json::<Shape>(b" {\"input\": \"a\"}", "").unwrap().input,
            "a"
        );
    }

    #[test]
    fn json_text_and_forms_are_read_and_other_types_are_not() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, value.parse().unwrap());
            media_type(&headers)
        };
        for read in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/vnd.api+json",
            " APPLICATION/Problem+JSON ",
            "text/plain;charset=UTF-8",
            "application/x-www-form-urlencoded",
        ] {
            assert!(with(read).is_ok(), "{read}");
        }
        for refused in [
            "multipart/form-data; boundary=x",
            "application/xml",
            "application+json",
            "text/x+json",
            "text/html",
            "",
        ] {
            let error = with(refused).unwrap_err();
            assert_eq!(error.status(), 415);
            assert_eq!(error.error().code, "unsupported_media_type");
        }
        assert!(media_type(&HeaderMap::new()).is_ok());
    }
}
