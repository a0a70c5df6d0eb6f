//! The per-call timeout: a slow call is a model-visible timeout, and the server stays usable.

use std::time::{Duration, Instant};

use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, ToolErrorKind};

use crate::support::{self, tool_result};

#[tokio::test]
async fn a_call_slower_than_the_call_timeout_is_a_timeout_tool_error() {
    let model = ScriptedModel::new([
        Turn::call("c1", "slow", json!({"seconds": 30})),
        Turn::call("c2", "add", json!({"a": 20, "b": 22})),
        Turn::text("done"),
    ]);
    let set = support::toolbox()
        .call_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap();
    let agent = Agent::builder(model.clone()).tool_set(set).build().unwrap();

    let started = Instant::now();
    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    let timed_out = &result.tool_records[0];
    let error = timed_out.error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Timeout);
    assert!(error.message().contains("`slow`"), "{error}");
    assert!(
        timed_out.latency < Duration::from_secs(5),
        "{:?}",
        timed_out.latency
    );
    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(
        is_error && content.starts_with("error (timeout)"),
        "{content}"
    );
    // The connection survived the timeout: the next call is answered.
    assert_eq!(result.tool_records[1].content, "42");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn the_call_timeout_bounds_streamed_calls_too() {
    let set = support::everything()
        .call_timeout(Duration::from_millis(700))
        .include(["trigger-long-running-operation"])
        .connect()
        .await
        .unwrap();
    let model = ScriptedModel::new([
        Turn::call(
            "c1",
            "trigger-long-running-operation",
            json!({"duration": 30, "steps": 30}),
        ),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model).tool_set(set).build().unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Timeout);
}

#[tokio::test]
async fn a_run_dropped_during_a_call_leaves_the_connection_usable() {
    let set = support::toolbox().connect().await.unwrap();
    let tools = set.clone().into_tools().unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "slow", json!({"seconds": 30})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model).tool_set(set).build().unwrap();

    let dropped = tokio::time::timeout(
        Duration::from_millis(500),
        agent.run(AgentRequest::user("go")).result(),
    )
    .await;
    assert!(dropped.is_err(), "the run finished: {dropped:?}");

    let started = Instant::now();
    let output = support::tool(&tools, "add")
        .invoke(tower_adk::ToolRequest::new(
            "c2",
            "add",
            json!({"a": 1, "b": 2}),
        ))
        .await
        .unwrap();
    assert_eq!(output.content, "3");
    assert!(started.elapsed() < Duration::from_secs(5));
}
