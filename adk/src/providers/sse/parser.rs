//! Cutting a response body's bytes, however they are chunked, into server-sent events
//! ([`SseParser`], [`SseEvent`]), with a bound on what a server can make it hold.

use std::borrow::Cow;
use std::mem;
use std::ops::Range;

use memchr::memchr;

use super::SseError;

/// The longest event a server may send: 8 MiB.
const MAX_EVENT_BYTES: usize = 8 << 20;

/// One server-sent event: its type and its data, borrowed from the [`SseParser`] that
/// read it until it reads on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent<'a> {
    event: &'a str,
    data: Cow<'a, str>,
}

impl SseEvent<'_> {
    /// The `event:` field; empty when the event has none (the default type, `message`).
    pub fn event(&self) -> &str {
        self.event
    }

    /// The `data:` lines, joined by `\n`.
    pub fn data(&self) -> &str {
        &self.data
    }
}

/// Cuts a byte stream into server-sent events.
///
/// Feed it the body's bytes as they arrive, in pieces of any size, and take the events
/// they complete with [`next_event`](SseParser::next_event); when the body ends,
/// [`finish`](SseParser::finish) gives the event it left unfinished, if any.
///
/// It reads the [event stream format] as servers of chat completions use it: lines end
/// with LF or CRLF; `data:` lines (with or without a space after the colon) make the
/// event's data, joined by `\n`; `event:` sets its type; a blank line ends it, and an
/// event without data is skipped; comments (`: keep-alive`), `id:`, `retry:` and other
/// fields are skipped. Bytes that are not UTF-8 become U+FFFD.
///
/// It copies nothing it does not have to: an event with one `data:` line, the usual
/// kind, is handed out as a slice of the bytes fed, checked as UTF-8 once. It holds at
/// most 8 MiB for the event being read: a server that sends more without ending the
/// event gets an error, not our memory.
///
/// # Example
///
/// ```
/// use tower_adk::providers::sse::SseParser;
///
/// let mut parser = SseParser::new();
/// parser.feed(b"data: {\"a\":");
/// assert!(parser.next_event()?.is_none(), "not complete yet");
/// parser.feed(b"1}\n\n: keep-alive\n\nevent: error\ndata: x\r\ndata: y\r\n\r\ndata: [DONE]");
///
/// let event = parser.next_event()?.expect("a complete event");
/// assert_eq!((event.event(), event.data()), ("", r#"{"a":1}"#));
/// let event = parser.next_event()?.expect("a complete event");
/// assert_eq!((event.event(), event.data()), ("error", "x\ny"));
/// assert!(parser.next_event()?.is_none(), "the last event has no blank line yet");
/// // The body ended: what is left is the last event.
/// assert_eq!(parser.finish().expect("the last event").data(), "[DONE]");
/// # Ok::<_, tower_adk::providers::sse::SseError>(())
/// ```
///
/// # Differences from the specification
///
/// A lone CR does not end a line, it stays in the line: chat completion servers end
/// lines with LF or CRLF, and looking for lone CRs as well would cost every byte a second
/// comparison. A byte order mark at the start is not skipped, and `id:` and `retry:` are
/// not kept (a client that reconnects with `Last-Event-ID` needs another parser).
///
/// [event stream format]: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
#[derive(Debug, Default)]
pub struct SseParser {
    /// The bytes fed and not let go yet: from the data line of the event being read (or
    /// from the next line) to the end.
    buffer: Vec<u8>,
    /// Where the next line starts.
    line: usize,
    /// How far `buffer` is known to hold no line end (so a long line is scanned once).
    scanned: usize,
    /// The data of the event being read.
    data: Data,
    /// The data lines of an event that has several, joined.
    joined: Vec<u8>,
    /// The type of the event being read.
    event: String,
    /// An event was handed out: its type is cleared before reading on.
    handed_out: bool,
}

/// Where the data of the event being read is.
#[derive(Debug, Default)]
enum Data {
    /// Nowhere: no `data:` line yet.
    #[default]
    None,
    /// In the buffer: one `data:` line's value.
    Line(Range<usize>),
    /// In `joined`: several lines.
    Joined,
}

impl SseParser {
    /// A parser that has read nothing.
    pub fn new() -> Self {
        SseParser::default()
    }

    /// Adds bytes of the body.
    #[inline]
    pub fn feed(&mut self, bytes: &[u8]) {
        self.clear_handed_out();
        let read = self.read();
        if read == self.buffer.len() {
            self.buffer.clear();
        } else if read > 0 {
            self.buffer.copy_within(read.., 0);
            self.buffer.truncate(self.buffer.len() - read);
        }
        self.line -= read;
        self.scanned = self.scanned.saturating_sub(read);
        if let Data::Line(value) = &mut self.data {
            *value = value.start - read..value.end - read;
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete event, if the bytes fed so far hold one.
    ///
    /// # Errors
    ///
    /// [`SseError::EventTooLong`] when the event being read is longer than 8 MiB.
    #[inline]
    pub fn next_event(&mut self) -> Result<Option<SseEvent<'_>>, SseError> {
        if self.line == self.buffer.len() && matches!(self.data, Data::None) {
            // Everything fed was read, the usual state after an event: nothing to do.
            return Ok(None);
        }
        self.read_event()
    }

    /// [`next_event`](SseParser::next_event) when there is something to read.
    fn read_event(&mut self) -> Result<Option<SseEvent<'_>>, SseError> {
        self.clear_handed_out();
        while let Some(line) = self.next_line() {
            if !line.is_empty() {
                self.field(line);
                // Most events end right after their data line (`data: ...\n\n`): no
                // need to search for the end of the blank line.
                match self.buffer.get(self.line..) {
                    Some([b'\n', ..]) => self.line += 1,
                    Some([b'\r', b'\n', ..]) => self.line += 2,
                    _ => continue,
                }
            }
            if self.end_event() {
                return Ok(Some(self.hand_out()));
            }
        }
        let held = self.buffer.len() - self.read();
        let joined = if let Data::Joined = self.data {
            self.joined.len()
        } else {
            0
        };
        if held + joined > MAX_EVENT_BYTES {
            let end = self.buffer.len().min(self.line + 200);
            let start = String::from_utf8_lossy(&self.buffer[self.line..end]).into_owned();
            return Err(SseError::EventTooLong { start });
        }
        Ok(None)
    }

    /// The event left when the body ended: a last line without its line end, and an
    /// event without its blank line, are taken as they are. Call it once
    /// [`next_event`](SseParser::next_event) has given every complete event.
    pub fn finish(&mut self) -> Option<SseEvent<'_>> {
        self.clear_handed_out();
        let mut rest = self.line..self.buffer.len();
        self.line = rest.end;
        if rest.end > rest.start && self.buffer[rest.end - 1] == b'\r' {
            rest.end -= 1;
        }
        if !rest.is_empty() {
            self.field(rest);
        }
        self.end_event().then(|| self.hand_out())
    }

    /// How much of the buffer was read and can go.
    fn read(&self) -> usize {
        match &self.data {
            Data::Line(value) => value.start,
            Data::None | Data::Joined => self.line,
        }
    }

    /// The next whole line, without its line end (LF, or CRLF).
    #[inline(always)]
    fn next_line(&mut self) -> Option<Range<usize>> {
        let from = self.scanned.max(self.line);
        let Some(at) = memchr(b'\n', &self.buffer[from..]) else {
            self.scanned = self.buffer.len();
            return None;
        };
        let newline = from + at;
        let mut line = self.line..newline;
        if newline > line.start && self.buffer[newline - 1] == b'\r' {
            line.end -= 1;
        }
        self.line = newline + 1;
        Some(line)
    }

    /// Reads one field line.
    #[inline(always)]
    fn field(&mut self, line: Range<usize>) {
        // Most lines are data: read those first.
        match self.buffer[line.clone()].strip_prefix(b"data:") {
            Some([b' ', ..]) => self.push_data(line.start + 6..line.end),
            Some(_) => self.push_data(line.start + 5..line.end),
            None => self.other_field(line),
        }
    }

    /// Reads a field line that does not start with `data:`.
    #[inline(never)]
    fn other_field(&mut self, line: Range<usize>) {
        let bytes = &self.buffer[line.clone()];
        let colon = memchr(b':', bytes).unwrap_or(bytes.len());
        let (field, value) = bytes.split_at(colon);
        let value = match value {
            [b':', b' ', ..] => line.start + colon + 2..line.end,
            [b':', ..] => line.start + colon + 1..line.end,
            _ => line.end..line.end,
        };
        match field {
            b"data" => self.push_data(value),
            b"event" => {
                let name = String::from_utf8_lossy(&self.buffer[value]);
                self.event.clear();
                self.event.push_str(&name);
            }
            // `id:`, `retry:` and comments (`: keep-alive`) mean nothing here.
            _ => {}
        }
    }

    /// Adds a `data:` line's value to the event being read.
    #[inline(always)]
    fn push_data(&mut self, value: Range<usize>) {
        match &self.data {
            Data::None => self.data = Data::Line(value),
            Data::Line(first) => {
                self.joined.clear();
                self.joined.extend_from_slice(&self.buffer[first.clone()]);
                self.join(value);
            }
            Data::Joined => self.join(value),
        }
    }

    /// Adds a second or later `data:` line's value.
    #[inline(never)]
    fn join(&mut self, value: Range<usize>) {
        self.joined.push(b'\n');
        self.joined.extend_from_slice(&self.buffer[value]);
        self.data = Data::Joined;
    }

    /// A blank line: whether it ends an event that has data (the type of one that has
    /// none is dropped).
    fn end_event(&mut self) -> bool {
        if let Data::None = self.data {
            self.event.clear();
            return false;
        }
        true
    }

    /// The event read: its data is let go, its type once the caller reads on.
    #[inline(always)]
    fn hand_out(&mut self) -> SseEvent<'_> {
        self.handed_out = true;
        let data = match mem::take(&mut self.data) {
            Data::None => &[][..],
            Data::Line(value) => &self.buffer[value],
            Data::Joined => &self.joined[..],
        };
        SseEvent {
            event: &self.event,
            data: text(data),
        }
    }

    fn clear_handed_out(&mut self) {
        if mem::take(&mut self.handed_out) {
            self.event.clear();
        }
    }
}

/// Bytes as text, copied only when they are not UTF-8.
fn text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::borrow::Cow;

    use super::{SseEvent, SseParser};

    /// An event, owned.
    #[derive(Debug, PartialEq)]
    struct Event {
        event: String,
        data: String,
    }

    fn owned(event: SseEvent<'_>) -> Event {
        Event {
            event: event.event().to_owned(),
            data: event.data().to_owned(),
        }
    }

    /// The events of a body cut into `pieces`.
    fn events(pieces: &[&[u8]]) -> Vec<Event> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for piece in pieces {
            parser.feed(piece);
            while let Some(event) = parser.next_event().unwrap() {
                out.push(owned(event));
            }
        }
        out.extend(parser.finish().map(owned));
        out
    }

    fn data(text: &str) -> Event {
        Event {
            event: String::new(),
            data: text.into(),
        }
    }

    #[test]
    fn events_split_anywhere_are_put_back_together() {
        let body =
            "data: {\"a\":1}\n\n: keep-alive\n\nevent: error\ndata: x\ndata: y\r\n\r\ndata: [DONE]";
        let whole = events(&[body.as_bytes()]);
        let bytes: Vec<&[u8]> = body.as_bytes().chunks(1).collect();
        let split = events(&bytes);
        let expected = vec![
            data("{\"a\":1}"),
            Event {
                event: "error".into(),
                data: "x\ny".into(),
            },
            data("[DONE]"),
        ];
        assert_eq!(whole, expected);
        assert_eq!(split, expected);
    }

    /// The events of `body` read whole, and cut after every byte: they must agree.
    fn events_however_cut(body: &[u8]) -> Vec<Event> {
        let whole = events(&[body]);
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(events(&bytes), whole, "cut after every byte");
        whole
    }

    #[test]
    fn lines_end_with_lf_or_crlf_and_a_lone_cr_stays_in_its_line() {
        let body = b"data: a\r\ndata: b\n\r\ndata: c\rd\n\ndata: e\r\n\r\ndata: f\r";
        assert_eq!(
            events_however_cut(body),
            [data("a\nb"), data("c\rd"), data("e"), data("f")]
        );
    }

    #[test]
    fn one_space_after_the_colon_is_dropped_and_a_field_without_colon_is_empty() {
        let body = b"data:x\n\ndata:  y\n\ndata\n\ndata:\ndata\n\n";
        assert_eq!(
            events_however_cut(body),
            [data("x"), data(" y"), data(""), data("\n")]
        );
    }

    #[test]
    fn comments_and_other_fields_between_data_lines_are_skipped() {
        let body = b"data: a\n: keep-alive\nid: 7\nretry: 10\nfoo\ndata: b\n\n: ping\n\n";
        assert_eq!(events_however_cut(body), [data("a\nb")]);
    }

    #[test]
    fn an_event_type_lasts_until_its_blank_line() {
        let body = b"event: ignored\n\nevent: error\ndata: x\n\ndata: y\n\n";
        let expected = [
            Event {
                event: "error".into(),
                data: "x".into(),
            },
            data("y"),
        ];
        assert_eq!(events_however_cut(body), expected);
    }

    #[test]
    fn bytes_that_are_not_utf8_become_replacement_characters() {
        let body = b"event: e\xFF\ndata: a\xC3\ndata: \xE2\x82b\n\n";
        let expected = [Event {
            event: "e\u{FFFD}".into(),
            data: "a\u{FFFD}\n\u{FFFD}b".into(),
        }];
        assert_eq!(events_however_cut(body), expected);
    }

    #[test]
    fn the_last_event_is_taken_without_its_blank_line_or_line_end() {
        assert_eq!(
            events_however_cut(b"data: a\n\ndata: b"),
            [data("a"), data("b")]
        );
        assert_eq!(events_however_cut(b"data: a\ndata: b\r\n"), [data("a\nb")]);
        assert_eq!(events_however_cut(b"data: a\n\n: bye"), [data("a")]);
        let mut parser = SseParser::new();
        assert_eq!(parser.finish(), None, "nothing fed, nothing left");
    }

    #[test]
    fn an_event_of_one_data_line_is_handed_out_without_a_copy() {
        let mut parser = SseParser::new();
        parser.feed(b"data: {\"a\":1}\n");
        assert_eq!(parser.next_event().unwrap(), None);
        parser.feed(b"\ndata: x\ndata: y\n\n");
        let event = parser.next_event().unwrap().unwrap();
        assert!(
            matches!(event.data, Cow::Borrowed("{\"a\":1}")),
            "{event:?}"
        );
        let event = parser.next_event().unwrap().unwrap();
        assert_eq!(event.data(), "x\ny");
    }

    #[test]
    fn a_multibyte_character_split_between_reads_survives() {
        let body = "data: {\"content\":\"héllo\"}\n\n".as_bytes();
        let at = body.iter().position(|b| *b == 0xC3).unwrap() + 1;
        let mut parser = SseParser::default();
        parser.feed(&body[..at]);
        assert_eq!(parser.next_event().unwrap(), None);
        parser.feed(&body[at..]);
        assert_eq!(
            parser.next_event().unwrap().map(owned),
            Some(data("{\"content\":\"héllo\"}"))
        );
    }

    #[test]
    fn an_endless_line_is_an_error_not_unbounded_memory() {
        let mut parser = SseParser::default();
        let block = vec![b'x'; 1 << 20];
        let mut failed = false;
        for _ in 0..10 {
            parser.feed(&block);
            if parser.next_event().is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }
}
