//! The stream decoding of the `anthropic` feature, beside the OpenAI reader's of
//! `benches/sse.rs`: the same reply (978 text deltas, two tool calls whose arguments come in
//! six fragments each) as Anthropic streams it, 1,000 events of the Messages API
//! (`message_start`, the blocks' starts, deltas and stops, `message_delta`,
//! `message_stop`, each with its `event:` line), fed in pieces of 1,460 bytes and one event
//! per piece. `ours` hands over every event's data (the shared `SseParser`), `ours_decode`
//! also decodes each event into deltas (`EventDecoder`); the figure to read is the time
//! per iteration divided by 1,000: the cost per event.
//!
//! ```text
//! cargo bench --features anthropic --bench sse_anthropic
//! benches/sse-instructions              # instructions per event, both providers
//! ```

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tower_adk::providers::anthropic::sse::EventDecoder;

#[path = "streams/cut.rs"]
mod cut;

const EVENTS: usize = 1_000;

/// The body of a streamed reply of `EVENTS` events, and where each event ends.
fn body() -> (Vec<u8>, Vec<usize>) {
    let words = [
        "The",
        " weather",
        " in",
        " Zürich",
        " is",
        " 21",
        "°C",
        " and",
        " sunny",
        ".",
        " I",
        "'ll",
        " check",
        " the",
        " forecast",
        " —",
        " one",
        " moment",
        "\\n",
        " Done",
    ];
    let fragments = [
        r#"{\""#,
        r#"city"#,
        r#"\":"#,
        r#" \""#,
        r#"Zürich"#,
        r#"\"}"#,
    ];
    let calls = [("toolu_01QZ1x", "weather"), ("toolu_01QZ2y", "forecast")];
    let mut events: Vec<(&str, String)> = vec![(
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_01B9MBs8CjcvOU2jLn4n570S","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":87,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}"#.to_owned(),
    )];
    events.push((
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
            .to_owned(),
    ));
    // Text, then each call: its start, its fragments, its stop.
    let text = EVENTS - 6 - calls.len() * (2 + fragments.len());
    events.extend((0..text).map(|i| {
        let word = words[i % words.len()];
        (
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{word}"}}}}"#
            ),
        )
    }));
    events.push((
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.to_owned(),
    ));
    for (at, (id, name)) in calls.iter().enumerate() {
        let index = at + 1;
        events.push(("content_block_start", format!(
            r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"{id}","name":"{name}","input":{{}}}}}}"#
        )));
        events.extend(fragments.iter().map(|f| ("content_block_delta", format!(
            r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"input_json_delta","partial_json":"{f}"}}}}"#
        ))));
        events.push((
            "content_block_stop",
            format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
        ));
    }
    events.push(("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":412}}"#.to_owned()));
    events.push(("ping", r#"{"type": "ping"}"#.to_owned()));
    events.push(("message_stop", r#"{"type":"message_stop"}"#.to_owned()));
    assert_eq!(events.len(), EVENTS);
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    for (name, data) in events {
        bytes.extend_from_slice(format!("event: {name}\ndata: {data}\n\n").as_bytes());
        ends.push(bytes.len());
    }
    (bytes, ends)
}

/// The shared reader: every event's data, summed up by length.
#[inline(never)]
fn read_anthropic(pieces: &[Vec<u8>]) -> usize {
    cut::read(pieces)
}

/// The same, then each event decoded into deltas.
#[inline(never)]
fn decode_anthropic(pieces: &[Vec<u8>]) -> usize {
    let mut decoder = EventDecoder::new();
    cut::decode(pieces, |event, deltas| decoder.decode(event, deltas))
}

fn sse_anthropic(c: &mut Criterion) {
    let (body, ends) = body();
    for (cut, pieces) in cut::pieces(&body, &ends) {
        assert_eq!(read_anthropic(&pieces), read_anthropic(&pieces));
        // Every text delta, and the calls' starts and fragments.
        assert_eq!(decode_anthropic(&pieces), 978 + 2 * (1 + 6));
        let mut group = c.benchmark_group(format!("sse_anthropic_1000_events/{cut}"));
        group.throughput(Throughput::Elements(EVENTS as u64));
        group.bench_function("ours", |b| b.iter(|| read_anthropic(&pieces)));
        group.bench_function("ours_decode", |b| b.iter(|| decode_anthropic(&pieces)));
        group.finish();
    }
}

criterion_group!(benches, sse_anthropic);
criterion_main!(benches);
