//! Return-directly tools end the run with their result.

use futures::StreamExt;
use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn, echo_tool, text_tool};
use tower_adk::{Agent, AgentEvent, AgentRequest, Message, ToolCall};

use crate::Relay;

#[tokio::test]
async fn a_return_directly_tool_ends_the_run_with_its_result() {
    // A second turn that the run must not reach: were the loop to call the model again,
    // the result would be "not reached".
    let model = ScriptedModel::new([
        Turn::call("c1", "lookup", json!({"id": 7})),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("lookup"))
        .return_directly(["lookup"])
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("find 7")).await.unwrap();

    assert_eq!(model.calls(), 1);
    assert_eq!(result.iterations, 1);
    assert_eq!(result.final_message.content(), r#"{"id":7}"#);
    assert_eq!(result.final_message.tool_call_id(), Some("c1"));
    assert_eq!(result.tool_records.len(), 1);
}

#[tokio::test]
async fn a_return_directly_tool_not_called_lets_the_loop_go_on() {
    let model = ScriptedModel::new([Turn::call("c1", "echo", json!({})), Turn::text("answer")]);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .tool(text_tool("finish", "finished"))
        .return_directly(["finish"])
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(model.calls(), 2);
    assert_eq!(result.final_message.content(), "answer");
}

#[tokio::test]
async fn with_several_return_directly_calls_the_first_in_model_order_wins_and_its_result_comes_last()
 {
    // `first` wins (first in the model's order) and finishes first; the others finish
    // after it, in turn.
    let relay = Relay::new();
    let model = ScriptedModel::new([
        Turn::calls([
            ToolCall::new("c1", "first", json!({})),
            ToolCall::new("c2", "second", json!({})),
            ToolCall::new("c3", "plain", json!({})),
        ]),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(relay.tool("first", 0, "first wins"))
        .tool(relay.tool("second", 1, "second"))
        .tool(relay.tool("plain", 2, "plain"))
        .return_directly(["first", "second"])
        .build()
        .unwrap();

    let events: Vec<_> = agent
        .run(AgentRequest::user("go"))
        .map(Result::unwrap)
        .collect()
        .await;

    assert_eq!(relay.calls(), 3, "every call of the turn runs");
    assert_eq!(model.calls(), 1);
    let results: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult(record) => Some(record.call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["c2", "c3", "c1"]);
    let n = events.len();
    assert!(
        matches!(&events[n - 2], AgentEvent::ToolResult(r) if r.call_id == "c1"),
        "the winner's result is the event just before Completed: {events:?}"
    );
    let AgentEvent::Completed(result) = &events[n - 1] else {
        panic!("the last event is Completed: {events:?}");
    };
    assert_eq!(result.final_message.content(), "first wins");
    assert_eq!(result.final_message.tool_call_id(), Some("c1"));
    assert_eq!(result.tool_records.len(), 3);
    // The history still answers every call.
    let answered: Vec<_> = result
        .messages
        .iter()
        .filter_map(Message::tool_call_id)
        .collect();
    assert_eq!(answered, ["c1", "c2", "c3"]);
}

#[tokio::test]
async fn the_first_return_directly_call_wins_even_when_it_finishes_last() {
    let relay = Relay::new();
    let model = ScriptedModel::new([Turn::calls([
        ToolCall::new("c1", "first", json!({})),
        ToolCall::new("c2", "second", json!({})),
    ])]);
    let agent = Agent::builder(model)
        .tool(relay.tool("first", 1, "first wins"))
        .tool(relay.tool("second", 0, "second"))
        .return_directly(["first", "second"])
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(result.final_message.content(), "first wins");
}
