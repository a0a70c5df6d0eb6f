//! The cost per streamed event of reading a Responses API stream: async-openai's way
//! (eventsource-stream's SSE reader, then `serde_json` into its `ResponseStreamEvent`, as
//! its client does, minus the task and channel it adds per stream) beside tower-adk's
//! (`SseParser`, then `EventDecoder` into deltas), on the same bytes: 1,000 events as
//! OpenAI streams them (a reasoning summary, text, a function call in fragments, the
//! lifecycle events, `response.completed` with usage), fed in pieces of 1,460 bytes.
//!
//!     peer-async-openai theirs 200    # 200 passes over the stream
//!     peer-async-openai ours 200
//!     peer-async-openai time          # both, timed, best of 20 passes
//!
//! The `evaluate` script counts instructions with callgrind (`--toggle-collect` on each
//! reader's function) and divides by passes and events.

use std::convert::Infallible;
use std::hint::black_box;
use std::time::Instant;

use async_openai::types::responses::ResponseStreamEvent;
use futures::{StreamExt, executor, stream};
use tower_adk::ModelDelta;
use tower_adk::providers::openai::responses::EventDecoder;
use tower_adk::providers::sse::SseParser;

/// The stream both read, shared with the repository's `benches/sse.rs`.
#[path = "../../../streams/responses.rs"]
mod responses;

use self::responses::{EVENTS, body};

const SEGMENT: usize = 1_460;

/// async-openai's way: every event's data through eventsource-stream, then into its
/// event type. Returns how many events parsed.
#[inline(never)]
fn theirs(pieces: &[Vec<u8>]) -> usize {
    let bytes = stream::iter(pieces.iter().map(|p| Ok::<_, Infallible>(p.clone())));
    let events = eventsource_stream::EventStream::new(bytes);
    executor::block_on(events.fold(0, |parsed, event| async move {
        let event = event.unwrap_or_else(|e| panic!("{e}"));
        match serde_json::from_str::<ResponseStreamEvent>(&event.data) {
            Ok(event) => {
                black_box(&event);
                parsed + 1
            }
            Err(error) => panic!("{error}: {}", event.data),
        }
    }))
}

/// tower-adk's way: `SseParser`, then `EventDecoder` into deltas. Returns how many
/// deltas it made.
#[inline(never)]
fn ours(pieces: &[Vec<u8>]) -> usize {
    let mut parser = SseParser::new();
    let mut decoder = EventDecoder::new();
    let mut deltas: Vec<ModelDelta> = Vec::new();
    for piece in pieces {
        // The same copy of each piece as the other reader gets.
        parser.feed(&piece.clone());
        while let Some(event) = parser.next_event().unwrap_or_else(|e| panic!("{e}")) {
            decoder
                .decode(&event, &mut deltas)
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    black_box(&deltas).len()
}

fn main() {
    let body = body();
    let pieces: Vec<Vec<u8>> = body.chunks(SEGMENT).map(<[u8]>::to_vec).collect();
    assert_eq!(theirs(&pieces), EVENTS, "every event parses");
    assert!(ours(&pieces) > EVENTS * 9 / 10);
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "time".to_owned());
    let passes: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(200);
    match what.as_str() {
        "theirs" => (0..passes).for_each(|_| {
            black_box(theirs(&pieces));
        }),
        "ours" => (0..passes).for_each(|_| {
            black_box(ours(&pieces));
        }),
        _ => {
            for (name, reader) in [("theirs", theirs as fn(&[Vec<u8>]) -> usize), ("ours", ours)] {
                let best = (0..20)
                    .map(|_| {
                        let start = Instant::now();
                        black_box(reader(&pieces));
                        start.elapsed()
                    })
                    .min()
                    .unwrap_or_default();
                let per_event = best.as_nanos() as f64 / EVENTS as f64;
                println!("{name:>6}: {per_event:>8.0} ns per event (best of 20 passes)");
            }
        }
    }
}
