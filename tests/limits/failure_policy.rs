use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::sync::Notify;
use tower_adk::testing::{ScriptedModel, Turn, failing_tool};
use tower_adk::{Agent, AgentError, AgentRequest, Message, RunStatus, Tool, ToolFailurePolicy};
use tower_adk::{ToolErrorKind, ToolInfo, ToolOutput};

use crate::counting_tool;

fn script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call("c1", "broken", json!({})).with_call("c2", "fine", json!({})),
        Turn::text("I worked around it."),
    ])
}

#[tokio::test]
async fn by_default_a_failed_tool_is_reported_to_the_model_and_the_run_goes_on() {
    let fine = Arc::new(AtomicUsize::new(0));
    let model = script();
    let agent = Agent::builder(model.clone())
        .tool(failing_tool("broken", "disk full"))
        .tool(counting_tool("fine", &fine))
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(result.final_message.content(), "I worked around it.");
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn end_degraded_finishes_the_turn_then_ends_with_the_failed_result() {
    let fine = Arc::new(AtomicUsize::new(0));
    let model = script();
    let agent = Agent::builder(model.clone())
        .tool(failing_tool("broken", "disk full"))
        .tool(counting_tool("fine", &fine))
        .on_tool_failure(ToolFailurePolicy::EndDegraded)
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(result.status, RunStatus::Degraded);
    assert_eq!(
        fine.load(Ordering::SeqCst),
        1,
        "the turn's other call still ran"
    );
    assert_eq!(model.calls(), 1, "the model is not called again");
    let Message::Tool {
        call_id,
        is_error,
        content,
        ..
    } = &result.final_message
    else {
        panic!("{:?}", result.final_message)
    };
    assert_eq!(call_id, "c1");
    assert!(is_error);
    assert!(content.contains("disk full"), "{content}");
    assert_eq!(result.tool_records.len(), 2);
}

#[tokio::test]
async fn fail_run_stops_at_the_first_failure_and_cancels_the_calls_in_flight() {
    struct Dropped(Arc<AtomicBool>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let (dropped, finished) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let started = Arc::new(Notify::new());
    let (d, f, s) = (
        Arc::clone(&dropped),
        Arc::clone(&finished),
        Arc::clone(&started),
    );
    let slow = Tool::from_fn(ToolInfo::new("fine", "slow"), move |_| {
        let (guard, finished, started) = (Dropped(Arc::clone(&d)), Arc::clone(&f), Arc::clone(&s));
        async move {
            let _guard = guard;
            started.notify_one();
            std::future::pending::<()>().await;
            finished.store(true, Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>(ToolOutput::new("never"))
        }
    });
    // Fails once the slow call is under way, so there is something in flight to cancel.
    let broken = Tool::from_fn(ToolInfo::new("broken", "fails"), move |_| {
        let started = Arc::clone(&started);
        async move {
            started.notified().await;
            Err::<ToolOutput, _>("disk full")
        }
    });
    let model = script();
    let agent = Agent::builder(model.clone())
        .tool(broken)
        .tool(slow)
        .on_tool_failure(ToolFailurePolicy::FailRun)
        .build()
        .unwrap();

    let outcome =
        tokio::time::timeout(Duration::from_secs(60), agent.run(AgentRequest::user("go"))).await;
    let error = outcome.expect("the run ends at the failure").unwrap_err();

    let AgentError::ToolFailed(record) = &error else {
        panic!("{error}")
    };
    assert_eq!(record.name, "broken");
    assert_eq!(record.error.as_ref().unwrap().kind(), ToolErrorKind::Failed);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the slow call was cancelled"
    );
    assert!(!finished.load(Ordering::SeqCst));
    assert_eq!(model.calls(), 1);
}
