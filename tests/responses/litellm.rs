//! LiteLLM's proxy (`scripts/setup-litellm`) serving `/v1/responses` in front of llmock,
//! in its two ways: `bridged` translates each Responses request into a chat completion
//! (llmock's `/v1/chat/completions`, whose journal shows what reached the model) and the
//! chat reply back into Responses events; `native` passes the request on to llmock's own
//! `/v1/responses`.
//!
//! What LiteLLM 1.108.0 translates faithfully, as asserted here:
//! - bridged: `instructions`, text, images (`input_image` to `image_url`) and files
//!   (`input_file` to `file`) reach the chat model; function calls and their outputs become
//!   `tool_calls` and `tool` messages with their ids; the image of a tool's output moves
//!   to a user message after the tool message (the chat format has no image in a tool
//!   message), introduced by a line of LiteLLM's; the reply's text and tool calls stream
//!   back as Responses events (without `sequence_number` on most of them, with a `[DONE]`
//!   after `response.completed`); whole replies too; usage with `reasoning_tokens`.
//!   A reasoning item's summary becomes the assistant message's `reasoning_content`; its
//!   `encrypted_content` is dropped (a chat backend has nowhere to put it).
//! - native: every input item reaches the backend unchanged, the reasoning item's
//!   `encrypted_content` byte for byte, the function call output's image in place.
//!
//! One LiteLLM serves all the cases, one after the other (it takes seconds to start).

use std::time::Duration;

use serde_json::{Value, json};
use tower_adk::content::{Content, Part, Reasoning, Source};
use tower_adk::providers::openai::responses::ResponsesModel;
use tower_adk::{Agent, AgentRequest, Message, ToolCall};

use crate::recorded::chart;
use crate::servers::{Llmock, Server};
use crate::{litellm_venv, scratch, weather};

const MASTER_KEY: &str = "sk-tower-adk-test-4f9c2a7e81b3d6f05c8e2a91b7d43f60";

/// LiteLLM in front of llmock.
struct Proxy {
    litellm: Server,
    llmock: Llmock,
}

impl Proxy {
    fn start() -> Proxy {
        let llmock = Llmock::start();
        let config = format!(
            "model_list:
  - model_name: bridged
    litellm_params:
      model: openai/gpt-4o-mini
      api_base: {url}
      api_key: sk-test
      use_chat_completions_api: true
  - model_name: native
    litellm_params:
      model: openai/gpt-4o-mini
      api_base: {url}
      api_key: sk-test
general_settings:
  master_key: {MASTER_KEY}
",
            url = llmock.base_url()
        );
        let path = scratch("litellm").join("config.yaml");
        std::fs::write(&path, config).unwrap();
        let exe = litellm_venv().join("bin/litellm");
        assert!(
            exe.exists(),
            "{} not found: run scripts/setup-litellm (or set LITELLM_VENV)",
            exe.display()
        );
        let litellm = Server::start_with(
            &exe,
            &["--config", path.to_str().unwrap()],
            // The model price map that ships with it: no download at start.
            &[("LITELLM_LOCAL_MODEL_COST_MAP", "True")],
            "/health/liveliness",
            Duration::from_secs(180),
        );
        Proxy { litellm, llmock }
    }

    fn model(&self, name: &str, stream: bool) -> ResponsesModel {
        ResponsesModel::builder()
            .base_url(self.litellm.base_url())
            .api_key(MASTER_KEY)
            .model(name)
            .stream(stream)
            .build()
            .unwrap()
    }

    /// The last chat completion request llmock received.
    fn last_chat(&self) -> Value {
        self.llmock.requests().pop().unwrap()
    }
}

/// Our reasoning from an earlier turn, as the Responses model keeps it.
fn earlier_reasoning() -> Reasoning {
    Reasoning::new("openai-responses", "**Plan**\n\nChart it.")
        .with_id("rs_6806bfca0b2481918a5748308061a2600d3ce51bdffd5476")
        .with_data("encrypted_content", "gAAAAABpM0Yj-x_Zm9vYmFy-enc==")
}

/// A history with an earlier turn: reasoning, text, a call, and its result with an image.
fn history() -> Vec<Message> {
    let turn = Content::from(vec![
        Part::Reasoning(earlier_reasoning()),
        Part::text("Let me chart it."),
    ]);
    let call = ToolCall::raw("call_1", "get_current_weather", "{}");
    let result = Content::from(vec![
        Part::text("the chart:"),
        Part::image(Source::base64("image/png", "iVBORw0KGgo=")),
    ]);
    vec![
        Message::system("Be brief."),
        Message::user("Chart the weather."),
        Message::assistant_with_calls(turn, vec![call]),
        Message::tool("call_1", "get_current_weather", result),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn litellm_carries_the_responses_format_to_chat_models_and_passes_it_through() {
    let proxy = Proxy::start();
    for stream in [true, false] {
        media_reach_the_chat_model(&proxy, stream).await;
        a_tool_loop_runs_through_the_bridge(&proxy, stream).await;
    }
    the_history_reaches_the_chat_model_as_litellm_translates_it(&proxy).await;
    native_requests_pass_through_unchanged(&proxy).await;
}

async fn media_reach_the_chat_model(proxy: &Proxy, stream: bool) {
    proxy
        .llmock
        .script(json!([{"type": "reply", "text": "A chart and a report."}]));
    let question = Content::from(vec![
        Part::text("What are these?"),
        Part::image(Source::base64("image/png", "iVBORw0KGgo=")),
        Part::file(
            Source::base64("application/pdf", "JVBERi0xLjQK"),
            Some("report.pdf".into()),
        ),
    ]);
    let agent = Agent::builder(proxy.model("bridged", stream))
        .build()
        .unwrap();
    let result = agent.run(AgentRequest::user(question)).await.unwrap();
    assert_eq!(result.final_message.content(), "A chart and a report.");
    assert_eq!(
        proxy.last_chat()["messages"][0]["content"],
        json!([
            {"type": "text", "text": "What are these?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0xLjQK", "filename": "report.pdf"}}
        ]),
        "stream: {stream}"
    );
}

async fn a_tool_loop_runs_through_the_bridge(proxy: &Proxy, stream: bool) {
    proxy.llmock.script(json!([
        {"type": "reply", "text": "Checking.", "tool_calls": [
            {"name": "get_current_weather", "arguments": {"location": "Boston, MA", "unit": "celsius"}}
        ]},
        {"type": "reply", "text": "It is 21C in Boston."}
    ]));
    let agent = Agent::builder(proxy.model("bridged", stream))
        .tool(weather())
        .build()
        .unwrap();
    let result = agent
        .run(AgentRequest::user("Weather in Boston?"))
        .await
        .unwrap();
    assert_eq!(
        result.final_message.content(),
        "It is 21C in Boston.",
        "stream: {stream}"
    );
    assert_eq!(result.tool_records[0].content, "21C in Boston, MA");
    // llmock counts tokens; LiteLLM reports them in the Responses usage.
    assert_eq!(result.usage.calls, 2, "stream: {stream}");
    assert!(result.usage.total.total_tokens > 0);
    assert!(result.usage.by_model.contains_key("bridged"));

    let second = proxy.last_chat();
    let messages = second["messages"].as_array().unwrap();
    let call_id = messages[1]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(messages[2]["tool_call_id"], call_id);
    assert_eq!(messages[2]["role"], "tool");
}

async fn the_history_reaches_the_chat_model_as_litellm_translates_it(proxy: &Proxy) {
    proxy
        .llmock
        .script(json!([{"type": "reply", "text": "Sunny."}]));
    let agent = Agent::builder(proxy.model("bridged", true))
        .tool(chart())
        .build()
        .unwrap();
    agent.run(AgentRequest::new(history())).await.unwrap();

    let sent = proxy.last_chat();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(
        messages[0],
        json!({"role": "system", "content": "Be brief."})
    );
    // The reasoning summary travels as `reasoning_content`; the encrypted content stays
    // behind (the chat format has no place for it).
    assert_eq!(messages[2]["content"], "Let me chart it.");
    assert_eq!(messages[2]["reasoning_content"], "**Plan**\n\nChart it.");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert!(!sent.to_string().contains("gAAAAABpM0Yj"), "{sent}");
    // The tool's text stays in the tool message; its image follows in a user message.
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["content"][0]["text"], "the chart:");
    assert_eq!(messages[4]["role"], "user");
    let image = messages[4]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "image_url")
        .unwrap();
    assert_eq!(
        image["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
}

async fn native_requests_pass_through_unchanged(proxy: &Proxy) {
    let agent = Agent::builder(proxy.model("native", true))
        .tool(chart())
        .build()
        .unwrap();
    let result = agent.run(AgentRequest::new(history())).await.unwrap();
    assert!(!result.final_message.content().is_empty());

    let sent = proxy.llmock.requests_to("/v1/responses").pop().unwrap();
    let input = sent["input"].as_array().unwrap();
    assert_eq!(sent["instructions"], "Be brief.");
    assert_eq!(sent["store"], false);
    assert_eq!(sent["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        input[1],
        json!({"id": "rs_6806bfca0b2481918a5748308061a2600d3ce51bdffd5476", "type": "reasoning",
               "encrypted_content": "gAAAAABpM0Yj-x_Zm9vYmFy-enc==",
               "summary": [{"type": "summary_text", "text": "**Plan**\n\nChart it."}]})
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call", "call_id": "call_1", "name": "get_current_weather", "arguments": "{}"})
    );
    assert_eq!(
        input[4]["output"][1],
        json!({"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"})
    );
}
