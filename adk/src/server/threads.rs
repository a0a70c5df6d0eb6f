//! `GET /agents/{name}/threads` (the caller's threads) and `GET` and `DELETE
//! /agents/{name}/threads/{thread}` (one of them), each as the agent's
//! [`Authorize`](crate::auth::Authorize) allows: a thread the caller may not read or
//! delete is unknown to them.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::extract::{Path, Query};
use super::identity::Caller;
use super::state::AppState;
use crate::agent::check_thread;
use crate::checkpoint::ThreadEntry;
use crate::wire::{Versioned, WireThread};

/// The most threads a page lists; a page asks for fewer with `limit`.
const MOST: usize = 100;

/// Where the thread stands: its newest checkpoint (see [`WireThread`]).
pub(crate) async fn show(
    State(state): State<AppState>,
    Path((name, thread)): Path<(String, String)>,
    axum::Extension(caller): axum::Extension<Caller>,
) -> Result<Response, ApiError> {
    let agent = state.agent(&name)?;
    check_thread(&thread)?;
    let last = agent.thread_for(&caller.0, &thread).await;
    let (id, checkpoint) = last
        .map_err(ApiError::from)?
        .ok_or_else(|| unknown(&thread))?;
    let thread = WireThread::new(&id, &checkpoint).priced(agent.prices());
    Ok(Json(Versioned::new(thread)).into_response())
}

/// Deletes every checkpoint of the thread: 204, or 404 if it had none, or if the caller
/// may not delete it.
pub(crate) async fn delete(
    State(state): State<AppState>,
    Path((name, thread)): Path<(String, String)>,
    axum::Extension(caller): axum::Extension<Caller>,
) -> Result<Response, ApiError> {
    let agent = state.agent(&name)?;
    check_thread(&thread)?;
    let deleted = agent.delete_thread_for(&caller.0, &thread).await;
    if deleted.map_err(ApiError::from)? {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(unknown(&thread))
    }
}

/// A page of the caller's threads: `?limit=N` (default and at most 100) and `?after=`
/// the page before's `next`.
#[derive(Debug, Deserialize)]
pub(crate) struct Page {
    limit: Option<usize>,
    after: Option<String>,
}

/// A page of the caller's threads, newest first.
#[derive(Debug, Serialize)]
struct Listing {
    threads: Vec<Listed>,
    /// What `after` asks for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

/// One thread of a listing.
#[derive(Debug, Serialize)]
struct Listed {
    thread: String,
    /// The version of its newest checkpoint.
    version: u64,
    /// When that checkpoint was written (RFC 3339).
    written: String,
}

/// The caller's threads, the most recently written first, a page at a time.
pub(crate) async fn list(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(page): Query<Page>,
    axum::Extension(caller): axum::Extension<Caller>,
) -> Result<Response, ApiError> {
    let agent = state.agent(&name)?;
    let limit = page.limit.unwrap_or(MOST).clamp(1, MOST);
    let after = page.after.as_deref().map(read_cursor).transpose()?;
    // One more than asked says whether there is a next page.
    let mut threads = agent
        .threads_for(&caller.0, after.as_ref(), limit + 1)
        .await;
    let threads = threads.as_mut().map_err(|e| ApiError::from(&*e))?;
    let next = (threads.len() > limit).then(|| {
        threads.truncate(limit);
        threads.last().map(cursor)
    });
    let listing = Listing {
        threads: threads.iter().map(listed).collect(),
        next: next.flatten(),
    };
    Ok(Json(Versioned::new(listing)).into_response())
}

fn listed(entry: &ThreadEntry) -> Listed {
    let millis = i64::try_from(entry.written).unwrap_or(i64::MAX);
    let written = jiff::Timestamp::from_millisecond(millis).unwrap_or_default();
    Listed {
        thread: entry.thread.clone(),
        version: entry.version,
        written: written.to_string(),
    }
}

/// A page's cursor: the last entry's time, `.`, its version, `.`, its thread.
fn cursor(entry: &ThreadEntry) -> String {
    format!("{}.{}.{}", entry.written, entry.version, entry.thread)
}

fn read_cursor(text: &str) -> Result<ThreadEntry, ApiError> {
    let invalid = || ApiError::bad_request("invalid_cursor", "`after` is not a page's `next`");
    let (written, rest) = text.split_once('.').ok_or_else(invalid)?;
    let (version, thread) = rest.split_once('.').ok_or_else(invalid)?;
    let written = written.parse().map_err(|_| invalid())?;
    let version = version.parse().map_err(|_| invalid())?;
    Ok(ThreadEntry::new(thread, version, written))
}

fn unknown(thread: &str) -> ApiError {
    ApiError::not_found("unknown_thread", format!("no thread `{thread}`"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_its_entry() {
        let entry = ThreadEntry::new("a.b.c", 7, 1_700_000_000_123);
        assert_eq!(read_cursor(&cursor(&entry)).unwrap(), entry);
        for bad in ["", "12", "12.x.t", "x.1.t", "1.2"] {
            assert!(read_cursor(bad).is_err(), "{bad}");
        }
    }
}
