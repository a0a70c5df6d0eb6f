//! A fallback from Gemini to the OpenAI chat model: the history that reaches OpenAI
//! keeps the calls and results, and not one of Gemini's thought signatures.

use serde_json::json;
use tower_adk::handlers::Fallback;
use tower_adk::providers::openai::OpenAiModel;
use tower_adk::{Agent, AgentRequest};

use super::replay::{Replay, Reply};
use super::{custom_divide, model, recorded_signature};

#[tokio::test]
async fn a_fallback_to_openai_sends_no_gemini_signature() {
    // Gemini answers turn 1 (a call, signed), then is overloaded.
    let gemini = Replay::start([
        Reply::stream("tool-loop-1.sse"),
        Reply::file("overloaded.json", 503),
    ])
    .await;
    let completion = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "The result is 42."}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 6, "total_tokens": 56}
    });
    let openai = Replay::start([Reply::bytes(
        200,
        "application/json",
        completion.to_string(),
    )])
    .await;
    let backup = OpenAiModel::builder()
        .base_url(format!("{}/v1", openai.url()))
        .model("gpt-4o-mini")
        .stream(false)
        .build()
        .unwrap();
    let primary = model(gemini.url()).build().unwrap();
    let agent = Agent::builder(Fallback::new(primary).or(backup))
        .tool(custom_divide())
        .build()
        .unwrap();
    let result = agent
        .run(AgentRequest::user("Divide 10 by 2"))
        .await
        .unwrap();
    assert_eq!(result.final_message.content(), "The result is 42.");

    let sent = openai.requests().remove(0).body;
    let text = sent.to_string();
    let signature = recorded_signature("tool-loop-1.sse", 0);
    assert!(
        !text.contains(&signature[..40]),
        "no Gemini signature reaches OpenAI: {text}"
    );
    assert!(!text.contains("thought"), "{text}");
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["tool_calls"][0]["function"]["name"],
        "customDivide"
    );
    assert_eq!(messages[2]["content"], r#"{"output":42}"#);
    // The run's usage: Gemini's first turn and OpenAI's answer.
    assert_eq!(result.usage.calls, 2);
    assert_eq!(result.usage.by_model["gemini-2.5-flash"].total_tokens, 280);
    assert_eq!(result.usage.by_model["gpt-4o-mini"].total_tokens, 56);
}
