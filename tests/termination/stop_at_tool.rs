//! `StopAtTool`: the on-call form, the until-success form, and how a run fails when it
//! ends elsewhere.

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tower_adk::handlers::{StopAtTool, StopAtToolBuildError, StopToolNotCalled};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool, failing_tool, text_tool};
use tower_adk::{Agent, AgentError, AgentEvent, AgentRequest, Hook, Message, RunStatus};

use crate::submit_tool;

fn on_call(names: &[&str]) -> StopAtTool {
    StopAtTool::builder()
        .on_call(names.iter().copied())
        .build()
        .unwrap()
}

fn until_success(names: &[&str]) -> StopAtTool {
    StopAtTool::builder()
        .until_success(names.iter().copied())
        .build()
        .unwrap()
}

/// The `StopToolNotCalled` inside a run's error, checking that `after_agent` of
/// `stop_at_tool` raised it.
fn not_called(error: &AgentError) -> &StopToolNotCalled {
    let handler = error.as_handler().expect("a handler error");
    assert_eq!(handler.handler(), "stop_at_tool");
    assert_eq!(handler.hook(), Hook::AfterAgent);
    std::error::Error::source(handler)
        .and_then(|source| source.downcast_ref::<StopToolNotCalled>())
        .expect("a StopToolNotCalled")
}

#[tokio::test]
async fn on_call_ends_the_run_at_the_first_stop_call_with_its_result() {
    let model = ScriptedModel::new([
        Turn::call("c1", "search", json!({})),
        Turn::call("c2", "submit", json!({"answer": 42})).with_call("c3", "search", json!({})),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("search", "the answer is 42"))
        .tool(submit_tool())
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("go").with_handler(on_call(&["submit"])))
        .await
        .unwrap();

    assert_eq!(model.calls(), 2, "no model call after the stop call");
    assert_eq!(model.remaining(), 1);
    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(
        result.final_message,
        Message::tool("c2", "submit", "accepted 42")
    );
    let calls: Vec<&str> = result
        .tool_records
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(calls, ["c1", "c2", "c3"], "the turn's other call ran");
}

#[tokio::test]
async fn on_call_a_failed_stop_call_ends_the_run_with_the_failure() {
    let model = ScriptedModel::new([
        Turn::call("c1", "submit", json!({"answer": "forty-two"})),
        Turn::call("c2", "submit", json!({"answer": 42})),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(submit_tool())
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("go").with_handler(on_call(&["submit"])))
        .await
        .unwrap();

    assert_eq!(model.calls(), 1, "the failed call is the answer: no retry");
    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(result.final_message.tool_call_id(), Some("c1"));
    assert!(result.final_message.is_error());
    assert!(
        result
            .final_message
            .content()
            .contains("the answer must be an integer")
    );
    assert!(!result.tool_records[0].is_success());
}

#[tokio::test]
async fn on_call_any_of_several_stop_tools_ends_the_run() {
    let model = ScriptedModel::new([
        Turn::call("c1", "reject", json!({"reason": "out of stock"})),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("approve", "approved"))
        .tool(text_tool("reject", "rejected"))
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("decide").with_handler(on_call(&["approve", "reject"])))
        .await
        .unwrap();

    assert_eq!(model.calls(), 1);
    assert_eq!(
        result.final_message,
        Message::tool("c1", "reject", "rejected")
    );
}

#[tokio::test]
async fn until_success_a_failed_call_lets_the_model_try_again_and_the_success_ends_the_run() {
    let model = ScriptedModel::new([
        Turn::call("c1", "submit", json!({"answer": "forty-two"})),
        Turn::call("c2", "submit", json!({"answer": 42})),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(submit_tool())
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("go").with_handler(until_success(&["submit"])))
        .await
        .unwrap();

    assert_eq!(
        model.calls(),
        2,
        "one retry, then no model call after success"
    );
    assert_eq!(model.remaining(), 1);
    let retry = &model.requests()[1];
    assert!(
        matches!(retry.messages.last(), Some(Message::Tool { call_id, is_error: true, .. }) if call_id == "c1"),
        "the model saw its failed attempt: {:?}",
        retry.messages.last()
    );
    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(
        result.final_message,
        Message::tool("c2", "submit", "accepted 42")
    );
    let successes: Vec<bool> = result.tool_records.iter().map(|r| r.is_success()).collect();
    assert_eq!(successes, [false, true]);
}

#[tokio::test]
async fn until_success_ends_the_run_at_a_streamed_call_once_its_stream_is_done() {
    let model = ScriptedModel::new([
        Turn::call("c1", "report", json!({})),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(chunk_tool(
            "report",
            &["part 1, ", "part 2"],
            Duration::ZERO,
        ))
        .build()
        .unwrap();

    let events: Vec<AgentEvent> = agent
        .run(AgentRequest::user("go").with_handler(until_success(&["report"])))
        .map(Result::unwrap)
        .collect()
        .await;

    let chunks = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolOutputChunk { .. }))
        .count();
    assert_eq!(chunks, 2);
    let Some(AgentEvent::Completed(result)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(
        result.final_message,
        Message::tool("c1", "report", "part 1, part 2")
    );
    assert_eq!(model.calls(), 1);
}

#[tokio::test]
async fn until_success_attempts_are_bounded_by_max_iterations() {
    let model = ScriptedModel::new([
        Turn::call("c1", "submit", json!({})),
        Turn::call("c2", "submit", json!({})),
        Turn::call("c3", "submit", json!({})),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(failing_tool("submit", "rejected"))
        .max_iterations(3)
        .build()
        .unwrap();

    let error = agent
        .run(AgentRequest::user("go").with_handler(until_success(&["submit"])))
        .await
        .unwrap_err();

    assert!(error.is_max_iterations(), "{error}");
    assert_eq!(model.calls(), 3);
}

#[tokio::test]
async fn until_success_a_failed_call_does_not_end_the_run_even_if_the_agent_returns_it_directly() {
    let model = ScriptedModel::new([
        Turn::call("c1", "submit", json!({"answer": "?"})),
        Turn::call("c2", "submit", json!({"answer": 7})),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(submit_tool())
        .return_directly(["submit"])
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("go").with_handler(until_success(&["submit"])))
        .await
        .unwrap();

    assert_eq!(model.calls(), 2);
    assert_eq!(
        result.final_message,
        Message::tool("c2", "submit", "accepted 7")
    );
}

#[tokio::test]
async fn a_run_that_answers_without_a_stop_call_fails_with_stop_tool_not_called() {
    let model = ScriptedModel::new([
        Turn::call("c1", "search", json!({})),
        Turn::text("The answer is 42."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("search", "42"))
        .tool(submit_tool())
        .build()
        .unwrap();

    let error = agent
        .run(AgentRequest::user("go").with_handler(on_call(&["submit", "give_up"])))
        .await
        .unwrap_err();

    assert_eq!(model.calls(), 2);
    let error = not_called(&error);
    assert_eq!(error.tools, ["give_up", "submit"]);
    assert!(!error.until_success);
}

#[tokio::test]
async fn until_success_a_run_with_only_failed_stop_calls_fails_with_stop_tool_not_called() {
    let model = ScriptedModel::new([
        Turn::call("c1", "submit", json!({"answer": "?"})),
        Turn::text("I could not submit it."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(submit_tool())
        .build()
        .unwrap();

    let error = agent
        .run(AgentRequest::user("go").with_handler(until_success(&["submit"])))
        .await
        .unwrap_err();

    assert_eq!(model.calls(), 2);
    let error = not_called(&error);
    assert_eq!(error.tools, ["submit"]);
    assert!(error.until_success);
    assert!(error.to_string().contains("successful call"), "{error}");
}

#[tokio::test]
async fn a_run_ended_by_another_tool_fails_with_stop_tool_not_called() {
    let model = ScriptedModel::new([Turn::call("c1", "lookup", json!({}))]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("lookup", "found"))
        .tool(submit_tool())
        .return_directly(["lookup"])
        .build()
        .unwrap();

    let error = agent
        .run(AgentRequest::user("go").with_handler(on_call(&["submit"])))
        .await
        .unwrap_err();

    assert_eq!(model.calls(), 1);
    assert_eq!(not_called(&error).tools, ["submit"]);
}

#[test]
fn configuring_both_forms_is_rejected_when_the_handler_is_built() {
    let error = StopAtTool::builder()
        .on_call(["submit"])
        .until_success(["save"])
        .build()
        .unwrap_err();

    assert_eq!(
        error,
        StopAtToolBuildError::BothForms {
            on_call: vec!["submit".into()],
            until_success: vec!["save".into()],
        }
    );
    assert_eq!(
        error.to_string(),
        "stop-at-tool is configured with both forms: on call of `submit` and until success \
         of `save`; choose one"
    );
}

#[test]
fn naming_no_stop_tool_is_rejected_when_the_handler_is_built() {
    let error = StopAtTool::builder().build().unwrap_err();

    assert_eq!(error, StopAtToolBuildError::NoTools);
}
