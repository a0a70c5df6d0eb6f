//! `GET` and `DELETE /agents/{name}/threads/{thread}`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::state::AppState;
use crate::wire::{Versioned, WireThread};

/// Where the thread stands: its newest checkpoint (see [`WireThread`]).
pub(crate) async fn show(
    State(state): State<AppState>,
    Path((name, thread)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let agent = state.agent(&name)?;
    let last = agent.last_checkpoint(&thread).await;
    let (id, checkpoint) = last
        .map_err(|e| ApiError::from(&e))?
        .ok_or_else(|| unknown(&thread))?;
    Ok(Json(Versioned::new(WireThread::new(&id, &checkpoint))).into_response())
}

/// Deletes every checkpoint of the thread: 204, or 404 if it had none.
pub(crate) async fn delete(
    State(state): State<AppState>,
    Path((name, thread)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let agent = state.agent(&name)?;
    let deleted = agent
        .delete_thread(&thread)
        .await
        .map_err(|e| ApiError::from(&e))?;
    if deleted {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(unknown(&thread))
    }
}

fn unknown(thread: &str) -> ApiError {
    ApiError::not_found("unknown_thread", format!("no thread `{thread}`"))
}
