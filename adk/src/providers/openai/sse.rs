//! Streamed replies: server-sent events in, [`ModelDelta`]s out.
//!
//! Three layers, each small:
//!
//! - [`SseParser`] cuts the body's bytes into events (`data:` lines up to a blank line,
//!   comments and other fields skipped), whatever the chunking of the bytes;
//! - [`ChunkDecoder`] reads each event's JSON: text deltas, tool-call fragments keyed by
//!   their index, usage, `[DONE]`, error chunks;
//! - [`DeltaStream`] drives both over the body and records the usage when `[DONE]`
//!   arrives.
//!
//! The SSE framing that OpenAI-compatible servers use is small enough that a parser of
//! our own (about forty lines) is simpler than a dependency, and it lets us bound the
//! memory a server can make us hold and tell a clean end of the body from a cut one.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use pin_project_lite::pin_project;

use super::error::OpenAiError;
use super::wire::{ChatChunk, WireCallIn, WireFunctionIn};
use crate::ModelDelta;
use crate::model::{Usage, UsageMeter};

/// The longest line (or event) a server may send: 8 MiB.
const MAX_EVENT_BYTES: usize = 8 << 20;

/// The most tool calls one streamed reply may open.
const MAX_TOOL_CALLS: usize = 1024;

/// One server-sent event.
#[derive(Debug, Default, PartialEq)]
pub(super) struct SseEvent {
    /// The `event:` field; empty for the default (`message`).
    pub(super) event: String,
    /// The `data:` lines, joined by `\n`.
    pub(super) data: String,
}

/// Cuts a byte stream into server-sent events.
#[derive(Debug, Default)]
pub(super) struct SseParser {
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
    /// Adds bytes of the body.
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        self.buffer.drain(..self.start);
        self.scanned = self.scanned.saturating_sub(self.start);
        self.start = 0;
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete event, if the bytes fed so far hold one.
    pub(super) fn next_event(&mut self) -> Result<Option<SseEvent>, OpenAiError> {
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
    pub(super) fn finish(&mut self) -> Option<SseEvent> {
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

/// What a chunk said about the stream.
#[derive(Debug, PartialEq)]
pub(super) enum Flow {
    /// More to come.
    More,
    /// `[DONE]`: the reply is complete.
    Done,
}

/// One tool call being assembled.
#[derive(Debug)]
struct OpenCall {
    /// The server's index for it, if it gave one.
    server_index: Option<usize>,
    id: String,
    name: String,
}

/// Reads the JSON chunks of a stream into deltas.
#[derive(Debug, Default)]
pub(super) struct ChunkDecoder {
    calls: Vec<OpenCall>,
    usage: Option<Usage>,
}

impl ChunkDecoder {
    /// Reads one event's data, pushing its deltas to `out`.
    pub(super) fn decode(
        &mut self,
        event: &SseEvent,
        out: &mut VecDeque<ModelDelta>,
    ) -> Result<Flow, OpenAiError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        if event.event == "error" {
            return Err(OpenAiError::from_error_event(data));
        }
        let chunk: ChatChunk =
            serde_json::from_str(data).map_err(|e| OpenAiError::malformed_chunk(data, e))?;
        if chunk.error.is_some() {
            return Err(OpenAiError::from_error_event(data));
        }
        if let Some(usage) = &chunk.usage {
            // The last usage a server sends is the whole call's.
            self.usage = Some(usage.usage());
        }
        let first = chunk
            .choices
            .into_iter()
            .flatten()
            .filter(|choice| choice.index.unwrap_or(0) == 0)
            .filter_map(|choice| choice.delta);
        for delta in first {
            for text in [delta.content, delta.refusal].into_iter().flatten() {
                if !text.is_empty() {
                    out.push_back(ModelDelta::Text(text));
                }
            }
            for call in delta.tool_calls.into_iter().flatten() {
                if let Some(delta) = self.tool_call(call)? {
                    out.push_back(delta);
                }
            }
        }
        Ok(Flow::More)
    }

    /// The usage the stream reported, if it did.
    pub(super) fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// One fragment of a tool call, as a delta on a dense index (the order in which calls
    /// first appeared). Ids and names that repeat what is known are left out, so servers
    /// that send them in every fragment give the same deltas as those that send them once.
    fn tool_call(&mut self, call: WireCallIn) -> Result<Option<ModelDelta>, OpenAiError> {
        let id = call.id.filter(|id| !id.is_empty());
        let index = self.call_index(call.index, id.as_deref())?;
        let open = &mut self.calls[index];
        let id = id
            .filter(|id| *id != open.id)
            .inspect(|id| id.clone_into(&mut open.id));
        let function = call.function.as_ref();
        let name = function
            .and_then(|f| f.name.clone())
            .filter(|name| !name.is_empty() && *name != open.name)
            .inspect(|name| open.name.push_str(name));
        let arguments = function
            .map(WireFunctionIn::arguments_text)
            .unwrap_or_default();
        if id.is_none() && name.is_none() && arguments.is_empty() {
            return Ok(None);
        }
        Ok(Some(ModelDelta::ToolCall {
            index,
            id,
            name,
            arguments,
        }))
    }

    /// The dense index of a fragment's call. With a server index, the call that has it;
    /// without one (some servers leave it out), the call with the fragment's id, else the
    /// last call, else (a new id, or the first fragment) a new call.
    fn call_index(
        &mut self,
        server_index: Option<usize>,
        id: Option<&str>,
    ) -> Result<usize, OpenAiError> {
        let found = match (server_index, id) {
            (Some(server), _) => self
                .calls
                .iter()
                .position(|c| c.server_index == Some(server)),
            (None, Some(id)) => self.calls.iter().position(|c| c.id == id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        if let Some(index) = found {
            return Ok(index);
        }
        if self.calls.len() == MAX_TOOL_CALLS {
            return Err(OpenAiError::malformed_response(
                format!("more than {MAX_TOOL_CALLS} tool calls in one reply"),
                b"",
            ));
        }
        self.calls.push(OpenCall {
            server_index,
            id: String::new(),
            name: String::new(),
        });
        Ok(self.calls.len() - 1)
    }
}

pin_project! {
    /// The deltas of a streamed reply, read from its body.
    ///
    /// It ends after `[DONE]` (recording the usage in the meter, if any), and fails with
    /// the body's error, [`OpenAiError::StreamIncomplete`] if the body ends before
    /// `[DONE]`, or the first malformed or error chunk. After an error it ends.
    #[project = DeltaStreamProj]
    pub(super) struct DeltaStream<S> {
        #[pin]
        body: S,
        body_ended: bool,
        parser: SseParser,
        decoder: ChunkDecoder,
        ready: VecDeque<ModelDelta>,
        meter: Option<UsageMeter>,
        ended: bool,
    }
}

impl<S> DeltaStream<S> {
    pub(super) fn new(body: S, meter: Option<UsageMeter>) -> Self {
        DeltaStream {
            body,
            body_ended: false,
            parser: SseParser::default(),
            decoder: ChunkDecoder::default(),
            ready: VecDeque::new(),
            meter,
            ended: false,
        }
    }
}

impl<S, B> Stream for DeltaStream<S>
where
    S: Stream<Item = Result<B, OpenAiError>>,
    B: AsRef<[u8]>,
{
    type Item = Result<ModelDelta, OpenAiError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        let next = this.poll_delta(cx);
        if let Poll::Ready(Some(Err(_))) = next {
            *this.ended = true;
            this.ready.clear();
        }
        next
    }
}

impl<S, B> DeltaStreamProj<'_, S>
where
    S: Stream<Item = Result<B, OpenAiError>>,
    B: AsRef<[u8]>,
{
    fn poll_delta(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<ModelDelta, OpenAiError>>> {
        loop {
            if let Some(delta) = self.ready.pop_front() {
                return Poll::Ready(Some(Ok(delta)));
            }
            if *self.ended {
                return Poll::Ready(None);
            }
            let event = match self.parser.next_event()? {
                Some(event) => event,
                None if *self.body_ended => match self.parser.finish() {
                    Some(event) => event,
                    None => Err(OpenAiError::StreamIncomplete)?,
                },
                None => match ready!(self.body.as_mut().poll_next(cx)) {
                    Some(bytes) => {
                        self.parser.feed(bytes?.as_ref());
                        continue;
                    }
                    None => {
                        *self.body_ended = true;
                        continue;
                    }
                },
            };
            if self.decoder.decode(&event, self.ready)? == Flow::Done {
                *self.ended = true;
                if let (Some(meter), Some(usage)) = (self.meter.as_ref(), self.decoder.usage()) {
                    meter.record(usage);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use futures::{StreamExt, executor, stream};
    use serde_json::json;

    use super::{DeltaStream, SseEvent, SseParser};
    use crate::model::{Usage, UsageMeter};
    use crate::providers::openai::OpenAiError;
    use crate::{Message, MessageAccumulator, ModelDelta, ToolCall};

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

    /// Runs a body through a delta stream: its deltas, then its error if it failed.
    fn deltas(
        body: Vec<Result<String, OpenAiError>>,
        meter: Option<UsageMeter>,
    ) -> (Vec<ModelDelta>, Option<OpenAiError>) {
        let stream = DeltaStream::new(stream::iter(body), meter);
        let items: Vec<_> = executor::block_on(stream.collect());
        let mut out = Vec::new();
        let mut error = None;
        for item in items {
            match item {
                Ok(delta) => out.push(delta),
                Err(e) => {
                    assert!(error.is_none(), "the stream ends after its first error");
                    error = Some(e);
                }
            }
        }
        (out, error)
    }

    fn sse(chunks: &[serde_json::Value]) -> Vec<Result<String, OpenAiError>> {
        let mut body: Vec<_> = chunks
            .iter()
            .map(|c| Ok(format!("data: {c}\n\n")))
            .collect();
        body.push(Ok("data: [DONE]\n\n".into()));
        body
    }

    fn message(deltas: Vec<ModelDelta>) -> Message {
        let mut acc = MessageAccumulator::default();
        deltas.into_iter().for_each(|d| acc.push(d));
        acc.finish()
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

    #[test]
    fn text_and_fragmented_tool_calls_become_deltas_and_usage_is_recorded_at_done() {
        let meter = UsageMeter::new();
        let body = sse(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "Let me "}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "look."}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": ""}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"x\":"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], "usage": null}),
            json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}),
        ]);
        let (deltas, error) = deltas(body, Some(meter.clone()));
        assert!(error.is_none(), "{error:?}");
        assert_eq!(deltas[0], ModelDelta::Text("Let me ".into()));
        let message = message(deltas);
        assert_eq!(message.content(), "Let me look.");
        assert_eq!(
            message.tool_calls(),
            [
                ToolCall::raw("a", "f", "{\"x\":1}"),
                ToolCall::raw("b", "g", "{}")
            ]
        );
        assert_eq!(meter.total(), Usage::new(7, 3, 10));
        assert_eq!(meter.calls(), 1);
    }

    #[test]
    fn usage_is_recorded_only_once_the_stream_is_drained_to_done() {
        let meter = UsageMeter::new();
        let body = sse(&[
            json!({"choices": [{"delta": {"content": "Hi"}}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 1}}),
        ]);
        let mut stream = DeltaStream::new(stream::iter(body), Some(meter.clone()));
        let first = executor::block_on(stream.next());
        assert!(matches!(first, Some(Ok(ModelDelta::Text(_)))));
        assert_eq!(meter.calls(), 0, "not before the stream is drained");
        assert!(executor::block_on(stream.next()).is_none());
        assert_eq!(meter.total(), Usage::new(2, 1, 3));
        assert!(
            executor::block_on(stream.next()).is_none(),
            "ended streams stay ended"
        );
        assert_eq!(meter.calls(), 1, "recorded once");
    }

    #[test]
    fn ids_and_names_repeated_in_every_fragment_are_sent_once() {
        let fragment = |args: &str| {
            json!({"choices": [{"delta": {"tool_calls": [
                {"index": 0, "id": "a", "type": "function", "function": {"name": "search", "arguments": args}}
            ]}}]})
        };
        let (deltas, error) = deltas(sse(&[fragment("{\"q\":"), fragment("\"rust\"}")]), None);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(
            deltas,
            [
                ModelDelta::ToolCall {
                    index: 0,
                    id: Some("a".into()),
                    name: Some("search".into()),
                    arguments: "{\"q\":".into()
                },
                ModelDelta::ToolCall {
                    index: 0,
                    id: None,
                    name: None,
                    arguments: "\"rust\"}".into()
                },
            ]
        );
        assert_eq!(
            message(deltas).tool_calls(),
            [ToolCall::raw("a", "search", "{\"q\":\"rust\"}")]
        );
    }

    #[test]
    fn calls_without_an_index_are_told_apart_by_their_ids() {
        let call = |id: Option<&str>, name: Option<&str>, args: &str| {
            json!({"choices": [{"delta": {"tool_calls": [
                {"id": id, "function": {"name": name, "arguments": args}}
            ]}}]})
        };
        let body = sse(&[
            call(Some("a"), Some("f"), "{\"x\""),
            call(None, None, ":1}"),
            call(Some("b"), Some("g"), "{}"),
        ]);
        let (deltas, error) = deltas(body, None);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(
            message(deltas).tool_calls(),
            [
                ToolCall::raw("a", "f", "{\"x\":1}"),
                ToolCall::raw("b", "g", "{}")
            ]
        );
    }

    #[test]
    fn sparse_server_indices_become_dense() {
        let body = sse(&[json!({"choices": [{"delta": {"tool_calls": [
            {"index": 1000000, "id": "a", "function": {"name": "f", "arguments": "{}"}}
        ]}}]})]);
        let (deltas, _) = deltas(body, None);
        assert!(matches!(deltas[0], ModelDelta::ToolCall { index: 0, .. }));
    }

    #[test]
    fn a_stream_without_done_is_incomplete_after_its_deltas() {
        let mut body = sse(&[json!({"choices": [{"delta": {"content": "Hel"}}]})]);
        body.pop();
        let meter = UsageMeter::new();
        let (deltas, error) = deltas(body, Some(meter.clone()));
        assert_eq!(deltas, [ModelDelta::Text("Hel".into())]);
        assert!(
            matches!(error, Some(OpenAiError::StreamIncomplete)),
            "{error:?}"
        );
        assert_eq!(meter.calls(), 0, "a failed call records no usage");
    }

    #[test]
    fn a_malformed_chunk_fails_the_stream_with_its_data() {
        let body = vec![
            Ok("data: {\"choices\": [{\"delta\": {\"content\": \"a\"}}]}\n\n".to_owned()),
            Ok("data: {\"choices\": [{\"del\n\n".to_owned()),
            Ok("data: {\"choices\": [{\"delta\": {\"content\": \"b\"}}]}\n\n".to_owned()),
        ];
        let (deltas, error) = deltas(body, None);
        assert_eq!(deltas, [ModelDelta::Text("a".into())]);
        match error {
            Some(OpenAiError::MalformedChunk { data, .. }) => {
                assert_eq!(data, "{\"choices\": [{\"del")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_error_chunk_fails_the_stream_with_the_servers_message() {
        let body = sse(&[json!({"error": {"message": "overloaded", "code": "server_error"}})]);
        let (_, error) = deltas(body, None);
        match error {
            Some(OpenAiError::StreamError { message, code }) => {
                assert_eq!(
                    (message.as_str(), code.as_deref()),
                    ("overloaded", Some("server_error"))
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_body_error_ends_the_stream_with_that_error() {
        let body = vec![
            Ok("data: {\"choices\": [{\"delta\": {\"content\": \"a\"}}]}\n\n".to_owned()),
            Err(OpenAiError::StreamIncomplete),
            Ok("data: [DONE]\n\n".to_owned()),
        ];
        let (deltas, error) = deltas(body, None);
        assert_eq!(deltas, [ModelDelta::Text("a".into())]);
        assert!(error.is_some());
    }
}
