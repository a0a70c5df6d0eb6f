//! The OpenAI chunk decoder through the delta stream, as a streamed reply is read.

#![allow(clippy::unwrap_used)]

use futures::{StreamExt, executor, stream};
use serde_json::json;

use super::ChunkDecoder;
use crate::message::{Message, ToolCall};
use crate::model::{MessageAccumulator, ModelDelta};
use crate::model::{Usage, UsageMeter};
use crate::providers::openai::OpenAiError;
use crate::providers::sse::DeltaStream;

/// Runs a body through a delta stream: its deltas, then its error if it failed.
fn deltas(
    body: Vec<Result<String, OpenAiError>>,
    meter: Option<UsageMeter>,
) -> (Vec<ModelDelta>, Option<OpenAiError>) {
    let stream = DeltaStream::new(stream::iter(body), ChunkDecoder::new(), meter, None);
    let items: Vec<_> = executor::block_on(stream.collect());
    let mut out = Vec::new();
    let mut error = None;
    for item in items {
        match item {
            Ok(delta) => out.push(delta),
            Err(e) => {
                assert!(error.is_none(), "the stream ends after its first error");
                error = Some(e);
            }
        }
    }
    (out, error)
}

fn sse(chunks: &[serde_json::Value]) -> Vec<Result<String, OpenAiError>> {
    let mut body: Vec<_> = chunks
        .iter()
        .map(|c| Ok(format!("data: {c}\n\n")))
        .collect();
    body.push(Ok("data: [DONE]\n\n".into()));
    body
}

fn message(deltas: Vec<ModelDelta>) -> Message {
    let mut acc = MessageAccumulator::default();
    deltas.into_iter().for_each(|d| acc.push(d));
    acc.finish()
}

#[test]
fn text_and_fragmented_tool_calls_become_deltas_and_usage_is_recorded_at_done() {
    let meter = UsageMeter::new();
    let body = sse(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "Let me "}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "look."}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": ""}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"x\":"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], "usage": null}),
        json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}),
    ]);
    let (deltas, error) = deltas(body, Some(meter.clone()));
    assert!(error.is_none(), "{error:?}");
    assert_eq!(deltas[0], ModelDelta::Text("Let me ".into()));
    let message = message(deltas);
    assert_eq!(message.content(), "Let me look.");
    assert_eq!(
        message.tool_calls(),
        [
            ToolCall::raw("a", "f", "{\"x\":1}"),
            ToolCall::raw("b", "g", "{}")
        ]
    );
    assert_eq!(meter.total(), Usage::new(7, 3, 10));
    assert_eq!(meter.calls(), 1);
}

#[test]
fn usage_is_recorded_only_once_the_stream_is_drained_to_done() {
    let meter = UsageMeter::new();
    let body = sse(&[
        json!({"choices": [{"delta": {"content": "Hi"}}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 1}}),
    ]);
    let model = Some("small".to_owned());
    let mut stream = DeltaStream::new(
        stream::iter(body),
        ChunkDecoder::new(),
        Some(meter.clone()),
        model,
    );
    let first = executor::block_on(stream.next());
    assert!(matches!(first, Some(Ok(ModelDelta::Text(_)))));
    assert_eq!(meter.calls(), 0, "not before the stream is drained");
    let last = executor::block_on(stream.next());
    let Some(Ok(ModelDelta::Usage { model, usage })) = last else {
        panic!("the usage is the last delta: {last:?}")
    };
    assert_eq!(
        (model.as_deref(), usage),
        (Some("small"), Usage::new(2, 1, 3))
    );
    assert!(executor::block_on(stream.next()).is_none());
    assert_eq!(meter.total(), Usage::new(2, 1, 3));
    assert!(
        executor::block_on(stream.next()).is_none(),
        "ended streams stay ended"
    );
    assert_eq!(meter.calls(), 1, "recorded once");
}

#[test]
fn ids_and_names_repeated_in_every_fragment_are_sent_once() {
    let fragment = |args: &str| {
        json!({"choices": [{"delta": {"tool_calls": [
            {"index": 0, "id": "a", "type": "function", "function": {"name": "search", "arguments": args}}
        ]}}]})
    };
    let (deltas, error) = deltas(sse(&[fragment("{\"q\":"), fragment("\"rust\"}")]), None);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        deltas,
        [
            ModelDelta::ToolCall {
                index: 0,
                id: Some("a".into()),
                name: Some("search".into()),
                arguments: "{\"q\":".into()
            },
            ModelDelta::ToolCall {
                index: 0,
                id: None,
                name: None,
                arguments: "\"rust\"}".into()
            },
        ]
    );
    assert_eq!(
        message(deltas).tool_calls(),
        [ToolCall::raw("a", "search", "{\"q\":\"rust\"}")]
    );
}

#[test]
fn calls_without_an_index_are_told_apart_by_their_ids() {
    let call = |id: Option<&str>, name: Option<&str>, args: &str| {
        json!({"choices": [{"delta": {"tool_calls": [
            {"id": id, "function": {"name": name, "arguments": args}}
        ]}}]})
    };
    let body = sse(&[
        call(Some("a"), Some("f"), "{\"x\""),
        call(None, None, ":1}"),
        call(Some("b"), Some("g"), "{}"),
    ]);
    let (deltas, error) = deltas(body, None);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        message(deltas).tool_calls(),
        [
            ToolCall::raw("a", "f", "{\"x\":1}"),
            ToolCall::raw("b", "g", "{}")
        ]
    );
}

#[test]
fn sparse_server_indices_become_dense() {
    let body = sse(&[json!({"choices": [{"delta": {"tool_calls": [
        {"index": 1000000, "id": "a", "function": {"name": "f", "arguments": "{}"}}
    ]}}]})]);
    let (deltas, _) = deltas(body, None);
    assert!(matches!(deltas[0], ModelDelta::ToolCall { index: 0, .. }));
}

#[test]
fn a_stream_without_done_is_incomplete_after_its_deltas() {
    let mut body = sse(&[json!({"choices": [{"delta": {"content": "Hel"}}]})]);
    body.pop();
    let meter = UsageMeter::new();
    let (deltas, error) = deltas(body, Some(meter.clone()));
    assert_eq!(deltas, [ModelDelta::Text("Hel".into())]);
    assert!(
        matches!(error, Some(OpenAiError::StreamIncomplete)),
        "{error:?}"
    );
    assert_eq!(meter.calls(), 0, "a failed call records no usage");
}

#[test]
fn a_malformed_chunk_fails_the_stream_with_its_data() {
    let body = vec![
        Ok("data: {\"choices\": [{\"delta\": {\"content\": \"a\"}}]}\n\n".to_owned()),
        Ok("data: {\"choices\": [{\"del\n\n".to_owned()),
        Ok("data: {\"choices\": [{\"delta\": {\"content\": \"b\"}}]}\n\n".to_owned()),
    ];
    let (deltas, error) = deltas(body, None);
    assert_eq!(deltas, [ModelDelta::Text("a".into())]);
    match error {
        Some(OpenAiError::MalformedChunk { data, .. }) => {
            assert_eq!(data, "{\"choices\": [{\"del")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_error_chunk_fails_the_stream_with_the_servers_message() {
    let body = sse(&[json!({"error": {"message": "overloaded", "code": "server_error"}})]);
    let (_, error) = deltas(body, None);
    match error {
        Some(OpenAiError::StreamError { message, code }) => {
            assert_eq!(
                (message.as_str(), code.as_deref()),
                ("overloaded", Some("server_error"))
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_body_error_ends_the_stream_with_that_error() {
    let body = vec![
        Ok("data: {\"choices\": [{\"delta\": {\"content\": \"a\"}}]}\n\n".to_owned()),
        Err(OpenAiError::StreamIncomplete),
        Ok("data: [DONE]\n\n".to_owned()),
    ];
    let (deltas, error) = deltas(body, None);
    assert_eq!(deltas, [ModelDelta::Text("a".into())]);
    assert!(error.is_some());
}
