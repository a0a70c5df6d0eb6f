//! The stream decoding of the `gemini` feature, beside the OpenAI reader's of
//! `benches/sse.rs`: the same reply (the same 982 words, the two calls, the finish) as
//! Gemini streams it, 1,000 `GenerateContentResponse` chunks (each call whole, with its
//! thought signature; `usageMetadata` on every chunk, as the API sends it; CRLF line ends),
//! fed in pieces of 1,460 bytes and one event per piece. `ours` hands over every event's
//! data (the shared `SseParser`), `ours_decode` also decodes each chunk into deltas
//! (`ReplyDecoder`); the figure to read is the time per iteration divided by 1,000: the
//! cost per chunk.
//!
//! ```text
//! cargo bench --features gemini --bench sse_gemini
//! benches/sse-instructions              # instructions per chunk, both providers
//! ```

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tower_adk::providers::gemini::ReplyDecoder;
use tower_adk::providers::sse::Flow;

#[path = "streams/cut.rs"]
mod cut;

const EVENTS: usize = 1_000;

/// The body of a streamed reply of `EVENTS` chunks, and where each event ends.
fn body() -> (Vec<u8>, Vec<usize>) {
    const HEAD: &str = r#"{"candidates": [{"content": {"parts": ["#;
    const TAIL: &str = r#"], "role": "model"}, "index": 0}], "usageMetadata": {"promptTokenCount": 87, "candidatesTokenCount": 12, "totalTokenCount": 99, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 87}]}, "modelVersion": "gemini-2.5-flash", "responseId": "cNSfaL2nLvCez7IPxKGWuAg"}"#;
    const SIGNATURE: &str = "CiQBVKhc7gVNlWrmzW9MEk/bjBDPDpxUEY9TBFuB8vn6CVjiCFgKeAFUqFzuJXH+jzpn9qLqTHoB2bJO4X9zCVKNe4cI7Wej+GjGuUP3DU5VAanQuz9agncQ299dkIYc/8uB2Wp2zFkFeq2v5SEUpKQfmlElMDRGM4cwU0LKHfOfEYYgWGXwjnbRvaP+lFtEb4DA";
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
    let mut parts: Vec<String> = (0..EVENTS - 3)
        .map(|i| format!(r#"{{"text": "{}"}}"#, words[i % words.len()]))
        .collect();
    for name in ["weather", "forecast"] {
        parts.push(format!(
            r#"{{"functionCall": {{"name": "{name}", "args": {{"city": "Zürich"}}}}, "thoughtSignature": "{SIGNATURE}"}}"#
        ));
    }
    let mut events: Vec<String> = parts.iter().map(|p| format!("{HEAD}{p}{TAIL}")).collect();
    events.push(format!(
        r#"{HEAD}{{"text": ""}}], "role": "model"}}, "finishReason": "STOP", "index": 0}}], "usageMetadata": {{"promptTokenCount": 87, "candidatesTokenCount": 412, "thoughtsTokenCount": 120, "totalTokenCount": 619}}, "modelVersion": "gemini-2.5-flash", "responseId": "cNSfaL2nLvCez7IPxKGWuAg"}}"#
    ));
    assert_eq!(events.len(), EVENTS);
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    for event in events {
        bytes.extend_from_slice(b"data: ");
        bytes.extend_from_slice(event.as_bytes());
        bytes.extend_from_slice(b"\r\n\r\n");
        ends.push(bytes.len());
    }
    (bytes, ends)
}

/// The shared reader: every event's data, summed up by length.
#[inline(never)]
fn read_gemini(pieces: &[Vec<u8>]) -> usize {
    cut::read(pieces)
}

/// The same, then each chunk decoded into deltas; the reply must end complete.
#[inline(never)]
fn decode_gemini(pieces: &[Vec<u8>]) -> usize {
    let mut decoder = ReplyDecoder::new();
    let deltas = cut::decode(pieces, |event, deltas| decoder.decode(event, deltas));
    let flow = decoder.finish().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(flow, Flow::Done);
    deltas
}

fn sse_gemini(c: &mut Criterion) {
    let (body, ends) = body();
    for (cut, pieces) in cut::pieces(&body, &ends) {
        assert_eq!(read_gemini(&pieces), read_gemini(&pieces));
        // Every text, and each call with its signature.
        assert_eq!(decode_gemini(&pieces), 997 + 2 * 2);
        let mut group = c.benchmark_group(format!("sse_gemini_1000_chunks/{cut}"));
        group.throughput(Throughput::Elements(EVENTS as u64));
        group.bench_function("ours", |b| b.iter(|| read_gemini(&pieces)));
        group.bench_function("ours_decode", |b| b.iter(|| decode_gemini(&pieces)));
        group.finish();
    }
}

criterion_group!(benches, sse_gemini);
criterion_main!(benches);
