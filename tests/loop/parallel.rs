//! How many tool calls of one turn run at the same time.
//!
//! The tools wait on a semaphore the test releases one permit at a time; the run is
//! spawned on the test's current-thread runtime, and `settle()` lets it go as far as it
//! can before each check. No assertion depends on wall-clock time.

use futures::FutureExt;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, AgentResult};

use crate::{Gate, calls_of, settle};

/// Runs one turn of `calls` gated calls, releasing them one at a time, and checks before
/// every release that exactly `min(remaining, cap)` calls are in flight.
async fn run_gated(calls: usize, cap: Option<usize>) -> (std::sync::Arc<Gate>, AgentResult) {
    let gate = Gate::new();
    let model = ScriptedModel::new([Turn::calls(calls_of("gated", calls)), Turn::text("done")]);
    let mut builder = Agent::builder(model).tool(gate.tool("gated"));
    if let Some(cap) = cap {
        builder = builder.parallel_tool_calls(cap);
    }
    let agent = builder.build().unwrap();
    let run = tokio::spawn(agent.run(AgentRequest::user("go")).into_future());

    let limit = cap.unwrap_or(calls);
    for remaining in (1..=calls).rev() {
        settle().await;
        assert_eq!(
            gate.in_flight(),
            remaining.min(limit),
            "in flight with {remaining} calls left"
        );
        assert_eq!(gate.started(), calls - remaining + remaining.min(limit));
        gate.release(1);
    }
    let result = run.await.unwrap().unwrap();
    (gate, result)
}

#[tokio::test]
async fn parallel_tool_calls_never_exceed_the_cap_and_reach_it() {
    let (gate, result) = run_gated(5, Some(2)).await;

    assert_eq!(gate.max_in_flight(), 2);
    assert_eq!(gate.finished(), 5);
    assert_eq!(result.tool_records.len(), 5);
}

#[tokio::test]
async fn a_cap_of_one_runs_the_calls_one_after_another() {
    let (gate, result) = run_gated(4, Some(1)).await;

    assert_eq!(gate.max_in_flight(), 1);
    assert_eq!(result.tool_records.len(), 4);
}

#[tokio::test]
async fn without_a_cap_all_calls_of_a_turn_run_concurrently() {
    let (gate, result) = run_gated(6, None).await;

    assert_eq!(gate.max_in_flight(), 6);
    assert_eq!(result.tool_records.len(), 6);
}

/// Small turns (up to 8 calls) and big ones are merged by different code; both keep the cap.
#[tokio::test]
async fn a_big_turn_keeps_the_cap_too() {
    let (gate, result) = run_gated(12, Some(5)).await;
    assert_eq!(gate.max_in_flight(), 5);
    assert_eq!(result.tool_records.len(), 12);

    let (gate, result) = run_gated(10, None).await;
    assert_eq!(gate.max_in_flight(), 10);
    assert_eq!(result.tool_records.len(), 10);
}

#[tokio::test]
async fn the_run_waits_for_every_call_of_the_turn_before_calling_the_model_again() {
    let gate = Gate::new();
    let model = ScriptedModel::new([Turn::calls(calls_of("gated", 3)), Turn::text("done")]);
    let agent = Agent::builder(model.clone())
        .tool(gate.tool("gated"))
        .build()
        .unwrap();
    let mut run = tokio::spawn(agent.run(AgentRequest::user("go")).into_future());

    settle().await;
    gate.release(2);
    settle().await;
    assert_eq!(gate.finished(), 2);
    assert_eq!(model.calls(), 1, "one call is still running");
    assert!((&mut run).now_or_never().is_none());

    gate.release(1);
    let result = run.await.unwrap().unwrap();
    assert_eq!(model.calls(), 2);
    assert_eq!(result.final_message.content(), "done");
}

/// The events of a turn of three `echo` calls under a cap of one: each call's start and
/// result, in order.
async fn starts_and_results(echo: tower_adk::Tool) -> Vec<String> {
    use futures::StreamExt;
    use tower_adk::AgentEvent;

    let model = ScriptedModel::new([Turn::calls(calls_of("echo", 3)), Turn::text("done")]);
    let agent = Agent::builder(model)
        .tool(echo)
        .parallel_tool_calls(1)
        .build()
        .unwrap();
    let mut run = agent.run(AgentRequest::user("go"));
    let mut seen = Vec::new();
    while let Some(event) = run.next().await {
        match event.unwrap() {
            AgentEvent::ToolCallStarted { call_id, .. } => seen.push(format!("start {call_id}")),
            AgentEvent::ToolResult(record) => seen.push(format!("result {}", record.call_id)),
            _ => {}
        }
    }
    seen
}

/// Under a cap, a call's start event comes when the call starts, not when the turn does:
/// with one call at a time, each call's start follows the previous call's result, for
/// whole and streamed calls alike.
#[tokio::test]
async fn under_a_cap_each_call_announces_its_start_when_it_starts() {
    use tower_adk::{Tool, ToolInfo, ToolOutput, ToolRequest};

    let whole = Tool::from_fn(
        ToolInfo::new("echo", "echoes"),
        |req: ToolRequest| async move {
            Ok::<_, std::convert::Infallible>(ToolOutput::new(req.call_id.clone()))
        },
    );
    let streamed = Tool::stream_fn(ToolInfo::new("echo", "echoes"), |req: ToolRequest| {
        futures::stream::iter([Ok::<_, std::convert::Infallible>(req.call_id)])
    });
    let expected = [
        "start c0",
        "result c0",
        "start c1",
        "result c1",
        "start c2",
        "result c2",
    ];
    assert_eq!(starts_and_results(whole).await, expected);
    assert_eq!(starts_and_results(streamed).await, expected);
}
