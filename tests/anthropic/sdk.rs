//! The request bodies we send, validated by Anthropic's official Python SDK's published
//! types (`scripts/setup-litellm` pins `anthropic`): `tests/anthropic/sdk/
//! validate_requests.py` walks `MessageCreateParams` strictly, so a field the SDK does not
//! declare, a missing required one or a wrong literal fails the test.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};
use tower::ServiceExt;
use tower_adk::content::{Content, Part, Reasoning, Source};
use tower_adk::model::{ModelRequest, ResponseFormat, ToolChoice};
use tower_adk::providers::anthropic::CacheBreakpoints;
use tower_adk::{Agent, AgentRequest, Message, ToolCall, ToolInfo};

use crate::replay::{Replay, Reply};
use crate::servers::{python, scratch};
use crate::{builder, calculator, database};

/// Histories and options that use every block and field we send.
fn requests() -> Vec<ModelRequest> {
    let weather = Arc::new(ToolInfo::new("weather", "The weather").parameters(json!({
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]
    })));
    let media = Content::from(vec![
        Part::text("What do these show?"),
        Part::image(Source::base64("image/png", "iVBORw0KGgo=")),
        Part::image(Source::url("https://example.com/cat.jpg")),
        Part::file(
            Source::base64("application/pdf", "JVBERi0="),
            Some("a.pdf".into()),
        ),
        Part::file(Source::url("https://example.com/b.pdf"), None),
    ]);
    let thought = Content::from(vec![
        Part::Reasoning(
            Reasoning::new("anthropic", "Weather first.").with_data("signature", "c2ln"),
        ),
        Part::Reasoning(Reasoning::new("anthropic", "").with_data("redacted_thinking", "cmVk")),
        Part::text("Let me look."),
    ]);
    let chart = Content::from(vec![
        Part::text("the chart:"),
        Part::image(Source::base64("image/png", "iVBO")),
        Part::file(
            Source::base64("application/pdf", "JVBE"),
            Some("chart.pdf".into()),
        ),
    ]);
    let history = vec![
        Message::system("Be brief."),
        Message::user(media),
        Message::assistant_with_calls(
            thought,
            vec![ToolCall::raw("t1", "weather", r#"{"city":"Paris"}"#)],
        ),
        Message::tool("t1", "weather", chart),
        Message::tool_error("t1", "weather", "failed once"),
    ];
    let mut all = Vec::new();
    let choices = [
        ToolChoice::Auto,
        ToolChoice::Required,
        ToolChoice::None,
        ToolChoice::Tool("weather".into()),
    ];
    for (at, choice) in choices.into_iter().enumerate() {
        let mut request = ModelRequest::new(history.clone().into());
        request.tools = Arc::from([Arc::clone(&weather)]);
        request.options.tool_choice = choice;
        request.options.parallel_tool_calls = Some(at % 2 == 1);
        request.options.stop = vec!["END".into()];
        request.options.max_tokens = Some(2048);
        if at == 0 {
            request
                .extensions_mut()
                .insert(CacheBreakpoints::all().one_hour());
        }
        if at == 1 {
            let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"], "additionalProperties": false});
            request.options.response_format =
                Some(Arc::new(ResponseFormat::json_schema("answer", schema)));
        }
        all.push(request);
    }
    all
}

#[tokio::test]
async fn the_request_bodies_we_send_are_valid_for_anthropics_sdk() {
    // A thinking tool loop, through the agent.
    let server = Replay::start([
        Reply::stream("interleaved_1.sse"),
        Reply::stream("interleaved_2.sse"),
        Reply::stream("interleaved_3.sse"),
    ]);
    let model = builder(&server.base_url())
        .max_tokens(16_000)
        .thinking_budget(Some(10_000))
        .cache(CacheBreakpoints::all())
        .build()
        .unwrap();
    let agent = Agent::builder(model)
        .instruction("You are a revenue analyst.")
        .tool(calculator())
        .tool(database())
        .build()
        .unwrap();
    agent.run(AgentRequest::user("Revenue?")).await.unwrap();
    let mut bodies: Vec<Value> = server.bodies();

    // Every block and option, streamed and whole.
    for stream in [true, false] {
        let requests = requests();
        let replies = requests.iter().map(|_| Reply::json(200, "{}"));
        let server = Replay::start(replies.collect::<Vec<_>>());
        let model = builder(&server.base_url()).stream(stream).build().unwrap();
        for request in requests {
            // The replies are not messages: only the bodies sent matter here.
            let _ = model.clone().oneshot(request).await;
        }
        bodies.extend(server.bodies());
    }
    assert_eq!(bodies.len(), 3 + 8);

    let file = scratch("sdk").join("bodies.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&bodies).unwrap()).unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/anthropic/sdk/validate_requests.py");
    let output = Command::new(python())
        .arg(script)
        .arg(&file)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "invalid for Anthropic's SDK:\n{report}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        report.matches(": valid for anthropic 2.10.0").count(),
        bodies.len(),
        "{report}"
    );
}

#[test]
fn the_validator_refuses_what_the_sdk_does_not_declare() {
    let bodies = json!([
        {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}], "temperature_typo": 1},
        {"model": "m", "max_tokens": 1, "messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": "no signature"}]}]}
    ]);
    let file = scratch("sdk").join("refused.json");
    std::fs::write(&file, bodies.to_string()).unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/anthropic/sdk/validate_requests.py");
    let output = Command::new(python())
        .arg(script)
        .arg(&file)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success());
    assert_eq!(report.matches("INVALID").count(), 2, "{report}");
}
