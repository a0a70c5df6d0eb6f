//! How many model calls a run makes.

use futures::StreamExt;
use serde_json::json;
use tower_adk::agent::DEFAULT_MAX_ITERATIONS;
use tower_adk::testing::{ScriptedModel, Turn, echo_tool};
use tower_adk::{Agent, AgentError, AgentEvent, AgentRequest};

#[tokio::test]
async fn agent_without_tools_makes_one_model_call_even_if_the_model_asks_for_tools() {
    let model = ScriptedModel::new([
        Turn::call("c1", "search", json!({"q": "rust"})).with_text("Let me search."),
        Turn::text("this turn must never be used"),
    ]);
    let agent = Agent::builder(model.clone()).build().unwrap();

    let events: Vec<_> = agent
        .run(AgentRequest::user("hi"))
        .map(Result::unwrap)
        .collect()
        .await;

    assert_eq!(model.calls(), 1);
    assert_eq!(model.remaining(), 1);
    assert!(
        !events.iter().any(|e| matches!(
            e,
            AgentEvent::ToolCallStarted { .. } | AgentEvent::ToolResult(_)
        )),
        "no tool may run: {events:?}"
    );
    let Some(AgentEvent::Completed(result)) = events.last() else {
        panic!("the run must complete: {events:?}");
    };
    assert_eq!(result.iterations, 1);
    assert!(result.tool_records.is_empty());
    // The run ends on the model's reply, tool calls and all.
    assert_eq!(result.final_message.content(), "Let me search.");
    assert_eq!(result.final_message.tool_calls()[0].name, "search");
}

/// A script of `tool_turns` turns that each call `echo`, then a final answer.
fn script(tool_turns: usize, answer: bool) -> ScriptedModel {
    let model = ScriptedModel::new(
        (0..tool_turns).map(|i| Turn::call(format!("c{i}"), "echo", json!({"turn": i}))),
    );
    if answer {
        model.push(Turn::text("done"));
    }
    model
}

#[tokio::test]
async fn max_iterations_allows_exactly_that_many_model_calls() {
    // Two tool turns and the answer: three model calls.
    let model = script(2, true);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .max_iterations(3)
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(result.final_message.content(), "done");
    assert_eq!(result.iterations, 3);
    assert_eq!(model.calls(), 3);
    assert_eq!(result.tool_records.len(), 2);
}

#[tokio::test]
async fn a_model_that_keeps_calling_tools_fails_with_max_iterations_after_the_limit() {
    let model = script(10, true);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .max_iterations(3)
        .build()
        .unwrap();

    let error = agent.run(AgentRequest::user("go")).await.unwrap_err();

    assert!(
        matches!(error, AgentError::MaxIterations { limit: 3 }),
        "{error:?}"
    );
    assert!(error.is_max_iterations());
    assert_eq!(model.calls(), 3);
}

#[tokio::test]
async fn max_iterations_is_reported_after_the_last_allowed_tools_ran() {
    let model = script(10, false);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .max_iterations(2)
        .build()
        .unwrap();

    let events: Vec<_> = agent.run(AgentRequest::user("go")).collect().await;

    let results = events
        .iter()
        .filter(|e| matches!(e, Ok(AgentEvent::ToolResult(_))))
        .count();
    assert_eq!(results, 2, "both allowed turns run their tools: {events:?}");
    assert!(matches!(
        events.last(),
        Some(Err(AgentError::MaxIterations { limit: 2 }))
    ));
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn the_default_limit_is_twenty_model_calls() {
    assert_eq!(DEFAULT_MAX_ITERATIONS, 20);

    // Nineteen tool turns and an answer fit in the default limit...
    let model = script(19, true);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .build()
        .unwrap();
    let result = agent.run(AgentRequest::user("go")).await.unwrap();
    assert_eq!(result.iterations, 20);
    assert_eq!(model.calls(), 20);

    // ...twenty tool turns do not.
    let model = script(20, true);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .build()
        .unwrap();
    let error = agent.run(AgentRequest::user("go")).await.unwrap_err();
    assert!(
        matches!(error, AgentError::MaxIterations { limit: 20 }),
        "{error:?}"
    );
    assert_eq!(model.calls(), 20);
}
