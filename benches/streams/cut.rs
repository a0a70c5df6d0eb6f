//! What the SSE benches share: a body cut the two ways a reader meets it, and the loops
//! that read it, with the shared parser alone or with a provider's decoder. Each bench
//! wraps them in a reader of its own name, which `benches/sse-instructions` counts
//! (callgrind's `--toggle-collect`): they are inlined there.

use std::fmt::Display;
use std::hint::black_box;

use tower_adk::ModelDelta;
use tower_adk::providers::sse::{SseEvent, SseParser};

/// The size of a piece of body: a TCP segment's payload.
pub(crate) const SEGMENT: usize = 1_460;

/// The body in pieces of `SEGMENT` bytes, and one event per piece (`ends`: where each
/// event ends).
pub(crate) fn pieces(body: &[u8], ends: &[usize]) -> [(&'static str, Vec<Vec<u8>>); 2] {
    let segments = body.chunks(SEGMENT).map(<[u8]>::to_vec).collect();
    let mut events = Vec::new();
    let mut start = 0;
    for &end in ends {
        events.push(body[start..end].to_vec());
        start = end;
    }
    [("segments", segments), ("events", events)]
}

/// The shared parser alone: every event's data, summed up by length.
#[inline(always)]
pub(crate) fn read(pieces: &[Vec<u8>]) -> usize {
    let mut parser = SseParser::new();
    let mut total = 0;
    for piece in pieces {
        parser.feed(piece);
        while let Some(event) = parser.next_event().unwrap_or_else(|e| panic!("{e}")) {
            total += black_box(event.data()).len();
        }
    }
    total
}

/// The parser, then each event decoded into deltas by `decode` (a provider's decoder);
/// how many deltas came.
#[inline(always)]
pub(crate) fn decode<T, E: Display>(
    pieces: &[Vec<u8>],
    mut decode: impl FnMut(&SseEvent<'_>, &mut Vec<ModelDelta>) -> Result<T, E>,
) -> usize {
    let mut parser = SseParser::new();
    let mut deltas: Vec<ModelDelta> = Vec::new();
    for piece in pieces {
        parser.feed(piece);
        while let Some(event) = parser.next_event().unwrap_or_else(|e| panic!("{e}")) {
            decode(&event, &mut deltas).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    black_box(&deltas).len()
}
