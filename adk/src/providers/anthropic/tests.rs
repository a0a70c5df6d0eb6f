#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::sse::{EventDecoder, Flow, SseParser};
use super::{AnthropicError, AnthropicModel, ResponseFuture};
use crate::content::{Part, Reasoning};
use crate::message::{Message, ToolCall};
use crate::model::{MessageAccumulator, ModelDelta};

#[test]
fn the_model_and_its_future_are_send_and_sync() {
    fn send_sync<T: Send + Sync + 'static>() {}
    fn send<T: Send + 'static>() {}
    send_sync::<AnthropicModel>();
    send::<ResponseFuture>();
    send_sync::<AnthropicError>();
    send_sync::<super::PromptCache>();
}

/// A stream of these events (`event:` named by each one's `type`).
fn stream(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// The deltas of a body fed in pieces of `piece` bytes, and whether it was complete.
fn decode(body: &str, piece: usize) -> Result<(Vec<ModelDelta>, bool), AnthropicError> {
    let mut parser = SseParser::new();
    let mut decoder = EventDecoder::new();
    let mut deltas = Vec::new();
    let mut done = false;
    for bytes in body.as_bytes().chunks(piece) {
        parser.feed(bytes);
        while let Some(event) = parser.next_event()? {
            done |= decoder.decode(&event, &mut deltas)? == Flow::Done;
        }
    }
    deltas.extend(
        decoder
            .usage()
            .map(|usage| ModelDelta::Usage { model: None, usage }),
    );
    Ok((deltas, done))
}

fn message(deltas: Vec<ModelDelta>) -> Message {
    let mut reply = MessageAccumulator::default();
    deltas.into_iter().for_each(|delta| reply.push(delta));
    reply.finish()
}

fn start(index: usize, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

fn delta(index: usize, delta: Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": delta})
}

fn stop(index: usize) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn thinking(index: usize, text: &str, signature: &str) -> [Value; 4] {
    [
        start(
            index,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(index, json!({"type": "thinking_delta", "thinking": text})),
        delta(
            index,
            json!({"type": "signature_delta", "signature": signature}),
        ),
        stop(index),
    ]
}

fn tool_use(index: usize, id: &str, pieces: &[&str]) -> Vec<Value> {
    let mut events = vec![start(
        index,
        json!({"type": "tool_use", "id": id, "name": "calc", "input": {}}),
    )];
    events.extend((pieces.iter()).map(|p| {
        delta(
            index,
            json!({"type": "input_json_delta", "partial_json": p}),
        )
    }));
    events.push(stop(index));
    events
}

#[test]
fn thinking_between_tool_calls_keeps_its_place_whatever_the_chunking() {
    let mut events = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}),
    ];
    events.extend(thinking(0, "First the calculator.", "sig/1=="));
    events.extend(tool_use(1, "t1", &["", "{\"x\":", " 1}"]));
    events.extend(thinking(2, "Now the other.", "sig/2=="));
    events.extend(tool_use(3, "t2", &[]));
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}}));
    events.push(json!({"type": "message_stop"}));
    let body = stream(&events);
    let (whole, done) = decode(&body, body.len()).unwrap();
    assert!(done);
    for piece in [1, 7, 100] {
        assert_eq!(decode(&body, piece).unwrap().0, whole, "pieces of {piece}");
    }
    let usage = match whole.last() {
        Some(ModelDelta::Usage { usage, .. }) => *usage,
        other => panic!("{other:?}"),
    };
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (10, 42));
    let message = message(whole);
    assert_eq!(
        message.tool_calls(),
        [
            ToolCall::raw("t1", "calc", "{\"x\": 1}"),
            ToolCall::raw("t2", "calc", "{}")
        ]
    );
    let signed =
        |text: &str, sig: &str| Reasoning::new("anthropic", text).with_data("signature", sig);
    assert_eq!(
        message.parts().into_owned(),
        [
            Part::Reasoning(signed("First the calculator.", "sig/1==")),
            Part::Reasoning(signed("Now the other.", "sig/2==").with_id("t1")),
        ]
    );
}

#[test]
fn a_redacted_block_comes_whole_and_text_streams() {
    let body = stream(&[
        start(
            0,
            json!({"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="}),
        ),
        stop(0),
        start(1, json!({"type": "text", "text": ""})),
        delta(1, json!({"type": "text_delta", "text": "Hello"})),
        json!({"type": "ping"}),
        delta(1, json!({"type": "text_delta", "text": " there"})),
        stop(1),
        json!({"type": "message_stop"}),
    ]);
    let message = message(decode(&body, 13).unwrap().0);
    assert_eq!(
        message.parts().into_owned(),
        [
            Part::Reasoning(
                Reasoning::new("anthropic", "").with_data("redacted_thinking", "cmVkYWN0ZWQ=")
            ),
            Part::text("Hello there"),
        ]
    );
}

#[test]
fn cumulative_usage_replaces_the_starts_counts_and_adds_the_cache() {
    let body = stream(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 2679, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 3}}}),
        json!({"type": "message_delta", "delta": {}, "usage": {"input_tokens": 10682, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000, "output_tokens": 510}}),
        json!({"type": "message_stop"}),
    ]);
    let (deltas, _) = decode(&body, 64).unwrap();
    let Some(ModelDelta::Usage { usage, .. }) = deltas.last() else {
        panic!("{deltas:?}");
    };
    assert_eq!(usage.prompt_tokens, 10682 + 100 + 2000);
    assert_eq!(
        (usage.cache_read_tokens, usage.cache_write_tokens),
        (2000, 100)
    );
    assert_eq!(usage.completion_tokens, 510);
    assert_eq!(usage.total_tokens, 10682 + 100 + 2000 + 510);
}

#[test]
fn an_error_event_is_a_typed_error_and_garbage_is_malformed() {
    let body = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n";
    let error = decode(body, 5).unwrap_err();
    assert!(error.is_overloaded() && error.is_retryable(), "{error:?}");
    let error = decode("event: content_block_delta\ndata: {nope\n\n", 100).unwrap_err();
    assert!(
        matches!(error, AnthropicError::MalformedEvent { .. }),
        "{error:?}"
    );
}
