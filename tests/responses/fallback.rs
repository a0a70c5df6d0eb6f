//! A fallback from the Responses model to the chat completions model: the turn that falls
//! back is sent to llmock's chat completions without any of the Responses reasoning, and
//! with everything else of the history.

use serde_json::json;
use tower_adk::handlers::Fallback;
use tower_adk::{Agent, AgentRequest};

use crate::recorded::{builder, reasoning_item_as_sent};
use crate::replay::{Canned, Replay};
use crate::servers::Llmock;
use crate::weather;

#[tokio::test]
async fn the_chat_model_that_takes_over_is_sent_no_responses_reasoning() {
    let replay = Replay::start([
        Canned::File("tool_loop_1.sse"),
        Canned::Status(503, "The engine is currently overloaded"),
    ])
    .await;
    let chat = Llmock::start();
    chat.script(json!([{"type": "reply", "text": "It is 21C in Boston."}]));
    let model = Fallback::new(builder(&replay).build().unwrap()).or(chat.model(true));
    let agent = Agent::builder(model).tool(weather()).build().unwrap();

    let result = agent
        .run(AgentRequest::user("What is the weather in Boston?"))
        .await
        .unwrap();
    assert_eq!(result.final_message.content(), "It is 21C in Boston.");
    // Turn 1 kept the reasoning; turn 2 went to the Responses model, failed, fell back.
    let reasoning = &result.messages[1].full_content();
    assert_eq!(reasoning.reasoning().count(), 1);
    assert_eq!(replay.bodies().len(), 2);

    let sent = chat.requests();
    assert_eq!(sent.len(), 1);
    let body = sent[0].to_string();
    let item: serde_json::Value =
        serde_json::from_str(&reasoning_item_as_sent("tool_loop_1.sse")).unwrap();
    for secret in [
        item["id"].as_str().unwrap(),
        item["encrypted_content"].as_str().unwrap(),
        "Responding to a greeting",
    ] {
        assert!(
            !body.contains(secret),
            "{secret} was sent to the chat model: {body}"
        );
    }
    let messages = sent[0]["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["tool_calls"][0]["id"],
        "call_unLAR8MvFNptuiZK6K6HCy5k"
    );
    assert_eq!(messages[2]["content"], "21C in Boston, MA");
}
