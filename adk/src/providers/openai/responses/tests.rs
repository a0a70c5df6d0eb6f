//! The request body from a history, and the event decoder through the delta stream.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use futures::{StreamExt, executor, stream};
use serde_json::{Value, json};

use super::request;
use super::{EventDecoder, ReasoningEffort, ReasoningSummary, ResponsesModel};
use crate::content::{Content, Part, Reasoning, Source};
use crate::message::{Message, ToolCall};
use crate::model::{MessageAccumulator, ModelDelta, ModelRequest, ToolChoice, Usage, UsageMeter};
use crate::providers::openai::OpenAiError;
use crate::providers::sse::DeltaStream;
use crate::tool::ToolInfo;

fn body(shared: &super::Shared, request: &ModelRequest) -> Value {
    serde_json::from_slice(&request::body(shared, request)).unwrap()
}

fn model() -> ResponsesModel {
    ResponsesModel::builder()
        .base_url("http://127.0.0.1:9/v1")
        .model("o4-mini")
        .extra_body("service_tier", "flex")
        .extra_body("store", true)
        .build()
        .unwrap()
}

fn ours(id: &str, summary: &str, encrypted: &str) -> Reasoning {
    Reasoning::new("openai-responses", summary)
        .with_id(id)
        .with_data("encrypted_content", encrypted)
}

#[test]
fn the_history_becomes_input_items_with_reasoning_in_its_place_and_media_in_parts() {
    let photo = Part::image(Source::base64("image/png", "iVBO"));
    let pdf = Part::file(Source::base64("application/pdf", "JVBE"), None);
    let question = Content::from(vec![Part::text("What is this?"), photo.clone(), pdf]);
    let claude = Reasoning::new("anthropic", "hmm").with_data("signature", "c2ln");
    let turn = Content::from(vec![
        Part::Reasoning(claude),
        Part::Reasoning(ours("rs_1", "**Plan**\n\nChart it.", "gAAAAB-x_y==")),
        Part::text("Let me chart it."),
    ]);
    let chart = Content::from(vec![Part::text("the chart:"), photo]);
    let request = ModelRequest::new(
        vec![
            Message::system("Be brief."),
            Message::system("Use tools."),
            Message::user(question),
            Message::assistant_with_calls(turn, vec![ToolCall::raw("call_1", "chart", "")]),
            Message::tool("call_1", "chart", chart),
            Message::tool("call_2", "chart", "no chart"),
        ]
        .into(),
    );
    let body = body(&model().shared, &request);
    assert_eq!(body["instructions"], "Be brief.\n\nUse tools.");
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "What is this?"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBO", "detail": "auto"},
                {"type": "input_file", "file_data": "data:application/pdf;base64,JVBE", "filename": "file.pdf"}
            ]},
            {"type": "reasoning", "id": "rs_1",
             "summary": [{"type": "summary_text", "text": "**Plan**\n\nChart it."}],
             "encrypted_content": "gAAAAB-x_y=="},
            {"type": "message", "role": "assistant", "content": "Let me chart it."},
            {"type": "function_call", "call_id": "call_1", "name": "chart", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": [
                {"type": "input_text", "text": "the chart:"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBO", "detail": "auto"}
            ]},
            {"type": "function_call_output", "call_id": "call_2", "output": "no chart"}
        ])
    );
    // Another provider's reasoning never leaves; the settings win over extra fields.
    assert!(!body.to_string().contains("c2ln"));
    assert_eq!(body["store"], false);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["service_tier"], "flex");
    assert_eq!(body["stream"], true);
}

#[test]
fn options_tools_and_reasoning_settings_are_sent_in_the_responses_format() {
    let model = ResponsesModel::builder()
        .model("o4-mini")
        .store(true)
        .reasoning_effort(ReasoningEffort::High)
        .reasoning_summary(ReasoningSummary::Detailed)
        .stream(false)
        .build()
        .unwrap();
    let mut request = ModelRequest::new(vec![Message::user("hi")].into());
    request.tools = Arc::from([Arc::new(ToolInfo::new("weather", "The weather"))]);
    request.options.tool_choice = ToolChoice::Tool("weather".into());
    request.options.parallel_tool_calls = Some(false);
    request.options.max_tokens = Some(64);
    request.options.stop = vec!["END".into()];
    let body = body(&model.shared, &request);
    assert_eq!(
        body["input"],
        json!([{"type": "message", "role": "user", "content": "hi"}])
    );
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["name"], "weather");
    assert_eq!(body["tools"][0]["strict"], false);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "name": "weather"})
    );
    assert_eq!(body["parallel_tool_calls"], false);
    assert_eq!(body["max_output_tokens"], 64);
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "detailed"})
    );
    assert_eq!(
        (&body["store"], &body["stream"]),
        (&json!(true), &json!(false))
    );
    for absent in ["include", "stop", "instructions"] {
        assert!(body.get(absent).is_none(), "{absent}: {body}");
    }
}

/// Runs events through a delta stream: the deltas, then the error if it failed.
fn decode(events: &[Value], meter: Option<UsageMeter>) -> (Vec<ModelDelta>, Option<OpenAiError>) {
    let body: Vec<Result<String, OpenAiError>> = events
        .iter()
        .map(|event| {
            Ok(format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap()
            ))
        })
        .collect();
    let deltas = DeltaStream::new(
        stream::iter(body),
        EventDecoder::new(),
        meter,
        Some("m".into()),
    );
    let mut out = Vec::new();
    for item in executor::block_on(deltas.collect::<Vec<_>>()) {
        match item {
            Ok(delta) => out.push(delta),
            Err(error) => return (out, Some(error)),
        }
    }
    (out, None)
}

fn message(deltas: &[ModelDelta]) -> Message {
    let mut reply = MessageAccumulator::default();
    deltas.iter().cloned().for_each(|delta| reply.push(delta));
    reply.finish()
}

fn completed(usage: Value) -> Value {
    json!({"type": "response.completed", "response": {"status": "completed", "output": [], "usage": usage}})
}

#[test]
fn streamed_reasoning_calls_and_text_become_deltas_and_the_usage_is_recorded() {
    let reasoning = json!({"id": "rs_1", "type": "reasoning", "summary": [
        {"type": "summary_text", "text": "**A**\n\nOne."}, {"type": "summary_text", "text": "**B**"}
    ], "encrypted_content": "gAAAAB-enc=="});
    let call = json!({"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""});
    let events = [
        json!({"type": "response.created", "response": {"status": "in_progress", "output": [], "usage": null}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "summary_index": 0}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "summary_index": 0, "delta": "**A**\n\n"}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "summary_index": 0, "delta": "One."}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "summary_index": 1}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "summary_index": 1, "delta": "**B**"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "msg_1", "type": "message", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Let me "}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "look."}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": call}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"x\":"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "1}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "arguments": "{\"x\":1}"}),
        json!({"type": "response.shell_call_output_content.delta", "item_id": "sh_1", "delta": {"stdout": "x"}}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{\"x\":1}"}}),
        completed(
            json!({"input_tokens": 100, "input_tokens_details": {"cached_tokens": 64},
                         "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 30},
                         "total_tokens": 150}),
        ),
    ];
    let meter = UsageMeter::new();
    let (deltas, error) = decode(&events, Some(meter.clone()));
    assert!(error.is_none(), "{error:?}");
    let ModelDelta::Reasoning(first) = &deltas[0] else {
        panic!("{deltas:?}")
    };
    assert_eq!(
        (first.text.as_str(), first.id.as_deref()),
        ("**A**\n\n", Some("rs_1"))
    );
    let message = message(&deltas);
    assert_eq!(
        message.parts()[..],
        [
            Part::Reasoning(ours("rs_1", "**A**\n\nOne.\n\n**B**", "gAAAAB-enc==")),
            Part::text("Let me look.")
        ]
    );
    assert_eq!(
        message.tool_calls(),
        [ToolCall::raw("call_1", "f", "{\"x\":1}")]
    );
    let usage = Usage::new(100, 50, 150)
        .with_cache(64, 0)
        .with_reasoning(30);
    assert_eq!(meter.total(), usage);
    assert_eq!(
        deltas.last(),
        Some(&ModelDelta::Usage {
            model: Some("m".into()),
            usage
        })
    );
}

#[test]
fn items_sent_only_when_done_give_their_text_reasoning_and_calls_whole() {
    let events = [
        json!({"type": "response.output_item.done", "item": {"id": "rs_1", "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Thought."}], "encrypted_content": "enc"}}),
        json!({"type": "response.output_item.done", "item": {"id": "msg_1", "type": "message",
            "content": [{"type": "output_text", "text": "Hi."}, {"type": "refusal", "refusal": " No."}]}}),
        json!({"type": "response.output_item.done", "item": {"id": "fc_1", "type": "function_call",
            "call_id": "c1", "name": "f", "arguments": "{}"}}),
        json!({"type": "response.output_item.done", "item": {"id": "fc_2", "type": "function_call",
            "call_id": "c2", "name": "g", "arguments": "{\"y\":2}"}}),
        json!({"type": "response.incomplete", "response": {"status": "incomplete", "usage": null}}),
    ];
    let (deltas, error) = decode(&events, None);
    assert!(error.is_none(), "{error:?}");
    let message = message(&deltas);
    assert_eq!(
        message.parts()[..],
        [
            Part::Reasoning(ours("rs_1", "Thought.", "enc")),
            Part::text("Hi. No.")
        ]
    );
    assert_eq!(
        message.tool_calls(),
        [
            ToolCall::raw("c1", "f", "{}"),
            ToolCall::raw("c2", "g", "{\"y\":2}")
        ]
    );
}

#[test]
fn failed_responses_and_error_events_are_retryable_errors_with_the_servers_message() {
    let failed = json!({"type": "response.failed", "response": {"status": "failed",
        "error": {"code": "server_error", "message": "The model failed to generate a response."}}});
    let error_event = json!({"type": "error", "code": "ERR_SOMETHING", "message": "Something went wrong", "param": null});
    for (event, message, code) in [
        (
            failed,
            "The model failed to generate a response.",
            "server_error",
        ),
        (error_event, "Something went wrong", "ERR_SOMETHING"),
    ] {
        let (_, error) = decode(&[event], None);
        match error {
            Some(
                ref e @ OpenAiError::StreamError {
                    message: ref m,
                    code: ref c,
                },
            ) => {
                assert_eq!((m.as_str(), c.as_deref()), (message, Some(code)));
                assert!(e.is_retryable());
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_stream_that_ends_before_its_response_completes_is_incomplete() {
    let events = [json!({"type": "response.output_text.delta", "item_id": "m", "delta": "Hi"})];
    let (deltas, error) = decode(&events, None);
    assert_eq!(deltas, [ModelDelta::Text("Hi".into())]);
    assert!(
        matches!(error, Some(OpenAiError::StreamIncomplete)),
        "{error:?}"
    );
}
