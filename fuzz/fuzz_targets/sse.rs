//! `SseParser` on any bytes, cut anywhere: it never panics, and it gives the events that a
//! plain reference reader (the whole body at once, line by line, no buffering) gives,
//! whether the body comes whole, in pieces of 1 to 64 bytes, or a byte at a time.
//!
//! The input's first byte chooses the pieces; the rest is the body.

#![no_main]

mod cut;

use libfuzzer_sys::fuzz_target;
use tower_adk::providers::sse::SseParser;

/// An event: its type and its data.
type Event = (String, String);

fuzz_target!(|input: &[u8]| {
    let (seed, body) = cut::split(input);
    let expected = reference(body);
    assert_eq!(read(&[body]), expected, "whole");
    assert_eq!(read(&cut::pieces(body, seed)), expected, "in pieces");
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(read(&bytes), expected, "a byte at a time");
});

/// The events `SseParser` reads from `pieces`, then from the end of the body.
fn read(pieces: &[&[u8]]) -> Vec<Event> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for piece in pieces {
        parser.feed(piece);
        // Fuzz inputs are far below the 8 MiB bound: no error.
        while let Some(event) = parser.next_event().expect("a small body is no error") {
            events.push((event.event().to_owned(), event.data().to_owned()));
        }
    }
    if let Some(event) = parser.finish() {
        events.push((event.event().to_owned(), event.data().to_owned()));
    }
    assert!(parser.next_event().expect("no error").is_none(), "finished");
    events
}

/// The events of a whole body, read as the parser documents: lines end with LF or CRLF
/// (a lone CR stays), a last line without its line end counts, and so does an event
/// without its blank line at the end.
fn reference(body: &[u8]) -> Vec<Event> {
    let mut lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|last| last.is_empty()) {
        lines.pop();
    }
    lines.push(b"");
    let mut events = Vec::new();
    let (mut event, mut data): (String, Option<Vec<u8>>) = (String::new(), None);
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            if let Some(data) = data.take() {
                events.push((event.clone(), String::from_utf8_lossy(&data).into_owned()));
            }
            event.clear();
            continue;
        }
        let colon = line.iter().position(|b| *b == b':').unwrap_or(line.len());
        let (field, value) = line.split_at(colon);
        let value = value.strip_prefix(b":").unwrap_or(value);
        let value = value.strip_prefix(b" ").unwrap_or(value);
        match field {
            b"data" => match &mut data {
                Some(data) => {
                    data.push(b'\n');
                    data.extend_from_slice(value);
                }
                None => data = Some(value.to_vec()),
            },
            b"event" => event = String::from_utf8_lossy(value).into_owned(),
            _ => {}
        }
    }
    events
}
