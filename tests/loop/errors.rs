//! Model failures end the run with `AgentError::Model`.

use futures::StreamExt;
use serde_json::json;
use tower_adk::testing::{ScriptedError, ScriptedModel, Turn, echo_tool};
use tower_adk::{Agent, AgentError, AgentEvent, AgentRequest};

#[tokio::test]
async fn a_failing_model_call_fails_the_run_with_a_model_error() {
    let model = ScriptedModel::new([Turn::error("service unavailable")]);
    let agent = Agent::builder(model.clone()).build().unwrap();

    let error = agent.run(AgentRequest::user("hi")).await.unwrap_err();

    let AgentError::Model(source) = &error else {
        panic!("expected a model error, got {error:?}");
    };
    assert_eq!(
        source.downcast_ref::<ScriptedError>(),
        Some(&ScriptedError("service unavailable".into()))
    );
    assert_eq!(model.calls(), 1);
}

#[tokio::test]
async fn a_model_failing_after_a_tool_turn_fails_the_run_with_a_model_error() {
    let model = ScriptedModel::new([
        Turn::call("c1", "echo", json!({})),
        Turn::error("rate limited"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .build()
        .unwrap();

    let error = agent.run(AgentRequest::user("hi")).await.unwrap_err();

    assert!(
        matches!(&error, AgentError::Model(e) if e.to_string() == "rate limited"),
        "{error:?}"
    );
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn a_model_failing_mid_stream_fails_the_run_after_the_earlier_text_was_delivered() {
    let model = ScriptedModel::new([Turn::stream(["Hel", "lo, "]).then_error("connection reset")]);
    let agent = Agent::builder(model).build().unwrap();

    let events: Vec<_> = agent.run(AgentRequest::user("hi")).collect().await;

    assert_eq!(events.len(), 3, "{events:?}");
    assert!(matches!(&events[0], Ok(AgentEvent::TextDelta(t)) if t == "Hel"));
    assert!(matches!(&events[1], Ok(AgentEvent::TextDelta(t)) if t == "lo, "));
    let Err(AgentError::Model(source)) = &events[2] else {
        panic!("expected a model error last: {events:?}");
    };
    assert_eq!(
        source.downcast_ref::<ScriptedError>(),
        Some(&ScriptedError("connection reset".into()))
    );
}
