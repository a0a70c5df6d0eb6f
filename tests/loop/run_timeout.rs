//! A whole-run deadline cancels everything in flight and ends the run with a typed error.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn, sleep_tool};
use tower_adk::{Agent, AgentError, AgentRequest, Tool, ToolInfo, ToolOutput};

struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn the_run_timeout_cancels_a_slow_tool_and_fails_the_run() {
    let (dropped, finished) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (d, f) = (Arc::clone(&dropped), Arc::clone(&finished));
    let slow = Tool::from_fn(ToolInfo::new("slow", "takes an hour"), move |_| {
        let (guard, finished) = (Dropped(Arc::clone(&d)), Arc::clone(&f));
        async move {
            let _guard = guard;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            finished.store(true, Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>(ToolOutput::new("done"))
        }
    });
    let model = ScriptedModel::new([Turn::call("c1", "slow", json!({})), Turn::text("never")]);
    let agent = Agent::builder(model.clone())
        .tool(slow)
        .run_timeout(Duration::from_secs(30))
        .build()
        .unwrap();

    let started = tokio::time::Instant::now();
    let error = agent.run(AgentRequest::user("go")).await.unwrap_err();

    assert!(
        matches!(error, AgentError::Timeout { limit } if limit == Duration::from_secs(30)),
        "{error}"
    );
    assert!(error.is_timeout());
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(30),
        "the deadline, not the tool, ended it"
    );
    assert!(dropped.load(Ordering::SeqCst), "the tool was cancelled");
    assert!(!finished.load(Ordering::SeqCst));
    assert_eq!(model.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_run_that_finishes_in_time_is_not_affected_by_its_timeout() {
    let model = ScriptedModel::new([Turn::call("c1", "nap", json!({})), Turn::text("rested")]);
    let agent = Agent::builder(model)
        .tool(sleep_tool("nap", Duration::from_secs(5), "ok"))
        .run_timeout(Duration::from_secs(30))
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(result.final_message.content(), "rested");
}
