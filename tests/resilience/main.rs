//! Timeouts and retries of tool calls (`ToolTimeout`, `ToolRetry`), on tokio's paused
//! clock: no test waits in real time, and times are asserted exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod retries;
#[path = "../support/mod.rs"]
mod support;
mod timeouts;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use support::tool_result;
use tokio::time::Instant;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, AgentResult, Tool};

/// Records the (virtual) time at which it is dropped: put it inside a tool's future or
/// stream to see when the tool was cancelled.
#[derive(Debug)]
struct DropGuard(Arc<Mutex<Option<Instant>>>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = Some(Instant::now());
    }
}

/// Where a [`DropGuard`] reports.
#[derive(Clone, Debug, Default)]
struct Dropped(Arc<Mutex<Option<Instant>>>);

impl Dropped {
    fn guard(&self) -> DropGuard {
        DropGuard(Arc::clone(&self.0))
    }

    /// When the guard was dropped, if it was.
    fn at(&self) -> Option<Instant> {
        *self.0.lock().unwrap()
    }
}

/// The (virtual) times at which a tool was called, one per attempt.
#[derive(Clone, Debug, Default)]
struct Attempts(Arc<Mutex<Vec<Instant>>>);

impl Attempts {
    /// Records an attempt now and returns its number, from 1.
    fn record(&self) -> usize {
        let mut times = self.0.lock().unwrap();
        times.push(Instant::now());
        times.len()
    }

    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// The attempts' times, relative to `start`.
    fn offsets(&self, start: Instant) -> Vec<Duration> {
        self.0.lock().unwrap().iter().map(|t| *t - start).collect()
    }
}

/// Runs one turn that calls `tool` (as `c1`) under `handlers`, then the model's answer;
/// returns the model, the run's events and its result.
async fn run_one(
    tool: Tool,
    handlers: Vec<tower_adk::BoxHandler>,
) -> (ScriptedModel, Vec<AgentEvent>, AgentResult) {
    let name = tool.name().to_owned();
    let model = ScriptedModel::new([
        Turn::call("c1", name, serde_json::json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();
    let mut request = AgentRequest::user("go");
    request.handlers_mut().extend(handlers);
    let mut run = agent.run(request);
    let mut events = Vec::new();
    // On the paused clock a run that never ends fails here at once instead of hanging.
    let read = async {
        while let Some(event) = run.next().await {
            events.push(event.unwrap());
        }
    };
    tokio::time::timeout(Duration::from_secs(24 * 3600), read)
        .await
        .expect("the run did not end within a virtual day");
    let result = match events.last() {
        Some(AgentEvent::Completed(result)) => result.clone(),
        other => panic!("the run must complete, got {other:?}"),
    };
    (model, events, *result)
}

/// The output chunks of the run's tool calls, in order.
fn chunks_of(events: &[AgentEvent]) -> Vec<&str> {
    events.iter().filter_map(AgentEvent::output_chunk).collect()
}

#[test]
fn the_handlers_and_policy_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<tower_adk::handlers::ToolTimeout>();
    assert_send_sync::<tower_adk::handlers::Timeouts>();
    assert_send_sync::<tower_adk::handlers::ToolRetry>();
    assert_send_sync::<tower_adk::handlers::RetryPolicy>();
}
