//! A streamed event's SSE frame, written in place: `event:` its type, `id:` its number,
//! `data:` its wire JSON with `at_ms`, and a blank line; the bytes axum's `Event` gives
//! for the same fields, without building the JSON as a string first.

use crate::wire::WireEvent;

/// A time in microseconds since the Unix epoch: an event's `at_ms`, to the microsecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Micros(pub(crate) u64);

/// Writes the frame of event number `seq`, sent at `at`, at the end of `out`.
pub(crate) fn write(out: &mut Vec<u8>, seq: u64, event: &WireEvent, at: Micros) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(event.kind().as_bytes());
    out.extend_from_slice(b"\nid: ");
    out.extend_from_slice(itoa::Buffer::new().format(seq).as_bytes());
    out.extend_from_slice(b"\ndata: ");
    let data = out.len();
    if let Err(error) = event.write_json(AtMs::new(at).as_bytes(), out) {
        // What the JSON could not say, on one line.
        out.truncate(data);
        let message = error.to_string().replace(['\r', '\n'], " ");
        out.extend_from_slice(message.as_bytes());
    }
    out.extend_from_slice(b"\n\n");
}

/// Milliseconds after which the milliseconds' `f64` no longer tells every microsecond
/// apart (2^43: its steps get wider than 0.001), so that its shortest form is the
/// decimal itself below it (the year 2248).
const EXACT_MS: u64 = 1 << 43;

/// The member `,"at_ms":` and a time in milliseconds, on the stack, as serde_json writes
/// the `f64` nearest to them: the whole milliseconds, a point, then the microseconds
/// without their trailing zeros (`.0` for none): `1795000000000.5`. Outside the range
/// where that is exact, through the `f64`.
struct AtMs {
    bytes: [u8; 48],
    len: usize,
}

impl AtMs {
    fn new(at: Micros) -> Self {
        let mut written = AtMs {
            bytes: [0; 48],
            len: 0,
        };
        written.push(b",\"at_ms\":");
        let (ms, micros) = (at.0 / 1000, at.0 % 1000);
        if !(1..EXACT_MS).contains(&ms) {
            let ms = at.0 as f64 / 1000.0;
            if serde_json::to_writer(&mut written, &ms).is_err() {
                written.push(b"0");
            }
            return written;
        }
        written
            .push(itoa::Buffer::new().format(ms).as_bytes())
            .push(b".");
        let digits = [micros / 100, micros / 10 % 10, micros % 10].map(|d| b'0' + d as u8);
        let kept = match micros {
            0 => 0,
            _ if micros % 10 != 0 => 3,
            _ if micros % 100 != 0 => 2,
            _ => 1,
        };
        match digits.get(..kept) {
            Some(digits) if kept > 0 => written.push(digits),
            _ => written.push(b"0"),
        };
        written
    }

    /// Appends what fits.
    fn push(&mut self, bytes: &[u8]) -> &mut Self {
        let end = (self.len + bytes.len()).min(self.bytes.len());
        if let Some(room) = self.bytes.get_mut(self.len..end) {
            room.copy_from_slice(bytes.get(..room.len()).unwrap_or_default());
            self.len = end;
        }
        self
    }

    fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

impl std::io::Write for AtMs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let before = self.len;
        self.push(bytes);
        Ok(self.len - before)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(at: u64) -> String {
        let written = AtMs::new(Micros(at));
        let member = String::from_utf8_lossy(written.as_bytes());
        member
            .strip_prefix(",\"at_ms\":")
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn milliseconds_read_as_serde_json_writes_their_f64() {
        // Now, and the edges of the exact range, and every kind of fraction.
        let now = 1_795_000_000_000_000u64;
        let mut times: Vec<u64> = (0..2_000).map(|i| now + i * 7_919 + i % 1000).collect();
        times.extend([0, 1, 999, 1_000, 1_001, 1_500, 12_340, 1_000_000]);
        times.extend([EXACT_MS * 1000 - 1, EXACT_MS * 1000, EXACT_MS * 1000 + 1]);
        times.extend((0..1000).map(|micros| now + micros));
        for at in times {
            let f64_form = serde_json::to_string(&(at as f64 / 1000.0)).unwrap_or_default();
            assert_eq!(ms(at), f64_form, "at {at} µs");
        }
    }

    #[tokio::test]
    async fn a_frame_is_the_bytes_axum_writes_for_the_same_event() {
        use axum::response::IntoResponse;
        use axum::response::sse::{Event, Sse};

        let event = WireEvent::Filler {
            text: "line\nbreak \"quoted\" \u{2028}".into(),
        };
        let mut ours = Vec::new();
        write(&mut ours, 42, &event, Micros(1_795_000_000_000_500));

        /// The JSON as the server wrote it before: the event flattened beside `at_ms`.
        #[derive(serde::Serialize)]
        struct Stamped<'a> {
            #[serde(flatten)]
            event: &'a WireEvent,
            at_ms: f64,
        }
        let stamped = Stamped {
            event: &event,
            at_ms: 1_795_000_000_000.5,
        };
        let data = serde_json::to_string(&stamped).unwrap_or_default();
        let axum = Event::default().event("filler").id("42").data(&data);
        let events = futures::stream::iter([Ok::<_, std::convert::Infallible>(axum)]);
        let body = Sse::new(events).into_response().into_body();
        let axum = axum::body::to_bytes(body, usize::MAX).await;
        assert_eq!(ours, axum.unwrap_or_default());
    }
}
