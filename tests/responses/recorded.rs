//! OpenAI's published replies, replayed byte for byte: what the model reads of them, and
//! what it sends back on the next turns (validated against the official SDK's types).

use std::convert::Infallible;

use futures::StreamExt;
use serde_json::{Value, json};
use tower_adk::content::{Content, Part, Reasoning, Source};
use tower_adk::model::{Usage, UsageMeter};
use tower_adk::providers::openai::OpenAiError;
use tower_adk::providers::openai::responses::{
    ReasoningEffort, ReasoningSummary, ResponsesModel, ResponsesModelBuilder,
};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, AgentResult, Message, Tool, ToolInfo, ToolOutput, ToolRequest,
};

use crate::replay::{Canned, Replay, recorded};
use crate::{assert_valid_for_the_sdk, items, weather};

/// The model as the tool-loop turns were recorded: o4-mini, reasoning summaries.
pub(crate) fn builder(replay: &Replay) -> ResponsesModelBuilder {
    ResponsesModel::builder()
        .base_url(replay.base_url())
        .api_key("sk-test")
        .model("o4-mini")
        .reasoning_effort(ReasoningEffort::Medium)
        .reasoning_summary(ReasoningSummary::Auto)
}

/// The three recorded turns of the tool loop.
pub(crate) const TOOL_LOOP: [Canned; 3] = [
    Canned::File("tool_loop_1.sse"),
    Canned::File("tool_loop_2.sse"),
    Canned::File("tool_loop_3.sse"),
];

/// The JSON text of the reasoning item that a turn's `response.output_item.done` carried,
/// exactly as the server wrote it.
pub(crate) fn reasoning_item_as_sent(file: &str) -> String {
    let text = String::from_utf8(recorded(file)).unwrap();
    let done = text
        .split("\n\n")
        .find(|event| {
            event.starts_with("event: response.output_item.done")
                && event.contains(r#""type":"reasoning""#)
        })
        .unwrap();
    let start = done.find(r#""item":"#).unwrap() + r#""item":"#.len();
    json_object_at(&done[start..]).to_owned()
}

/// The JSON object that `text` starts with.
fn json_object_at(text: &str) -> &str {
    let (mut depth, mut in_string, mut escaped) = (0, false, false);
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '{' if !in_string => depth += 1,
            '}' if !in_string => {
                depth -= 1;
                if depth == 0 {
                    return &text[..=at];
                }
            }
            _ => {}
        }
    }
    panic!("no whole object in {text}")
}

/// Asserts that a request carries turn `turn`'s reasoning item byte for byte, right before
/// the function call it produced (when it produced one).
pub(crate) fn assert_carries_reasoning_of(body_raw: &[u8], body: &Value, file: &str) {
    let item = reasoning_item_as_sent(file);
    let raw = String::from_utf8_lossy(body_raw);
    assert!(
        raw.contains(&item),
        "the request does not carry the reasoning item of {file} byte for byte:\n{item}\nin\n{raw}"
    );
    let recorded: Value = serde_json::from_str(&item).unwrap();
    let input = items(body);
    let at = input.iter().position(|i| *i == recorded).unwrap();
    let next = &input[at + 1];
    assert!(
        matches!(next["type"].as_str(), Some("function_call" | "message")),
        "the reasoning item is followed by what it produced: {next}"
    );
}

async fn run_to_end(agent: &Agent, request: AgentRequest) -> (Vec<AgentEvent>, AgentResult) {
    let mut run = agent.run(request);
    let mut events = Vec::new();
    while let Some(event) = run.next().await {
        match event.unwrap() {
            AgentEvent::Completed(result) => return (events, *result),
            event => events.push(event),
        }
    }
    panic!("no result: {events:?}")
}

#[tokio::test]
async fn reasoning_items_of_each_turn_are_in_the_next_turns_requests_byte_for_byte() {
    let replay = Replay::start(TOOL_LOOP).await;
    let agent = Agent::builder(builder(&replay).build().unwrap())
        .tool(weather())
        .build()
        .unwrap();
    let meter = UsageMeter::new();
    let request = AgentRequest::user("What is the weather in Boston and in Cambridge?")
        .with_extension(meter.clone());
    let (events, result) = run_to_end(&agent, request).await;

    assert_eq!(
        result.final_message.content(),
        "It is 21°C in Boston and 20°C in Cambridge."
    );
    let records: Vec<_> = result
        .tool_records
        .iter()
        .map(|r| r.content.as_str())
        .collect();
    assert_eq!(records, ["21C in Boston, MA", "20C in Cambridge, MA"]);

    let raw = replay.raw_bodies();
    let bodies = replay.bodies();
    assert_eq!(bodies.len(), 3);
    assert_carries_reasoning_of(&raw[1], &bodies[1], "tool_loop_1.sse");
    assert_carries_reasoning_of(&raw[2], &bodies[2], "tool_loop_1.sse");
    assert_carries_reasoning_of(&raw[2], &bodies[2], "tool_loop_2.sse");
    for body in &bodies {
        assert_eq!(body["store"], false);
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    }
    assert_valid_for_the_sdk("tool_loop", &bodies);

    // The summaries streamed as reasoning, before the tools ran.
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReasoningDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        reasoning.starts_with("**Responding to a greeting**"),
        "{reasoning}"
    );
    assert!(reasoning.contains("**Answering**"), "{reasoning}");

    // Usage summed per run, under the configured model name, and in the meter.
    let total = Usage::new(81 + 1200 + 1400, 1035 + 300 + 120, 1116 + 1500 + 1520)
        .with_cache(1024 + 1152, 0)
        .with_reasoning(832 + 256 + 64);
    assert_eq!(result.usage.total, total);
    assert_eq!(result.usage.calls, 3);
    assert_eq!(result.usage.by_model["o4-mini"], total);
    assert_eq!(meter.total(), total);
}

#[tokio::test]
async fn openais_streaming_example_is_read_as_it_is_published() {
    // Its events carry no sequence numbers and a `...` line stands for the deltas left
    // out: the text is what the deltas said.
    let replay = Replay::start([Canned::File("text.sse")]).await;
    let agent = Agent::builder(builder(&replay).build().unwrap())
        .build()
        .unwrap();
    let (events, result) = run_to_end(&agent, AgentRequest::user("Hello!")).await;
    assert_eq!(result.final_message.content(), "Hi");
    assert!(events.iter().any(|e| e.text_delta() == Some("Hi")));
    assert_eq!(result.usage.total, Usage::new(37, 11, 48));
}

#[tokio::test]
async fn whole_replies_call_a_function_then_answer_with_reasoning_tokens_counted() {
    let replay = Replay::start([
        Canned::File("function_call.json"),
        Canned::File("reasoning.json"),
    ])
    .await;
    let model = builder(&replay).stream(false).build().unwrap();
    let agent = Agent::builder(model).tool(weather()).build().unwrap();
    let (_, result) = run_to_end(
        &agent,
        AgentRequest::user("What is the weather like in Boston today?"),
    )
    .await;

    assert_eq!(
        result.final_message.content(),
        "The classic tongue twister..."
    );
    assert_eq!(result.tool_records[0].content, "21C in Boston, MA");
    let bodies = replay.bodies();
    assert_eq!(bodies[0]["stream"], false);
    assert_eq!(
        items(&bodies[1])[1..],
        [
            json!({"type": "function_call", "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k",
                   "name": "get_current_weather",
                   "arguments": "{\"location\":\"Boston, MA\",\"unit\":\"celsius\"}"}),
            json!({"type": "function_call_output", "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k",
                   "output": "21C in Boston, MA"}),
        ]
    );
    let total = Usage::new(291 + 81, 23 + 1035, 314 + 1116).with_reasoning(832);
    assert_eq!(result.usage.total, total);
    assert_valid_for_the_sdk("whole", &bodies);
}

#[tokio::test]
async fn an_image_and_a_pdf_reach_the_model_as_input_parts() {
    let replay = Replay::start([Canned::File("reasoning.json")]).await;
    let agent = Agent::builder(builder(&replay).build().unwrap())
        .build()
        .unwrap();
    let question = Content::from(vec![
        Part::text("What do these show?"),
        Part::image(Source::base64("image/png", "iVBORw0KGgo=")),
        Part::image(Source::url("https://example.com/chart.png")),
        Part::file(
            Source::base64("application/pdf", "JVBERi0xLjQK"),
            Some("report.pdf".into()),
        ),
        Part::file(Source::url("https://example.com/paper.pdf"), None),
    ]);
    agent
        .run(AgentRequest::new(vec![Message::user(question)]))
        .await
        .unwrap();

    let body = &replay.bodies()[0];
    assert_eq!(
        items(body)[0]["content"],
        json!([
            {"type": "input_text", "text": "What do these show?"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"},
            {"type": "input_image", "image_url": "https://example.com/chart.png", "detail": "auto"},
            {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0xLjQK", "filename": "report.pdf"},
            {"type": "input_file", "file_url": "https://example.com/paper.pdf"}
        ])
    );
    assert_valid_for_the_sdk("media", std::slice::from_ref(body));
}

/// A tool that returns a chart: text and an image.
pub(crate) fn chart() -> Tool {
    Tool::from_fn(
        ToolInfo::new("get_current_weather", "Charts the weather"),
        |_: ToolRequest| async move {
            Ok::<_, Infallible>(
                ToolOutput::new("the chart:")
                    .with_part(Part::image(Source::base64("image/png", "iVBORw0KGgo="))),
            )
        },
    )
}

#[tokio::test]
async fn a_tool_results_image_reaches_the_model_in_its_function_call_output() {
    let replay = Replay::start([
        Canned::File("function_call.json"),
        Canned::File("reasoning.json"),
    ])
    .await;
    let agent = Agent::builder(builder(&replay).build().unwrap())
        .tool(chart())
        .build()
        .unwrap();
    agent.run(AgentRequest::user("Chart it")).await.unwrap();

    let bodies = replay.bodies();
    let output = items(&bodies[1]).last().unwrap();
    assert_eq!(
        *output,
        json!({"type": "function_call_output", "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k",
        "output": [
            {"type": "input_text", "text": "the chart:"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}
        ]})
    );
    assert_valid_for_the_sdk("tool_image", &bodies);
}

#[tokio::test]
async fn error_events_and_failed_responses_are_typed_retryable_errors() {
    for (file, message, code) in [
        ("error.sse", "Something went wrong", "ERR_SOMETHING"),
        (
            "failed.sse",
            "The model failed to generate a response.",
            "server_error",
        ),
    ] {
        let replay = Replay::start([Canned::File(file)]).await;
        let agent = Agent::builder(builder(&replay).build().unwrap())
            .build()
            .unwrap();
        let error = agent.run(AgentRequest::user("Hello!")).await.unwrap_err();
        let error = OpenAiError::find(&error).unwrap_or_else(|| panic!("{error:?}"));
        match error {
            OpenAiError::StreamError {
                message: m,
                code: c,
            } => {
                assert_eq!((m.as_str(), c.as_deref()), (message, Some(code)), "{file}");
            }
            other => panic!("{file}: {other:?}"),
        }
        assert!(error.is_retryable(), "{file}");
    }
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_typed_retryable_errors() {
    let replay = Replay::start([
        Canned::Status(429, "Rate limit reached"),
        Canned::Status(503, "The engine is currently overloaded"),
        Canned::Status(400, "Invalid input"),
    ])
    .await;
    let agent = Agent::builder(builder(&replay).build().unwrap())
        .build()
        .unwrap();
    let mut errors = Vec::new();
    for _ in 0..3 {
        let error = agent.run(AgentRequest::user("hi")).await.unwrap_err();
        let error = OpenAiError::find(&error).unwrap();
        errors.push((error.status().map(|s| s.as_u16()), error.is_retryable()));
        if let OpenAiError::RateLimited { message, .. } = error {
            assert_eq!(message, "Rate limit reached");
        }
    }
    assert_eq!(
        errors,
        [(Some(429), true), (Some(503), true), (Some(400), false)]
    );
}

#[tokio::test]
async fn another_providers_reasoning_is_never_sent() {
    let replay = Replay::start([Canned::File("reasoning.json")]).await;
    let agent = Agent::builder(builder(&replay).build().unwrap())
        .build()
        .unwrap();
    let thinking = Reasoning::new("anthropic", "Let me think.").with_data("signature", "EqQBCkYI");
    let earlier = Message::assistant(Content::from(vec![
        Part::Reasoning(thinking),
        Part::text("Hello."),
    ]));
    let request = AgentRequest::new(vec![Message::user("Hi"), earlier, Message::user("Again")]);
    agent.run(request).await.unwrap();

    let body = &replay.bodies()[0];
    assert!(!body.to_string().contains("EqQBCkYI"), "{body}");
    assert!(!body.to_string().contains("Let me think."), "{body}");
    assert_eq!(
        items(body)[1],
        json!({"type": "message", "role": "assistant", "content": "Hello."})
    );
}
