//! What async-openai 0.43.0's Responses API types carry, and what they lose, on the same
//! bytes tower-adk's `ResponsesModel` reads: OpenAI's published replies
//! (`tests/responses/recorded/` of the repository) and a stream LiteLLM 1.108.0 sent
//! (`fixtures/litellm-bridged.sse`, recorded from its `/v1/responses` bridged to llmock's
//! chat completions).
//!
//! Each event goes through `serde_json::from_str::<ResponseStreamEvent>`, exactly what
//! async-openai's client does with each SSE event's data (`client.rs`, `stream`).
//!
//!     cargo test    # in this folder (the `evaluate` script runs it)

use std::path::Path;

use async_openai::types::responses::{
    FunctionCallOutput, InputContent, InputItem, Item, OutputItem, ResponseStreamEvent,
};
use serde_json::Value;

/// The data of each event of an SSE file.
fn events(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .filter(|data| data != "[DONE]")
        .collect()
}

fn recorded(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/responses/recorded").join(name)
}

fn parse(data: &str) -> Result<ResponseStreamEvent, serde_json::Error> {
    serde_json::from_str(data)
}

/// How many events of a stream async-openai refuses, and the first refusal.
fn refused(events: &[String]) -> (usize, Option<String>) {
    let errors: Vec<String> = events
        .iter()
        .filter_map(|data| parse(data).err().map(|e| e.to_string()))
        .collect();
    (errors.len(), errors.into_iter().next())
}

// --- What it loses ---

#[test]
fn loses_every_event_of_openais_published_streaming_example() {
    // The reference's `Streaming` example has no `sequence_number`, which async-openai
    // requires on every event: each event is an error, the text and the usage are lost.
    let events = events(&recorded("text.sse"));
    let (count, first) = refused(&events);
    assert_eq!(count, events.len(), "{first:?}");
    assert!(first.unwrap().contains("sequence_number"));
}

#[test]
fn loses_the_usage_of_a_completed_event_without_input_tokens_details() {
    // The reference's `response.completed` example: its usage has no
    // `input_tokens_details`, which async-openai's `ResponseUsage` requires.
    let completed = r#"{"type":"response.completed","sequence_number":1,"response":{"id":"resp_123","object":"response","created_at":1740855869,"status":"completed","model":"gpt-4o-mini-2024-07-18","output":[],"usage":{"input_tokens":0,"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":0}}}"#;
    let error = parse(completed).unwrap_err().to_string();
    assert!(error.contains("input_tokens_details"), "{error}");
}

#[test]
fn loses_the_servers_message_of_openais_published_failed_event() {
    // The reference's `response.failed` example (no `sequence_number`): the caller gets a
    // JSON error instead of "The model failed to generate a response." (`server_error`).
    let events = events(&recorded("failed.sse"));
    let failed = events.last().unwrap();
    assert!(failed.contains("The model failed to generate a response."));
    let error = parse(failed).unwrap_err().to_string();
    assert!(error.contains("sequence_number"), "{error}");
}

#[test]
fn loses_most_events_of_a_litellm_stream() {
    // LiteLLM's bridge writes `sequence_number` only on `response.output_item.done`: the
    // text deltas, the function call and its arguments, and `response.completed` (with the
    // usage) are errors; only the `done` items parse.
    let events = events(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/litellm-bridged.sse"));
    let (count, first) = refused(&events);
    let parsed: Vec<_> = events.iter().filter_map(|data| parse(data).ok()).collect();
    assert!(parsed
        .iter()
        .all(|e| matches!(e, ResponseStreamEvent::ResponseOutputItemDone(_))));
    assert!(count >= events.len() - 3, "{count} of {}: {first:?}", events.len());
}

#[test]
fn loses_a_whole_stream_to_one_event_kind_it_does_not_know() {
    // An event type newer than the crate (here one of a future API version) is an error
    // in the stream, not a skipped event: a reader that stops at the first error loses
    // the rest, one that goes on cannot tell it from a broken event.
    let unknown = r#"{"type":"response.output_text.annotation.updated","sequence_number":7}"#;
    assert!(parse(unknown).is_err());
}

// --- What it carries ---

#[test]
fn carries_a_reasoning_items_encrypted_content_byte_for_byte() {
    let events = events(&recorded("tool_loop_1.sse"));
    let done: Value = events
        .iter()
        .map(|data| serde_json::from_str::<Value>(data).unwrap())
        .find(|e| e["type"] == "response.output_item.done" && e["item"]["type"] == "reasoning")
        .unwrap();
    let Ok(ResponseStreamEvent::ResponseOutputItemDone(event)) =
        parse(&done.to_string())
    else {
        panic!("the recorded event parses")
    };
    let OutputItem::Reasoning(reasoning) = event.item else {
        panic!("a reasoning item")
    };
    // Sent back as an input item, the encrypted content is the same string.
    let input = InputItem::Item(Item::Reasoning(reasoning));
    let sent = serde_json::to_value(&input).unwrap();
    assert_eq!(sent["encrypted_content"], done["item"]["encrypted_content"]);
    assert_eq!(sent["id"], done["item"]["id"]);
    assert_eq!(sent["summary"], done["item"]["summary"]);
}

#[test]
fn carries_function_calls_their_outputs_with_images_and_input_files() {
    let call: Item = serde_json::from_str(
        r#"{"type":"function_call","call_id":"call_1","name":"get_current_weather","arguments":"{\"location\":\"Boston, MA\"}"}"#,
    )
    .unwrap();
    assert!(matches!(call, Item::FunctionCall(_)));
    let output: Item = serde_json::from_str(
        r#"{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"the chart:"},{"type":"input_image","image_url":"data:image/png;base64,iVBO","detail":"auto"}]}"#,
    )
    .unwrap();
    let Item::FunctionCallOutput(output) = output else {
        panic!("an output")
    };
    let FunctionCallOutput::Content(parts) = output.output else {
        panic!("parts")
    };
    assert!(matches!(parts[1], InputContent::InputImage(_)));
    let file: InputContent = serde_json::from_str(
        r#"{"type":"input_file","file_data":"data:application/pdf;base64,JVBE","filename":"a.pdf"}"#,
    )
    .unwrap();
    assert!(matches!(file, InputContent::InputFile(_)));
}

#[test]
fn carries_openais_stream_as_openai_writes_it_today() {
    // With `sequence_number` on every event and full usage details, as OpenAI streams
    // today (the tool-loop recordings), every event parses.
    for turn in ["tool_loop_1.sse", "tool_loop_2.sse", "tool_loop_3.sse"] {
        let (count, first) = refused(&events(&recorded(turn)));
        assert_eq!(count, 0, "{turn}: {first:?}");
    }
}
