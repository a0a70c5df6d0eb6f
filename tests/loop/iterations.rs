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

/// Retries every failed model call once.
#[derive(Clone)]
struct RetryOnce;

impl<E> tower::retry::Policy<tower_adk::ModelRequest, tower_adk::ModelResponse, E> for RetryOnce {
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        _: &mut tower_adk::ModelRequest,
        result: &mut Result<tower_adk::ModelResponse, E>,
    ) -> Option<Self::Future> {
        result.is_err().then(|| std::future::ready(()))
    }

    fn clone_request(
        &mut self,
        request: &tower_adk::ModelRequest,
    ) -> Option<tower_adk::ModelRequest> {
        Some(request.clone())
    }
}

#[tokio::test]
async fn iterations_count_turns_and_model_calls_count_calls_of_the_model_service() {
    // Turn 1 is answered by a `wrap_model` hook without the model; turn 2 by the model
    // after one failed attempt that a retry layer repeats.
    let model = ScriptedModel::new([Turn::error("overloaded"), Turn::text("done")]);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .build()
        .unwrap();
    let first = std::sync::atomic::AtomicBool::new(true);
    let answers_first_turn = tower_adk::handlers::wrap_model(move |request, next| {
        let answer_here = first.swap(false, std::sync::atomic::Ordering::SeqCst);
        async move {
            if answer_here {
                let call = tower_adk::ToolCall::new("c1", "echo", json!({}));
                Ok(tower_adk::ModelResponse::message(
                    tower_adk::Message::assistant_with_calls("", vec![call]),
                ))
            } else {
                next.run(request).await
            }
        }
    });
    let request = AgentRequest::user("go")
        .with_handler(answers_first_turn)
        .with_handler(tower_adk::handlers::model_layer(
            tower::retry::RetryLayer::new(RetryOnce),
        ));

    let result = agent.run(request).await.unwrap();

    assert_eq!(result.final_message.content(), "done");
    assert_eq!(result.iterations, 2, "two turns of the loop");
    assert_eq!(
        result.model_calls, 2,
        "the model service was called twice, both in turn 2"
    );
    assert_eq!(model.calls(), 2);
}
