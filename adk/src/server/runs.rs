//! `POST /agents/{name}/runs` (a run as JSON, or streamed as SSE) and
//! `GET /agents/{name}/runs/{run_id}/events` (a streamed run's events again).

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::header::ACCEPT;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

use super::body::RunBody;
use super::error::ApiError;
use super::extract::{Body, Path};
use super::identity::Caller;
use super::log::{Batch, Clock};
use super::sse;
use super::state::AppState;
use super::streamed_run::StreamedRun;
use super::{RUN_ID_HEADER, ServedAgent};
use crate::agent::{AgentError, AgentRequest};
use crate::auth::Decided;
use crate::interrupt::Decision;
use crate::wire::{WireEvent, WireResult};

/// Starts a run: streamed when the client accepts `text/event-stream`, else awaited.
pub(crate) async fn start(
    State(state): State<AppState>,
    Path(name): Path<String>,
    axum::Extension(caller): axum::Extension<Caller>,
    AcceptsSse(sse): AcceptsSse,
    Body(body): Body,
) -> Result<Response, ApiError> {
    let served = state.served(&name)?;
    let request = RunBody::parse(&body)?.into_request()?;
    let request = request.with_identity(caller.0);
    if sse {
        stream(&state, &name, served, request).await
    } else {
        let run = state.start(served, request).await?;
        let result = run.result().await.map_err(|e| ApiError::from(&e))?;
        Ok(Json(WireEvent::Completed(WireResult::from_result(result))).into_response())
    }
}

/// Whether the client's `Accept` takes `text/event-stream` (read in place: the
/// `HeaderMap` extractor would copy every header).
pub(crate) struct AcceptsSse(bool);

impl<S: Send + Sync> FromRequestParts<S> for AcceptsSse {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        let accept = parts.headers.get(ACCEPT).and_then(|v| v.to_str().ok());
        let sse = accept.is_some_and(|accept| accept.contains("text/event-stream"));
        Ok(AcceptsSse(sse))
    }
}

/// Streams a run once its first event is in, so that a run refused at its start (a busy
/// thread, a used checkpoint, decisions that do not fit) is answered with its status. A
/// resume's decisions follow `run_started`, each with who made them (the caller).
async fn stream(
    state: &AppState,
    name: &str,
    served: &ServedAgent,
    request: AgentRequest,
) -> Result<Response, ApiError> {
    let (thread, owner) = (request.thread().map(str::to_owned), request.principal());
    let decided = decided(&request);
    let clock = Clock::start();
    let mut run = state.start(served, request).await?;
    let first = match run.next().await {
        Some(Ok(event)) => event,
        Some(Err(error)) => return Err(ApiError::from(&error)),
        None => return Err(ApiError::from(&AgentError::Incomplete)),
    };
    let log = state.logs.open(name, owner, clock);
    let started = WireEvent::RunStarted {
        run_id: log.id.as_str().to_owned(),
        agent: name.to_owned(),
        thread,
    };
    // `run_started` and the decisions at the time the run started, then its first event.
    let mut batch = Batch::with_capacity(FIRST_CHUNK);
    for event in std::iter::once(&started).chain(&decided) {
        log.write(event, clock.started(), &mut batch);
    }
    log.write(&WireEvent::from_event(first), log.now(), &mut batch);
    let run_id = run_id_header(log.id.as_str());
    Ok(sse::response(StreamedRun::new(log, batch, run), run_id))
}

/// Room for the first chunk of a streamed run's events, which most runs fill with
/// all of theirs when they do not wait (the bench's 11 events are 2 KB).
const FIRST_CHUNK: usize = 4096;

/// The decisions a resume carries, made by its caller now.
fn decided(request: &AgentRequest) -> Vec<WireEvent> {
    let Some(decisions) = request.resume_decisions() else {
        return Vec::new();
    };
    let by = request.principal();
    let decided = |(interrupt, decision): (&String, &Decision)| {
        WireEvent::Decided(Decided::now(
            interrupt.clone(),
            decision.clone(),
            by.clone(),
        ))
    };
    decisions.iter().map(decided).collect()
}

/// Replays a streamed run's events after `Last-Event-ID`, then follows it until it ends.
pub(crate) async fn events(
    State(state): State<AppState>,
    Path((name, run_id)): Path<(String, String)>,
    axum::Extension(caller): axum::Extension<Caller>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    state.agent(&name)?;
    // Another caller's run is unknown to this one.
    let caller = caller.0.principal();
    let log = (state.logs.get(&run_id)).filter(|log| *log.agent == *name && log.owner == *caller);
    let log = log.ok_or_else(|| {
        ApiError::not_found("unknown_run", format!("no streamed run `{run_id}` is kept"))
    })?;
    let after = last_event_id(&headers)?;
    let run_id = run_id_header(log.id.as_str());
    Ok(sse::response(Arc::clone(&log).follow(after), run_id))
}

fn last_event_id(headers: &HeaderMap) -> Result<u64, ApiError> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(0);
    };
    let value = value.to_str().ok().and_then(|v| v.trim().parse().ok());
    value.ok_or_else(|| {
        ApiError::bad_request("invalid_last_event_id", "Last-Event-ID is not an event id")
    })
}

/// The `adk-run-id` header.
fn run_id_header(run_id: &str) -> (HeaderName, HeaderValue) {
    let value = HeaderValue::from_str(run_id).unwrap_or(HeaderValue::from_static(""));
    (HeaderName::from_static(RUN_ID_HEADER), value)
}
