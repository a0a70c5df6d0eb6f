use crate::providers::openai::OpenAiError;

/// The longest line (or event) a server may send: 8 MiB.
const MAX_EVENT_BYTES: usize = 8 << 20;

/// One server-sent event: its type and its data.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SseEvent {
    event: String,
    data: String,
}

impl SseEvent {
    /// The `event:` field; empty when the event has none (the default type, `message`).
    pub fn event(&self) -> &str {
        &self.event
    }

    /// The `data:` lines, joined by `\n`.
    pub fn data(&self) -> &str {
        &self.data
    }
}

/// Cuts a byte stream into server-sent events.
///
/// Feed it the body's bytes as they arrive, in pieces of any size, and take the events
/// that are complete with [`next_event`](SseParser::next_event); when the body ends,
/// [`finish`](SseParser::finish) gives the event it left unfinished, if any.
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    /// Where the unread part of `buffer` starts.
    start: usize,
    /// How far `buffer` is known to hold no newline (so a long line is scanned once).
    scanned: usize,
    event: SseEvent,
    /// Whether the event being read has a `data:` line.
    has_data: bool,
}

impl SseParser {
    /// A parser that has read nothing.
    pub fn new() -> Self {
        SseParser::default()
    }

    /// Adds bytes of the body.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buffer.drain(..self.start);
        self.scanned = self.scanned.saturating_sub(self.start);
        self.start = 0;
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete event, if the bytes fed so far hold one.
    ///
    /// # Errors
    ///
    /// [`OpenAiError::MalformedResponse`] when the event being read is longer than 8 MiB.
    pub fn next_event(&mut self) -> Result<Option<SseEvent>, OpenAiError> {
        loop {
            let from = self.scanned.max(self.start);
            let Some(newline) = self.buffer[from..].iter().position(|b| *b == b'\n') else {
                self.scanned = self.buffer.len();
                break;
            };
            let line = self.start..from + newline;
            self.start = from + newline + 1;
            let line = String::from_utf8_lossy(&self.buffer[line]).into_owned();
            if let Some(event) = self.line(&line) {
                return Ok(Some(event));
            }
        }
        if self.buffer.len() - self.start + self.event.data.len() > MAX_EVENT_BYTES {
            let end = self.buffer.len().min(self.start + 200);
            return Err(OpenAiError::malformed_response(
                "an event longer than 8 MiB",
                &self.buffer[self.start..end],
            ));
        }
        Ok(None)
    }

    /// The event left when the body ended: a last line without its newline, and an event
    /// without its blank line, are taken as they are.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let rest = String::from_utf8_lossy(&self.buffer[self.start..]).into_owned();
        self.start = self.buffer.len();
        if !rest.is_empty()
            && let Some(event) = self.line(&rest)
        {
            return Some(event);
        }
        self.line("")
    }

    /// Reads one line; a blank line ends the event being read.
    fn line(&mut self, line: &str) -> Option<SseEvent> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            return std::mem::take(&mut self.has_data).then_some(event);
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => {
                if self.has_data {
                    self.event.data.push('\n');
                }
                self.event.data.push_str(value);
                self.has_data = true;
            }
            "event" => value.clone_into(&mut self.event.event),
            // Comments (`: keep-alive`), `id:` and `retry:` mean nothing here.
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{SseEvent, SseParser};

    /// The events of a body cut into `pieces`.
    fn events(pieces: &[&str]) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for piece in pieces {
            parser.feed(piece.as_bytes());
            while let Some(event) = parser.next_event().unwrap() {
                out.push(event);
            }
        }
        out.extend(parser.finish());
        out
    }

    fn data(text: &str) -> SseEvent {
        SseEvent {
            event: String::new(),
            data: text.into(),
        }
    }

    #[test]
    fn events_split_anywhere_are_put_back_together() {
        let body =
            "data: {\"a\":1}\n\n: keep-alive\n\nevent: error\ndata: x\ndata: y\r\n\r\ndata: [DONE]";
        let whole = events(&[body]);
        let bytes: Vec<String> = body.chars().map(String::from).collect();
        let split = events(&bytes.iter().map(String::as_str).collect::<Vec<_>>());
        let expected = vec![
            data("{\"a\":1}"),
            SseEvent {
                event: "error".into(),
                data: "x\ny".into(),
            },
            data("[DONE]"),
        ];
        assert_eq!(whole, expected);
        assert_eq!(split, expected);
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
            parser.next_event().unwrap(),
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
