//! Several tool calls in one reply, whole and streamed in fragments: every call runs and
//! every result goes back tied to its call.

use serde_json::json;
use tower_adk::model::ModelOptions;
use tower_adk::{Agent, AgentRequest};

use crate::servers::Llmock;
use crate::{clock, run, weather};

async fn three_calls_in_one_reply(stream: bool) {
    let server = Llmock::start();
    server.script(json!([
        {"type": "reply", "text": "Checking both cities.", "tool_calls": [
            {"name": "weather", "arguments": {"city": "Paris"}},
            {"name": "weather", "arguments": {"city": "Rome, Italy (the capital)"}},
            {"name": "time", "arguments": {}}
        ]},
        {"type": "reply", "text": "Sunny in both; it is noon."}
    ]));
    let mut options = ModelOptions::default();
    options.parallel_tool_calls = Some(true);
    let agent = Agent::builder(server.model(stream))
        .tools([weather(), clock()])
        .model_options(options)
        .build()
        .unwrap();

    let (_, result) = run(
        &agent,
        AgentRequest::user("Weather in Paris and Rome, and the time?"),
    )
    .await;
    let result = result.unwrap();

    let outputs: Vec<_> = result
        .tool_records
        .iter()
        .map(|r| (r.name.as_str(), r.content.as_str()))
        .collect();
    assert_eq!(
        outputs,
        [
            ("weather", "21C and sunny in Paris"),
            ("weather", "21C and sunny in Rome, Italy (the capital)"),
            ("time", "12:00")
        ]
    );
    assert_eq!(result.final_message.content(), "Sunny in both; it is noon.");
    let requests = server.requests();
    assert_eq!(requests[0]["parallel_tool_calls"], true);
    let history = requests[1]["messages"].as_array().unwrap();
    // The user's message, the reply with its calls, then one result per call.
    let calls = history[1]["tool_calls"].as_array().unwrap();
    assert_eq!(history[1]["content"], "Checking both cities.");
    assert_eq!(calls.len(), 3);
    for (i, call) in calls.iter().enumerate() {
        assert_eq!(call["id"], result.tool_records[i].call_id.as_str());
        assert_eq!(history[2 + i]["tool_call_id"], call["id"]);
    }
    let ids: std::collections::HashSet<_> = calls.iter().map(|c| c["id"].clone()).collect();
    assert_eq!(ids.len(), 3, "each call keeps its own id");
}

#[tokio::test]
async fn parallel_tool_calls_in_a_whole_reply_all_run() {
    three_calls_in_one_reply(false).await;
}

#[tokio::test]
async fn parallel_tool_calls_streamed_in_fragments_are_assembled_by_index() {
    three_calls_in_one_reply(true).await;
}
