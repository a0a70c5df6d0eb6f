//! A streamed chat completion, as any bytes, through `SseParser`, `ChunkDecoder` and
//! `MessageAccumulator`: nothing panics, and the deltas say what the chunks said.
//!
//! The input's first byte chooses how the body is cut; the rest is the body (the seed
//! corpus holds real streams, for the fuzzer to bend). Each chunk the decoder accepts is
//! also read by a plain reference on `serde_json::Value`, and:
//! - the deltas are the same however the body is cut;
//! - a call's index is dense: below the number of calls opened (at most 1,024), whatever
//!   indices the server sent;
//! - no argument text is lost, doubled or reordered: the deltas' arguments, end to end,
//!   are the chunks' arguments, end to end;
//! - the message's text is the chunks' text;
//! - when every fragment names its call by index (as OpenAI does), the message's calls
//!   are the chunks' calls: in order of first appearance, each with its last id, its
//!   name (a repeated whole name not doubled) and its arguments joined.

#![no_main]

mod cut;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tower_adk::providers::openai::sse::{ChunkDecoder, Flow, SseEvent, SseParser};
use tower_adk::{MessageAccumulator, ModelDelta, ToolCall};

fuzz_target!(|input: &[u8]| {
    let (seed, body) = cut::split(input);
    let (deltas, chunks) = read(&[body]);
    let (cut_deltas, _) = read(&cut::pieces(body, seed));
    assert_eq!(
        deltas, cut_deltas,
        "the same deltas however the body is cut"
    );
    check(&deltas, &chunks);
});

/// A call whose fragments are still coming: its last id, its name and its arguments.
#[derive(Default)]
struct OpenCall {
    id: String,
    name: String,
    arguments: String,
}

/// What the reference read from the chunks the decoder accepted.
#[derive(Default)]
struct Chunks {
    /// Whether a chunk could not be read (then its text and fragments are unknown here).
    unread: bool,
    text: String,
    /// Every fragment's arguments, end to end.
    arguments: String,
    /// The calls by index, if every fragment had one.
    calls: Option<Vec<(u64, OpenCall)>>,
}

/// The deltas of a body, and what the reference read from its chunks; reading stops at
/// `[DONE]` or at the first error, as the model's stream does.
fn read(pieces: &[&[u8]]) -> (Vec<ModelDelta>, Chunks) {
    let mut parser = SseParser::new();
    let mut decoder = ChunkDecoder::new();
    let mut deltas = Vec::new();
    let mut chunks = Chunks {
        calls: Some(Vec::new()),
        ..Chunks::default()
    };
    let mut decode = |event: &SseEvent<'_>| {
        let before = deltas.len();
        match decoder.decode(event, &mut deltas) {
            Ok(Flow::More) => {
                chunks.read(event.data());
                true
            }
            Ok(Flow::Done) => false,
            Err(_) => {
                // A failed chunk's deltas never reach anyone.
                deltas.truncate(before);
                false
            }
        }
    };
    for piece in pieces {
        parser.feed(piece);
        while let Some(event) = parser.next_event().expect("a small body is no error") {
            if !decode(&event) {
                return (deltas, chunks);
            }
        }
    }
    if let Some(event) = parser.finish() {
        decode(&event);
    }
    (deltas, chunks)
}

impl Chunks {
    /// Reads a chunk the decoder accepted.
    fn read(&mut self, data: &str) {
        let Ok(chunk) = serde_json::from_str::<Value>(data.trim()) else {
            // A number beyond what `Value` holds, in a field the decoder skips.
            self.unread = true;
            self.calls = None;
            return;
        };
        let choices = chunk["choices"].as_array().into_iter().flatten();
        let first = choices.filter(|choice| choice["index"].as_u64().unwrap_or(0) == 0);
        for delta in first.map(|choice| &choice["delta"]) {
            for text in [&delta["content"], &delta["refusal"]] {
                self.text.push_str(text.as_str().unwrap_or_default());
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                self.fragment(call);
            }
        }
    }

    fn fragment(&mut self, call: &Value) {
        let function = &call["function"];
        let arguments = match &function["arguments"] {
            Value::Null => String::new(),
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        self.arguments.push_str(&arguments);
        let (Some(calls), Some(index)) = (&mut self.calls, call["index"].as_u64()) else {
            self.calls = None;
            return;
        };
        let at = match calls.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None => {
                calls.push((index, OpenCall::default()));
                calls.len() - 1
            }
        };
        let open = &mut calls[at].1;
        if let Some(id) = call["id"].as_str().filter(|id| !id.is_empty()) {
            open.id = id.to_owned();
        }
        if let Some(name) = function["name"].as_str() {
            if *name != open.name {
                open.name.push_str(name);
            }
        }
        open.arguments.push_str(&arguments);
    }
}

fn check(deltas: &[ModelDelta], chunks: &Chunks) {
    let opened = chunks.calls.as_ref().map_or(1024, Vec::len);
    let mut arguments = String::new();
    let mut message = MessageAccumulator::default();
    for delta in deltas {
        if let ModelDelta::ToolCall {
            index,
            arguments: text,
            ..
        } = delta
        {
            assert!(*index < opened, "index {index} of {opened} calls");
            arguments.push_str(text);
        }
        message.push(delta.clone());
    }
    let message = message.finish();
    if !chunks.unread {
        assert_eq!(
            arguments, chunks.arguments,
            "every argument fragment, in order"
        );
        assert_eq!(message.content(), chunks.text);
    }
    if let Some(expected) = &chunks.calls {
        let expected: Vec<ToolCall> = expected
            .iter()
            .enumerate()
            .filter(|(_, (_, call))| !call.name.is_empty())
            .map(|(at, (_, call))| {
                let id = if call.id.is_empty() {
                    format!("call_{at}")
                } else {
                    call.id.clone()
                };
                ToolCall::raw(id, call.name.as_str(), call.arguments.as_str())
            })
            .collect();
        assert_eq!(message.tool_calls(), expected);
    }
}
