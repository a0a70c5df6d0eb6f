//! LiteLLM's proxy (`scripts/setup-litellm`) serving Anthropic's `/v1/messages` in front
//! of an OpenAI-compatible backend: a tool loop through it to fakellm, and what it
//! translates, read from the chat completion requests it sends to a replay server.

use serde_json::{Value, json};
use tower::ServiceExt;
use tower_adk::content::{Content, Part, Reasoning, Source};
use tower_adk::model::ModelRequest;
use tower_adk::providers::anthropic::CacheBreakpoints;
use tower_adk::{Agent, AgentRequest, Message, ToolCall};

use crate::replay::{Replay, Reply};
use crate::servers::{fakellm, litellm};
use crate::{MODEL, builder, run, weather};

/// The proxy's master key (it refuses to start without one), sent as our API key.
const MASTER_KEY: &str = "sk-2f9c4e7a1b3d5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4";

/// A LiteLLM config that serves [`MODEL`] from an OpenAI-compatible server at `base`.
fn config(base: &str) -> String {
    format!(
        "model_list:\n  - model_name: {MODEL}\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_base: {base}/v1\n      api_key: sk-test\ngeneral_settings:\n  master_key: {MASTER_KEY}\nlitellm_settings:\n  num_retries: 0\n"
    )
}

/// A model on the proxy.
fn model(
    proxy: &crate::servers::Server,
    stream: bool,
) -> tower_adk::providers::anthropic::AnthropicModel {
    builder(&proxy.base_url())
        .api_key(MASTER_KEY)
        .stream(stream)
        .build()
        .unwrap()
}

const RULES: &str = r#"
version: 1
rules:
  - name: ask_weather
    when: {turn: 1, messages_contain: "weather"}
    respond:
      tool_calls:
        - {name: get_weather, arguments: {location: "Oslo"}}
  - name: answer_weather
    when: {turn: 2, tool_result_contains: "foggy"}
    respond:
      content: "Foggy in Oslo."
"#;

#[tokio::test]
async fn a_tool_loop_runs_through_litellms_messages_route() {
    let backend = fakellm("litellm-loop", RULES);
    let proxy = litellm("loop", &config(&backend.base_url()));
    for stream in [false, true] {
        backend.http("POST", "/_fakellm/reset");
        let agent = Agent::builder(model(&proxy, stream))
            .tool(weather())
            .build()
            .unwrap();

        let (events, result) =
            run(&agent, AgentRequest::user("What is the weather in Oslo?")).await;
        let result =
            result.unwrap_or_else(|e| panic!("stream {stream}: {e}\n{}", proxy.log_text()));

        assert_eq!(
            result.final_message.content(),
            "Foggy in Oslo.",
            "stream: {stream}"
        );
        assert_eq!(result.tool_records[0].content, "15C and foggy in Oslo");
        assert_eq!(result.usage.calls, 2, "stream {stream}: {events:?}");
    }
}

/// An OpenAI chat completion stream: reasoning, text, a call in two pieces, usage.
fn openai_stream() -> Reply {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let chunks = [
        chunk(
            json!({"role": "assistant", "reasoning_content": "Thinking it over."}),
            Value::Null,
        ),
        chunk(json!({"content": "Looking."}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\":"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": " \"Oslo\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini", "choices": [],
               "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42,
                         "prompt_tokens_details": {"cached_tokens": 20}}}),
    ];
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    Reply::events(body)
}

#[tokio::test]
async fn what_litellm_translates_between_the_messages_api_and_chat_completions() {
    let backend = Replay::start([openai_stream()]);
    let proxy = litellm("translate", &config(&backend.base_url()));
    let model = model(&proxy, true);
    let history = vec![
        Message::system("Be brief."),
        Message::user(Content::from(vec![
            Part::text("Weather where this photo was taken?"),
            Part::image(Source::base64("image/png", "iVBORw0KGgo=")),
            Part::file(
                Source::base64("application/pdf", "JVBERi0="),
                Some("trip.pdf".into()),
            ),
        ])),
        Message::assistant_with_calls(
            Content::from(vec![
                Part::Reasoning(
                    Reasoning::new("anthropic", "A photo of Oslo.")
                        .with_data("signature", "c2lnbmF0dXJl"),
                ),
                Part::Reasoning(
                    Reasoning::new("anthropic", "").with_data("redacted_thinking", "cmVkYWN0ZWQ="),
                ),
            ]),
            vec![ToolCall::raw(
                "toolu_1",
                "get_weather",
                r#"{"location":"Oslo"}"#,
            )],
        ),
        Message::tool(
            "toolu_1",
            "get_weather",
            Content::from(vec![
                Part::text("15C, see the map:"),
                Part::image(Source::base64("image/png", "bWFw")),
            ]),
        ),
    ];
    let mut request = ModelRequest::new(history.into());
    request.tools = std::sync::Arc::from([std::sync::Arc::new(weather().info().clone())]);
    request.extensions_mut().insert(CacheBreakpoints::all());

    let reply = model.oneshot(request).await.unwrap_or_else(|e| {
        let seen: Vec<_> = backend
            .requests()
            .iter()
            .map(|r| (r.path.clone(), r.text()))
            .collect();
        panic!("{e}\nbackend saw: {seen:#?}")
    });
    let reply = reply.into_message().await.unwrap();
    let sent = backend.requests();
    let sent = sent
        .iter()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap()
        .json();
    let messages = &sent["messages"];

    // Faithful: the system prompt, an image, the call and its arguments, tool text, tools.
    assert_eq!(
        messages[0],
        json!({"role": "system", "content": [{"type": "text", "text": "Be brief."}]})
    );
    let question = &messages[1]["content"];
    assert_eq!(
        question[1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}})
    );
    let call = &messages[2]["tool_calls"][0];
    assert_eq!(call["id"], "toolu_1");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"location": "Oslo"}));
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["content"][0]["text"], "15C, see the map:");
    assert_eq!(sent["tools"][0]["function"]["name"], "get_weather");
    // Not faithful: the PDF goes as an image URL (OpenAI reads PDFs as `file` parts, its
    // title is lost); the tool's image moves to a user message of its own after the
    // results; the thinking rides in fields that chat completion servers ignore
    // (`thinking_blocks`, `reasoning_content`), the signature kept but the redacted block's
    // data base64-decoded; the cache breakpoints are dropped.
    assert_eq!(
        question[2],
        json!({"type": "image_url", "image_url": {"url": "data:application/pdf;base64,JVBERi0="}})
    );
    assert_eq!(messages[4]["role"], "user");
    assert_eq!(
        messages[4]["content"][1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,bWFw"}})
    );
    assert_eq!(
        messages[2]["thinking_blocks"],
        json!([
            {"type": "thinking", "thinking": "A photo of Oslo.", "signature": "c2lnbmF0dXJl"},
            {"type": "redacted_thinking", "data": "redacted"}
        ])
    );
    assert_eq!(messages[2]["reasoning_content"], "A photo of Oslo.");
    assert!(!sent.to_string().contains("cache_control"));

    // Back: `reasoning_content` becomes a thinking block with an empty signature, the call
    // streams as `input_json_delta`, the usage keeps the cached tokens.
    let thinking: Vec<_> = reply.full_content().reasoning().cloned().collect();
    assert_eq!(
        thinking,
        [Reasoning::new("anthropic", "Thinking it over.").with_data("signature", "")]
    );
    assert_eq!(reply.content(), "Looking.");
    assert_eq!(
        reply.tool_calls(),
        [ToolCall::raw(
            "call_1",
            "get_weather",
            "{\"location\": \"Oslo\"}"
        )]
    );
}
