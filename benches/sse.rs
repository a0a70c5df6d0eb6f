//! The SSE reader of the `openai` feature against a careful hand-written parser, side by
//! side on the same bytes: a streamed chat completion of 1,000 chunk events (text deltas,
//! two tool calls in fragments, the finish and usage chunks, `[DONE]`), fed in pieces of
//! 1,460 bytes (a TCP segment: events cut anywhere) and one event per piece (a model
//! slower than the network). Each reader hands over every event's data as a `&str`; the
//! figure to read is the time per iteration divided by 1,000: the cost per chunk.
//! `decode` adds the JSON of each chunk (`ChunkDecoder`), for scale.
//!
//! With `openai-responses`, `responses_decode` reads a Responses API stream of as many
//! events (`streams/responses.rs`: reasoning summary, text and function-call deltas, the
//! lifecycle events) through the same parser and `EventDecoder`: the Responses reader's
//! cost per event beside the chat reader's per chunk.
//!
//! ```text
//! cargo bench --features openai-responses --bench sse
//! ```

use std::hint::black_box;
use std::ops::Range;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tower_adk::providers::openai::sse::ChunkDecoder;

#[cfg(feature = "openai-responses")]
#[path = "streams/cut.rs"]
mod cut;
#[path = "streams/responses.rs"]
mod responses;

const EVENTS: usize = 1_000;

/// The body of a streamed reply of `EVENTS` events, `[DONE]` included, and where each
/// event ends.
fn body() -> (Vec<u8>, Vec<usize>) {
    const HEAD: &str = r#"{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":"#;
    const TAIL: &str = r#","logprobs":null,"finish_reason":null}]}"#;
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
    let mut deltas = vec![r#"{"role":"assistant","content":"","refusal":null}"#.to_owned()];
    let calls = [("call_QZ1x", "weather"), ("call_QZ2y", "forecast")];
    let fragments = [
        r#"{\""#,
        r#"city"#,
        r#"\":"#,
        r#" \""#,
        r#"Zürich"#,
        r#"\"}"#,
    ];
    // Text first, then each call: its id and name, then its arguments in fragments.
    let text = EVENTS - 4 - calls.len() * (1 + fragments.len());
    deltas.extend((0..text).map(|i| format!(r#"{{"content":"{}"}}"#, words[i % words.len()])));
    for (index, (id, name)) in calls.iter().enumerate() {
        deltas.push(format!(
            r#"{{"tool_calls":[{{"index":{index},"id":"{id}","type":"function","function":{{"name":"{name}","arguments":""}}}}]}}"#
        ));
        deltas.extend(fragments.iter().map(|f| {
            format!(r#"{{"tool_calls":[{{"index":{index},"function":{{"arguments":"{f}"}}}}]}}"#)
        }));
    }
    let mut events: Vec<String> = deltas.iter().map(|d| format!("{HEAD}{d}{TAIL}")).collect();
    events.push(format!(
        r#"{HEAD}{{}},"logprobs":null,"finish_reason":"tool_calls"}}],"usage":null}}"#
    ));
    events.push(r#"{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":87,"completion_tokens":412,"total_tokens":499}}"#.to_owned());
    events.push("[DONE]".to_owned());
    assert_eq!(events.len(), EVENTS);
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    for event in events {
        bytes.extend_from_slice(b"data: ");
        bytes.extend_from_slice(event.as_bytes());
        bytes.extend_from_slice(b"\n\n");
        ends.push(bytes.len());
    }
    (bytes, ends)
}

/// Our reader: every event's data, summed up by length.
#[inline(never)]
fn read_ours(pieces: &[Vec<u8>]) -> usize {
    cut::read(pieces)
}

/// The same, then each chunk's JSON decoded into deltas.
#[inline(never)]
fn decode_ours(pieces: &[Vec<u8>]) -> usize {
    let mut decoder = ChunkDecoder::new();
    cut::decode(pieces, |event, deltas| decoder.decode(event, deltas))
}

/// The Responses API reader on its own stream: each event decoded into deltas.
#[inline(never)]
fn decode_responses(pieces: &[Vec<u8>]) -> usize {
    let mut decoder = tower_adk::providers::openai::responses::EventDecoder::new();
    cut::decode(pieces, |event, deltas| decoder.decode(event, deltas))
}

/// A careful SSE reader written for this stream and nothing else: lines found with
/// `memchr`, `data:` values borrowed from the buffer (joined only when an event has
/// several), checked as UTF-8 once per event; LF or CRLF line ends, comments and other
/// fields skipped. No bound on memory, no bare-CR line ends, no `event:` field.
#[derive(Default)]
struct HandWritten {
    buffer: Vec<u8>,
    /// Where the event being read starts: what is before it was read.
    start: usize,
    joined: Vec<u8>,
}

impl HandWritten {
    /// Adds `piece` and calls `on_data` with the data of each event it completes.
    fn feed(&mut self, piece: &[u8], mut on_data: impl FnMut(&str)) {
        self.buffer.drain(..self.start);
        self.start = 0;
        self.buffer.extend_from_slice(piece);
        let mut line_start = 0;
        let mut data: Option<Range<usize>> = None;
        let mut several = false;
        while let Some(at) = memchr::memchr(b'\n', &self.buffer[line_start..]) {
            let mut end = line_start + at;
            let range = line_start..end;
            line_start = end + 1;
            if end > range.start && self.buffer[end - 1] == b'\r' {
                end -= 1;
            }
            let line = &self.buffer[range.start..end];
            if line.is_empty() {
                if let Some(range) = data.take() {
                    let bytes = if several {
                        &self.joined[..]
                    } else {
                        &self.buffer[range]
                    };
                    on_data(std::str::from_utf8(bytes).unwrap_or_else(|e| panic!("{e}")));
                }
                several = false;
                self.start = line_start;
            } else if let Some(value) = line.strip_prefix(b"data:") {
                let skip = usize::from(value.first() == Some(&b' '));
                let value = end - value.len() + skip..end;
                match &data {
                    None => data = Some(value),
                    Some(first) => {
                        if !several {
                            self.joined.clear();
                            self.joined.extend_from_slice(&self.buffer[first.clone()]);
                            several = true;
                        }
                        self.joined.push(b'\n');
                        self.joined.extend_from_slice(&self.buffer[value]);
                    }
                }
            }
        }
    }
}

/// The hand-written reader: every event's data, summed up by length.
#[inline(never)]
fn read_by_hand(pieces: &[Vec<u8>]) -> usize {
    let mut parser = HandWritten::default();
    let mut total = 0;
    for piece in pieces {
        parser.feed(piece, |data| total += black_box(data).len());
    }
    total
}

fn sse(c: &mut Criterion) {
    let (body, ends) = body();
    for (cut, pieces) in cut::pieces(&body, &ends) {
        assert_eq!(read_ours(&pieces), read_by_hand(&pieces), "the same data");
        assert!(decode_ours(&pieces) > EVENTS / 2);
        let mut group = c.benchmark_group(format!("sse_1000_chunks/{cut}"));
        group.throughput(Throughput::Elements(EVENTS as u64));
        group.bench_function("hand_written", |b| b.iter(|| read_by_hand(&pieces)));
        group.bench_function("ours", |b| b.iter(|| read_ours(&pieces)));
        group.bench_function("ours_decode", |b| b.iter(|| decode_ours(&pieces)));
        group.finish();
    }
    #[cfg(feature = "openai-responses")]
    {
        let body = responses::body();
        let ends: Vec<usize> = (body.windows(2).enumerate())
            .filter(|(_, pair)| pair == b"\n\n")
            .map(|(at, _)| at + 2)
            .collect();
        assert_eq!(ends.len(), responses::EVENTS);
        for (cut, pieces) in cut::pieces(&body, &ends) {
            assert!(decode_responses(&pieces) > responses::EVENTS * 9 / 10);
            let mut group = c.benchmark_group(format!("sse_1000_chunks/{cut}"));
            group.throughput(Throughput::Elements(responses::EVENTS as u64));
            group.bench_function("responses_decode", |b| b.iter(|| decode_responses(&pieces)));
            group.finish();
        }
    }
}

criterion_group!(benches, sse);
criterion_main!(benches);
