//! Stock tower middleware around tools and models, unchanged.
//!
//! - Around every tool call of a run: tower's `ConcurrencyLimitLayer` (at most 2 tool
//!   calls at once) and `TimeoutLayer` (a call that takes over 300 ms is cut off and the
//!   model is told it timed out), applied with one handler.
//! - Around one tool: a tighter timeout with `Tool::layer`.
//! - Around the model: tower's `RetryLayer` with a small policy, applied to the model
//!   service before the agent gets it; the model here fails its first call.
//!
//! ```text
//! cargo run --example tower_middleware
//! ```

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tower::retry::{Policy, RetryLayer};
use tower::timeout::TimeoutLayer;
use tower::{BoxError, ServiceBuilder, ServiceExt};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, ModelRequest, ModelResponse, Tool, ToolInfo, ToolOutput, handlers,
};

/// Retries a failed model call up to `attempts` more times.
#[derive(Clone)]
struct RetryModelErrors {
    attempts: usize,
}

impl Policy<ModelRequest, ModelResponse, BoxError> for RetryModelErrors {
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        _: &mut ModelRequest,
        result: &mut Result<ModelResponse, BoxError>,
    ) -> Option<Self::Future> {
        match result {
            Err(error) if self.attempts > 0 => {
                println!("  [retry] model failed ({error}); retrying");
                self.attempts -= 1;
                Some(std::future::ready(()))
            }
            _ => None,
        }
    }

    fn clone_request(&mut self, req: &ModelRequest) -> Option<ModelRequest> {
        Some(req.clone())
    }
}

/// A tool that takes `ms` milliseconds and reports the peak of concurrent calls.
fn slow_tool(name: &str, ms: u64, in_flight: Arc<AtomicUsize>, peak: Arc<AtomicUsize>) -> Tool {
    Tool::from_fn(ToolInfo::new(name, "A slow lookup"), move |_| {
        let (in_flight, peak) = (Arc::clone(&in_flight), Arc::clone(&peak));
        async move {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            // Counts the call out even when a timeout cancels it mid-way.
            let _done = InFlight(in_flight);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, std::convert::Infallible>(ToolOutput::new(format!("{ms} ms of work")))
        }
    })
}

struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (in_flight, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let calls = (0..5)
        .map(|i| ("lookup", i))
        .chain([("very_slow", 5), ("flaky_fast", 6)]);
    let mut first = Turn::text("Looking things up.");
    for (name, i) in calls {
        first = first.with_call(format!("c{i}"), name, json!({}));
    }
    let script = ScriptedModel::new([
        Turn::error("503 Service Unavailable"),
        first,
        Turn::text("Five lookups done; the slow one timed out, and so did the flaky one."),
    ]);

    // Stock middleware around the model: retry, then (inside) a timeout per attempt.
    let model = ServiceBuilder::new()
        .layer(RetryLayer::new(RetryModelErrors { attempts: 2 }))
        .layer(TimeoutLayer::new(Duration::from_secs(30)))
        .service(script.clone());

    let agent = Agent::builder(model)
        .tool(slow_tool(
            "lookup",
            100,
            Arc::clone(&in_flight),
            Arc::clone(&peak),
        ))
        .tool(slow_tool(
            "very_slow",
            2_000,
            Arc::clone(&in_flight),
            Arc::clone(&peak),
        ))
        // A tighter limit for this tool only.
        .tool(
            slow_tool("flaky_fast", 500, Arc::clone(&in_flight), Arc::clone(&peak))
                .layer(TimeoutLayer::new(Duration::from_millis(50))),
        )
        .build()?;

    // Stock middleware around every tool call of the run, as one handler.
    let guard = handlers::tool_layer(
        ServiceBuilder::new()
            .concurrency_limit(2)
            .timeout(Duration::from_millis(300)),
    );

    let mut run = agent
        .oneshot(AgentRequest::user("Look everything up.").with_handler(guard))
        .await?;
    while let Some(event) = run.next().await {
        if common::print_event(&event?) {
            break;
        }
    }
    println!(
        "model calls: {} (one failed and was retried)",
        script.calls()
    );
    println!(
        "peak concurrent tool calls: {} (limit 2)",
        peak.load(Ordering::SeqCst)
    );
    Ok(())
}
