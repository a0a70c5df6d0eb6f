//! Tool failures become tool results the model sees, and the run goes on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn, failing_tool, panicking_tool};
use tower_adk::{Agent, AgentRequest, AgentResult, Tool, ToolCall, ToolErrorKind};

use crate::{counting_echo, tool_result};

/// Runs one turn that makes `call` against `tool`, then the model's final answer.
async fn run_one(tool: Tool, call: ToolCall) -> (ScriptedModel, AgentResult) {
    let model = ScriptedModel::new([Turn::calls([call]), Turn::text("I see, sorry.")]);
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();
    let result = agent.run(AgentRequest::user("go")).await.unwrap();
    (model, result)
}

/// Checks the common shape: one failed record of `kind`, a model-visible error result
/// containing `text`, and the run reached the model's answer.
fn assert_model_saw_failure(
    model: &ScriptedModel,
    result: &AgentResult,
    kind: ToolErrorKind,
    text: &str,
) {
    assert_eq!(result.final_message.content(), "I see, sorry.");
    assert_eq!(model.calls(), 2);

    let [record] = &result.tool_records[..] else {
        panic!("one record expected: {:?}", result.tool_records);
    };
    assert!(!record.is_success());
    let error = record.error.as_ref().unwrap();
    assert_eq!(error.kind(), kind);
    assert!(record.content.contains(text), "{record:?}");

    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(is_error);
    assert_eq!(content, record.content);
    assert!(content.contains(text), "{content}");
    assert!(content.contains(kind.as_str()), "{content}");
}

#[tokio::test]
async fn a_panicking_tool_gives_the_model_a_panicked_result_and_the_run_goes_on() {
    let (model, result) = run_one(
        panicking_tool("explode", "kaboom"),
        ToolCall::new("c1", "explode", json!({})),
    )
    .await;

    assert_model_saw_failure(&model, &result, ToolErrorKind::Panicked, "kaboom");
}

#[tokio::test]
async fn a_failing_tool_gives_the_model_a_failed_result_and_the_run_goes_on() {
    let (model, result) = run_one(
        failing_tool("flaky", "disk full"),
        ToolCall::new("c1", "flaky", json!({})),
    )
    .await;

    assert_model_saw_failure(&model, &result, ToolErrorKind::Failed, "disk full");
}

#[tokio::test]
async fn malformed_json_arguments_give_the_model_an_invalid_arguments_result_and_the_tool_never_runs()
 {
    let calls = Arc::new(AtomicUsize::new(0));
    let (model, result) = run_one(
        counting_echo("echo", &calls),
        ToolCall::raw("c1", "echo", r#"{"say": "hi""#),
    )
    .await;

    assert_model_saw_failure(&model, &result, ToolErrorKind::InvalidArguments, "JSON");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(result.tool_records[0].arguments, r#"{"say": "hi""#);
}

#[tokio::test]
async fn scripted_raw_calls_with_malformed_json_are_answered_with_invalid_arguments() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::text("Calling.").with_raw_call("c1", "echo", "not json at all"),
        Turn::text("I see, sorry."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counting_echo("echo", &calls))
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_model_saw_failure(&model, &result, ToolErrorKind::InvalidArguments, "JSON");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn failures_in_one_turn_do_not_stop_the_other_calls_of_that_turn() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::calls([
            ToolCall::new("c1", "explode", json!({})),
            ToolCall::new("c2", "flaky", json!({})),
            ToolCall::raw("c3", "echo", "{"),
            ToolCall::new("c4", "echo", json!({"ok": true})),
        ]),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(panicking_tool("explode", "kaboom"))
        .tool(failing_tool("flaky", "disk full"))
        .tool(counting_echo("echo", &calls))
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(result.final_message.content(), "done");
    let second = &model.requests()[1];
    assert!(tool_result(second, "c1").1);
    assert!(tool_result(second, "c2").1);
    assert!(tool_result(second, "c3").1);
    assert_eq!(
        tool_result(second, "c4"),
        (r#"{"ok":true}"#.to_owned(), false)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
