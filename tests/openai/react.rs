//! A whole ReAct loop through `Agent` on llmock, whose model calls the offered tool that
//! best matches the prompt (arguments made from the tool's schema), then answers in text
//! once the tool's result comes back.

use serde_json::Value;
use tower_adk::model::UsageMeter;
use tower_adk::{Agent, AgentEvent, AgentRequest, ToolErrorKind};

use crate::servers::Llmock;
use crate::{run, streamed_text, weather};

/// The two requests of a one-tool run: the tool call went out, its result came back.
fn assert_tool_round_trip(requests: &[Value], call_id: &str) {
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let offered = &requests[0]["tools"][0]["function"];
    assert_eq!(offered["name"], "weather");
    assert_eq!(offered["parameters"]["required"][0], "city");
    let history = requests[1]["messages"].as_array().unwrap();
    let assistant = &history[history.len() - 2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"], "",
        "a tool-only turn goes back with empty content"
    );
    assert_eq!(assistant["tool_calls"][0]["id"], call_id);
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "weather");
    let result = &history[history.len() - 1];
    assert_eq!(result["role"], "tool");
    assert_eq!(result["tool_call_id"], call_id);
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .starts_with("21C and sunny in")
    );
}

#[tokio::test]
async fn a_plain_run_executes_the_servers_tool_call_and_ends_with_its_answer() {
    let server = Llmock::start();
    let agent = Agent::builder(server.model(false))
        .tool(weather())
        .build()
        .unwrap();
    let usage = UsageMeter::new();

    let request = AgentRequest::user("What is the weather in Paris?").with_extension(usage.clone());
    let (events, result) = run(&agent, request).await;
    let result = result.unwrap();

    assert_eq!(result.iterations, 2);
    let record = &result.tool_records[0];
    assert_eq!(
        (record.name.as_str(), record.error.is_none()),
        ("weather", true)
    );
    assert!(!result.final_message.content().is_empty());
    assert!(result.final_message.tool_calls().is_empty());
    // Not streamed: the whole text arrives as one delta.
    assert_eq!(streamed_text(&events), result.final_message.content());
    let requests = server.requests();
    assert_eq!(requests[0]["stream"], false);
    assert_tool_round_trip(&requests, &record.call_id);
    assert_eq!(usage.calls(), 2);
    assert!(usage.total().prompt_tokens > 0 && usage.total().completion_tokens > 0);
}

#[tokio::test]
async fn a_streamed_run_executes_the_servers_tool_call_and_streams_its_answer() {
    let server = Llmock::start();
    let agent = Agent::builder(server.model(true))
        .tool(weather())
        .build()
        .unwrap();
    let usage = UsageMeter::new();

    let request = AgentRequest::user("What is the weather in Paris?").with_extension(usage.clone());
    let (events, result) = run(&agent, request).await;
    let result = result.unwrap();

    let record = &result.tool_records[0];
    assert_eq!(record.name, "weather");
    assert!(record.error.is_none(), "{record:?}");
    serde_json::from_str::<Value>(&record.arguments).expect("the fragments form valid JSON");
    let answer = result.final_message.content();
    let deltas = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::TextDelta(_)))
        .count();
    assert!(deltas > 1, "the answer arrives in pieces: {events:?}");
    assert_eq!(streamed_text(&events), answer);
    let requests = server.requests();
    assert_eq!(requests[0]["stream"], true);
    assert_eq!(requests[0]["stream_options"]["include_usage"], true);
    assert_tool_round_trip(&requests, &record.call_id);
    // The usage chunk of each streamed reply was read.
    assert_eq!(usage.calls(), 2);
    assert!(usage.total().total_tokens > 0);
}

#[tokio::test]
async fn malformed_tool_arguments_reach_the_model_as_an_invalid_arguments_result() {
    let server = Llmock::start();
    server.script(serde_json::json!([{"type": "tool_fault", "kind": "malformed_arguments"}]));
    let agent = Agent::builder(server.model(true))
        .tool(weather())
        .build()
        .unwrap();

    let (_, result) = run(&agent, AgentRequest::user("What is the weather in Paris?")).await;
    let result = result.expect("malformed arguments do not fail the run");

    let record = &result.tool_records[0];
    assert_eq!(
        record.error.as_ref().unwrap().kind(),
        ToolErrorKind::InvalidArguments
    );
    assert!(serde_json::from_str::<Value>(&record.arguments).is_err());
    // The raw arguments go back to the server as they came, with the error as the result.
    let requests = server.requests();
    let history = requests[1]["messages"].as_array().unwrap();
    let sent_back = &history[history.len() - 2]["tool_calls"][0]["function"]["arguments"];
    assert_eq!(sent_back.as_str(), Some(record.arguments.as_str()));
    let answer = history[history.len() - 1]["content"].as_str().unwrap();
    assert!(answer.contains("invalid"), "{answer}");
}

#[tokio::test]
async fn a_tool_the_run_does_not_offer_is_answered_as_unknown() {
    let server = Llmock::start();
    server.script(serde_json::json!([{"type": "tool_fault", "kind": "unknown_tool"}]));
    let agent = Agent::builder(server.model(false))
        .tool(weather())
        .build()
        .unwrap();

    let (_, result) = run(&agent, AgentRequest::user("What is the weather in Paris?")).await;

    let record = &result.unwrap().tool_records[0];
    assert_eq!(record.name, "llmock_unknown_tool");
    assert_eq!(
        record.error.as_ref().unwrap().kind(),
        ToolErrorKind::UnknownTool
    );
}
