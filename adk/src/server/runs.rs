//! `POST /agents/{name}/runs` (a run as JSON, or streamed as SSE) and
//! `GET /agents/{name}/runs/{run_id}/events` (a streamed run's events again).

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::ACCEPT;
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};

use super::body::RunBody;
use super::error::ApiError;
use super::extract::{Body, Path};
use super::identity::Caller;
use super::log::{Clock, Logged, RunLog};
use super::served_run::ServedRun;
use super::state::AppState;
use super::{RUN_ID_HEADER, ServedAgent};
use crate::agent::{AgentError, AgentEvent, AgentRequest};
use crate::auth::Decided;
use crate::interrupt::Decision;
use crate::wire::WireEvent;

/// Starts a run: streamed when the client accepts `text/event-stream`, else awaited.
pub(crate) async fn start(
    State(state): State<AppState>,
    Path(name): Path<String>,
    axum::Extension(caller): axum::Extension<Caller>,
    headers: HeaderMap,
    Body(body): Body,
) -> Result<Response, ApiError> {
    let served = state.served(&name)?;
    let request = RunBody::parse(&body)?.into_request()?;
    let request = request.with_identity(caller.0);
    if accepts_sse(&headers) {
        stream(&state, &name, served, request).await
    } else {
        let run = state.start(served, request).await?;
        let result = run.result().await.map_err(|e| ApiError::from(&e))?;
        Ok(Json(WireEvent::Completed((&result).into())).into_response())
    }
}

fn accepts_sse(headers: &HeaderMap) -> bool {
    let accept = headers.get(ACCEPT).and_then(|v| v.to_str().ok());
    accept.is_some_and(|accept| accept.contains("text/event-stream"))
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
        run_id: log.id.to_string(),
        agent: name.to_owned(),
        thread,
    };
    let events = logged(
        Arc::clone(&log),
        clock.started_ms(),
        started,
        decided,
        first,
        run,
    );
    Ok(sse(&log.id, events))
}

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

/// The run's events, each logged as it is sent (`run_started` and the decisions at the
/// time the run started). Dropping the stream (the client went away) drops the run,
/// which cancels what it was doing, and ends the log.
fn logged(
    log: Arc<RunLog>,
    started_ms: f64,
    started: WireEvent,
    decided: Vec<WireEvent>,
    first: AgentEvent,
    mut run: ServedRun,
) -> impl Stream<Item = Logged> {
    async_stream::stream! {
        let _cancel = CancelOnDrop(Arc::clone(&log));
        yield log.push_at(&started, started_ms);
        for decided in &decided {
            yield log.push_at(decided, started_ms);
        }
        yield log.push(&WireEvent::from(&first));
        while let Some(event) = run.next().await {
            yield log.push(&match &event {
                Ok(event) => WireEvent::from(event),
                Err(error) => WireEvent::from(error),
            });
        }
    }
}

/// Ends the log of a run whose stream is dropped before the run ended.
struct CancelOnDrop(Arc<RunLog>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
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
    Ok(sse(&log.id, Arc::clone(&log).follow(after)))
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

fn sse(run_id: &str, events: impl Stream<Item = Logged> + Send + 'static) -> Response {
    let events = events.map(|event| Ok::<_, Infallible>(event.to_sse()));
    let header = [(RUN_ID_HEADER, run_id.to_owned())];
    (header, Sse::new(events).keep_alive(KeepAlive::default())).into_response()
}
