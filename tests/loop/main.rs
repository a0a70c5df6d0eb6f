//! The ReAct loop through the public API: iterations, parallel tool calls, return-directly,
//! cancellation, the order of results, and model failures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cancel;
mod errors;
mod executor;
mod finish;
mod iterations;
mod parallel;
mod results;
mod return_directly;
mod run_timeout;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tower_adk::{BoxError, Message, Tool, ToolCall, ToolInfo, ToolOutput, ToolRequest};

/// `n` calls of `tool`, with ids `c0`, `c1`, ...
fn calls_of(tool: &str, n: usize) -> Vec<ToolCall> {
    (0..n)
        .map(|i| ToolCall::new(format!("c{i}"), tool, serde_json::json!({})))
        .collect()
}

/// The tool results of a history, as `(call id, content, is_error)`.
fn tool_results(messages: &[Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter_map(|m| {
            Some((
                m.tool_call_id()?.to_owned(),
                m.content().to_owned(),
                m.is_error(),
            ))
        })
        .collect()
}

/// Lets every other task of the (current-thread) test runtime run until none of them can
/// make progress without the test.
///
/// The runs in these tests wait only on semaphores, channels and `Notify`s that the test
/// controls, never on the clock, so a bounded number of yields reaches the same state
/// on every machine.
async fn settle() {
    for _ in 0..64 {
        tokio::task::yield_now().await;
    }
}

/// Tools that finish in a fixed order (their rank), whatever order they start in: each
/// waits for the tool ranked before it to finish. The order is set by the tools, not by
/// the clock.
#[derive(Debug)]
struct Relay {
    turn: tokio::sync::watch::Sender<usize>,
    calls: AtomicUsize,
}

impl Relay {
    fn new() -> Arc<Self> {
        Arc::new(Relay {
            turn: tokio::sync::watch::Sender::new(0),
            calls: AtomicUsize::new(0),
        })
    }

    /// A tool that answers `output` once the tools ranked before it have finished.
    fn tool(self: &Arc<Self>, name: &str, rank: usize, output: &str) -> Tool {
        let relay = Arc::clone(self);
        let output = output.to_owned();
        Tool::from_fn(ToolInfo::new(name, "Finishes in turn."), move |_| {
            relay.calls.fetch_add(1, Ordering::SeqCst);
            let relay = Arc::clone(&relay);
            let output = output.clone();
            async move {
                relay
                    .turn
                    .subscribe()
                    .wait_for(|turn| *turn == rank)
                    .await?;
                relay.turn.send_modify(|turn| *turn += 1);
                Ok::<_, BoxError>(ToolOutput::new(output))
            }
        })
    }

    /// How many calls the relay's tools received.
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

/// Tool calls that wait until the test lets them finish, counting how many are in flight.
#[derive(Debug)]
struct Gate {
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    started: AtomicUsize,
    finished: AtomicUsize,
    permits: tokio::sync::Semaphore,
}

impl Gate {
    fn new() -> Arc<Self> {
        Arc::new(Gate {
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            permits: tokio::sync::Semaphore::new(0),
        })
    }

    /// A tool whose calls enter the gate, wait for a permit, and answer with their call id.
    fn tool(self: &Arc<Self>, name: &str) -> Tool {
        let gate = Arc::clone(self);
        Tool::from_fn(
            ToolInfo::new(name, "Waits for the test."),
            move |req: ToolRequest| {
                let gate = Arc::clone(&gate);
                async move {
                    let now = gate.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    gate.max_in_flight.fetch_max(now, Ordering::SeqCst);
                    gate.started.fetch_add(1, Ordering::SeqCst);
                    gate.permits.acquire().await?.forget();
                    gate.in_flight.fetch_sub(1, Ordering::SeqCst);
                    gate.finished.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, BoxError>(ToolOutput::new(req.call_id))
                }
            },
        )
    }

    fn release(&self, n: usize) {
        self.permits.add_permits(n);
    }

    fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    fn finished(&self) -> usize {
        self.finished.load(Ordering::SeqCst)
    }
}
