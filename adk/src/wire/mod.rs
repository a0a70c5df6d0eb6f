//! The versioned JSON form of a run: its events, its result, its errors, and a thread's
//! state, as the HTTP server streams them and the `adk` command prints them.
//!
//! Each [`WireEvent`] is one JSON object with the format version `"v"` and its `"type"`
//! in snake_case:
//!
//! | `type` | from | fields |
//! |---|---|---|
//! | `run_started` | the server, first | `run_id`, `agent`, `thread` (when on one) |
//! | `text_delta` | [`AgentEvent::TextDelta`] | `text` |
//! | `reasoning_delta` | [`AgentEvent::ReasoningDelta`] | `text` |
//! | `usage` | [`AgentEvent::Usage`] | `model` (when known), `usage` (a [`Usage`]) |
//! | `message` | [`AgentEvent::Message`] | `message` (a [`Message`], tagged by `role`) |
//! | `filler` | [`AgentEvent::Filler`] | `text` |
//! | `tool_call_started` | [`AgentEvent::ToolCallStarted`] | `call_id`, `name` |
//! | `tool_output_chunk` | [`AgentEvent::ToolOutputChunk`] | `call_id`, `name`, `chunk` |
//! | `tool_event` | [`AgentEvent::ToolEvent`] | `call_id`, `name`, `event` (its JSON form; a sub-agent's: `{agent, event}`) |
//! | `tool_result` | [`AgentEvent::ToolResult`] | a [`WireToolResult`]: `call_id`, `name`, `arguments`, `content`, `parts` (the images and files it returned, when it did), `error` (`{kind, message}`, when it failed), `latency_ms` |
//! | `interrupt` | [`AgentEvent::Interrupt`] | a [`PendingInterrupt`]: `id`, `call` (when a call interrupted), `payload` |
//! | `decided` | the server, after `run_started`, one per decision of a resume | a [`Decided`]: `interrupt`, `decision`, `by` (the subject of the principal who resumed), `at` |
//! | `completed` | [`AgentEvent::Completed`], last | a [`WireResult`]: `status`, `final_message`, `messages`, `tool_records`, `iterations`, `model_calls`, `usage`, `cost`, `locals`, `interrupts`, `checkpoint` |
//! | `error` | a failed run ([`AgentError`]), last | a [`WireError`]: `code`, `message`, `checkpoint` (a cancelled run's, when it left one) |
//!
//! A run's events end with exactly one `completed` or `error`.
//!
//! # Times
//!
//! The server's streamed events (`POST /agents/{name}/runs` as SSE, and their replay)
//! also carry `at_ms`: when the server sent the event, in milliseconds since the Unix
//! epoch (a number with a fraction, to the microsecond); `run_started` and a resume's
//! `decided` carry the moment the server took the request (the stream opens once the
//! run's first event is in). Within a run's stream the times come from one monotonic
//! clock, so they never go back; a resumed run's stream goes on
//! on the same axis, so a page can draw a run and its resume as one timeline (a model
//! call starts when the run started or its previous turn's tools ended, and ends with its
//! `message`; a tool call runs from `tool_call_started` to `tool_result`; an agent called
//! as a tool's events take the time of the `tool_event` that carries them). `at_ms` is
//! not a field of [`WireEvent`]: a reader ignores it, like any field it does not know.
//!
//! # Versions
//!
//! This is version [`VERSION`] (1). Within a version a writer may add event types and
//! add fields to existing ones; a reader ignores fields it does not know and skips types
//! it does not know (in Rust they read as [`WireEvent::Unknown`]). Removing or renaming
//! a field or a type, or changing what one means, makes a new version, and a reader
//! refuses events of a version it does not read. Error codes are stable in the same way:
//! see [`AgentError::code`] and [`CheckpointError::code`](crate::checkpoint::CheckpointError::code).
//!
//! # Example
//!
//! ```
//! use tower_adk::{AgentEvent, Message};
//! use tower_adk::wire::WireEvent;
//! use serde_json::json;
//!
//! let event = WireEvent::from(&AgentEvent::TextDelta("Hel".into()));
//! assert_eq!(serde_json::to_value(&event)?, json!({"v": 1, "type": "text_delta", "text": "Hel"}));
//!
//! let read: WireEvent = serde_json::from_value(json!({
//!     "v": 1,
//!     "type": "message",
//!     "message": {"role": "assistant", "content": "Hello"}
//! }))?;
//! assert_eq!(read, WireEvent::Message { message: Message::assistant("Hello") });
//!
//! // A reader of version 1 refuses version 2.
//! assert!(serde_json::from_value::<WireEvent>(json!({"v": 2, "type": "filler", "text": "."})).is_err());
//! # Ok::<_, serde_json::Error>(())
//! ```

mod error;
#[cfg(feature = "server")]
mod json;
mod result;

#[cfg(feature = "server")]
use std::io;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
#[cfg(feature = "server")]
use serde_json::ser::{CompactFormatter, Formatter};

pub use self::error::WireError;
pub use self::result::{WireResult, WireThread, WireToolError, WireToolResult};
use crate::agent::AgentError;
use crate::agent::AgentEvent;
use crate::auth::Decided;
use crate::interrupt::PendingInterrupt;
use crate::message::Message;
use crate::model::Usage;

/// The version of the wire form this crate writes and reads.
pub const VERSION: u32 = 1;

/// One event of a run in its JSON form; see the [module docs](self) for the format.
///
/// It serializes with `"v": 1` and its `"type"`; it reads only version 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum WireEvent {
    /// The run started: the server's id for it (to reconnect with), first of its events.
    RunStarted {
        /// The id the server keeps the run's events under.
        run_id: String,
        /// The agent's name.
        agent: String,
        /// The thread the run is on, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<String>,
    },
    /// Text from the model, as it streams.
    TextDelta {
        /// The text.
        text: String,
    },
    /// Text of the model's reasoning, as it streams (a reader that does not show it
    /// skips it; the reply's message has the whole reasoning in its parts).
    ReasoningDelta {
        /// The text.
        text: String,
    },
    /// What one model call used, and the model that answered (when it said).
    Usage {
        /// The model that answered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// What the call used.
        usage: Usage,
    },
    /// The model's whole reply for one turn.
    Message {
        /// The reply.
        message: Message,
    },
    /// The text of a reply that also calls tools, shown while they run.
    Filler {
        /// The text.
        text: String,
    },
    /// A tool call started.
    ToolCallStarted {
        /// The call id.
        call_id: String,
        /// The tool name.
        name: String,
    },
    /// A chunk of a streamed tool call's output.
    ToolOutputChunk {
        /// The call id.
        call_id: String,
        /// The tool name.
        name: String,
        /// The chunk.
        chunk: String,
    },
    /// A typed event a streaming tool reported, in its JSON form (for an agent called as
    /// a tool: `{"agent": NAME, "event": <that agent's event in this form>}`).
    ToolEvent {
        /// The call id.
        call_id: String,
        /// The tool name.
        name: String,
        /// The event.
        event: serde_json::Value,
    },
    /// A tool call finished.
    ToolResult(WireToolResult),
    /// A tool call or a hook interrupted the run.
    Interrupt(PendingInterrupt),
    /// A decision that the run was resumed with, and who made it (written by the server
    /// for a resumed run, after `run_started`; the thread's audit trail records the same
    /// decision and decider).
    Decided(Decided),
    /// The run finished or stopped at its interrupts: its result.
    Completed(WireResult),
    /// The run failed.
    Error(WireError),
    /// An event of a type this version does not know (from a newer writer); it
    /// serializes as `{"type": "unknown"}`.
    #[serde(other)]
    Unknown,
}

impl WireEvent {
    /// The event's `type`, as in its JSON form (and as the server's SSE `event:` field).
    ///
    /// ```
    /// use tower_adk::AgentEvent;
    /// use tower_adk::wire::WireEvent;
    ///
    /// assert_eq!(WireEvent::from(&AgentEvent::Filler("One moment.".into())).kind(), "filler");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            WireEvent::RunStarted { .. } => "run_started",
            WireEvent::TextDelta { .. } => "text_delta",
            WireEvent::ReasoningDelta { .. } => "reasoning_delta",
            WireEvent::Usage { .. } => "usage",
            WireEvent::Message { .. } => "message",
            WireEvent::Filler { .. } => "filler",
            WireEvent::ToolCallStarted { .. } => "tool_call_started",
            WireEvent::ToolOutputChunk { .. } => "tool_output_chunk",
            WireEvent::ToolEvent { .. } => "tool_event",
            WireEvent::ToolResult(_) => "tool_result",
            WireEvent::Interrupt(_) => "interrupt",
            WireEvent::Decided(_) => "decided",
            WireEvent::Completed(_) => "completed",
            WireEvent::Error(_) => "error",
            WireEvent::Unknown => "unknown",
        }
    }

    /// Whether this is the last event of a run: `completed` or `error`.
    pub fn is_last(&self) -> bool {
        matches!(self, WireEvent::Completed(_) | WireEvent::Error(_))
    }
}

impl From<&AgentEvent> for WireEvent {
    fn from(event: &AgentEvent) -> Self {
        WireEvent::from_event(event.clone())
    }
}

impl WireEvent {
    /// The wire form of `event`, taking its text, messages and result rather than
    /// copying them.
    pub(crate) fn from_event(event: AgentEvent) -> Self {
        match event {
            AgentEvent::TextDelta(text) => WireEvent::TextDelta { text },
            AgentEvent::ReasoningDelta(text) => WireEvent::ReasoningDelta { text },
            AgentEvent::Usage { model, usage } => WireEvent::Usage { model, usage },
            AgentEvent::Message(message) => WireEvent::Message { message },
            AgentEvent::Filler(text) => WireEvent::Filler { text },
            AgentEvent::ToolCallStarted { call_id, name } => WireEvent::ToolCallStarted {
                call_id: String::from(&*call_id),
                name: String::from(&*name),
            },
            AgentEvent::ToolOutputChunk {
                call_id,
                name,
                chunk,
            } => WireEvent::ToolOutputChunk {
                call_id: String::from(&*call_id),
                name: String::from(&*name),
                chunk,
            },
            AgentEvent::ToolEvent {
                call_id,
                name,
                event,
            } => WireEvent::ToolEvent {
                call_id: String::from(&*call_id),
                name: String::from(&*name),
                event: event.to_json(),
            },
            AgentEvent::ToolResult(record) => {
                WireEvent::ToolResult(WireToolResult::from_shared(record))
            }
            AgentEvent::Interrupt(pending) => WireEvent::Interrupt(*pending),
            AgentEvent::Completed(result) => WireEvent::Completed(WireResult::from_result(*result)),
        }
    }
}

impl From<&AgentError> for WireEvent {
    fn from(error: &AgentError) -> Self {
        WireEvent::Error(error.into())
    }
}

impl Serialize for WireEvent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Versioned::new(Tagged(self)).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for WireEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = Read::deserialize(deserializer)?;
        if read.v != VERSION {
            return Err(D::Error::custom(format_args!(
                "wire version {} (this version reads {VERSION})",
                read.v
            )));
        }
        Ok(read.event)
    }
}

/// A JSON body with the wire version first: `{"v": 1, ...}`. An event is written as the
/// version, then the tagged event; the server's other bodies (a listing, a thread) the
/// same way.
#[derive(Serialize)]
pub(crate) struct Versioned<T> {
    v: u32,
    #[serde(flatten)]
    body: T,
}

impl<T> Versioned<T> {
    pub(crate) fn new(body: T) -> Self {
        Versioned { v: VERSION, body }
    }
}

/// The event through its derived (remote) form, which has no `v`.
struct Tagged<'a>(&'a WireEvent);

impl Serialize for Tagged<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireEvent::serialize(self.0, serializer)
    }
}

#[cfg(feature = "server")]
impl WireEvent {
    /// Writes the event's JSON at the end of `out`: the bytes `serde_json` writes for it
    /// (`{"v":1,"type":...}`), with `more` (members in JSON, each after a comma) before
    /// the closing brace, as a struct that flattens the event beside them would give,
    /// without going through serde's map of a flattened struct. Written by [`json`]'s
    /// quick writer; what it leaves to serde_json, by serde_json.
    pub(crate) fn write_json(&self, more: &[u8], out: &mut Vec<u8>) -> serde_json::Result<()> {
        let start = out.len();
        if json::write(&Tagged(self), more, out).is_ok() {
            return Ok(());
        }
        // What the quick writer left to serde_json: its bytes, or its error.
        out.truncate(start);
        let framed = Framed { depth: 0, more };
        let mut json = serde_json::Serializer::with_formatter(out, framed);
        Tagged(self).serialize(&mut json)
    }
}

/// serde_json's compact form, but with `"v":1,` after the outermost object's opening
/// brace and `more` before its closing one.
#[cfg(feature = "server")]
struct Framed<'a> {
    depth: usize,
    more: &'a [u8],
}

#[cfg(feature = "server")]
impl Formatter for Framed<'_> {
    fn begin_object<W: ?Sized + io::Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.depth += 1;
        if self.depth == 1 {
            out.write_all(VERSIONED)
        } else {
            CompactFormatter.begin_object(out)
        }
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if self.depth == 0 {
            out.write_all(self.more)?;
        }
        CompactFormatter.end_object(out)
    }
}

/// How a version 1 body opens.
#[cfg(feature = "server")]
const VERSIONED: &[u8] = b"{\"v\":1,";
const _: () = assert!(VERSION == 1, "VERSIONED spells the version");

/// An event as read: the version, and the tagged event through its derived form.
#[derive(Deserialize)]
struct Read {
    v: u32,
    #[serde(flatten, deserialize_with = "WireEvent::deserialize")]
    event: WireEvent,
}

#[cfg(all(test, feature = "server"))]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Events of every shape: fields, options, a newtype variant, nested objects and
    /// arrays, text to escape, and a type this version does not know.
    fn events() -> Vec<WireEvent> {
        let read =
            |value: Value| serde_json::from_value::<WireEvent>(value).unwrap_or(WireEvent::Unknown);
        vec![
            WireEvent::TextDelta {
                text: "a \"quoted\"\nline\u{1}".into(),
            },
            WireEvent::RunStarted {
                run_id: "r1".into(),
                agent: "a".into(),
                thread: None,
            },
            read(json!({"v": 1, "type": "message", "message": {
                "role": "assistant", "content": "Let me look.",
                "tool_calls": [{"id": "c1", "name": "track", "arguments": "{\"order\":7}"}]}})),
            read(
                json!({"v": 1, "type": "tool_result", "call_id": "c1", "name": "track",
                "arguments": "{}", "content": "in transit", "latency_ms": 0.25,
                "error": {"kind": "timeout", "message": "slow"}}),
            ),
            read(json!({"v": 1, "type": "completed", "status": "completed",
                "final_message": {"role": "assistant", "content": "Done."},
                "messages": [{"role": "user", "content": "Go"}, {"role": "assistant", "content": "Done."}],
                "tool_records": [], "iterations": 1, "model_calls": 1})),
            WireEvent::Error(WireError::new("failed", "it failed")),
            WireEvent::Unknown,
        ]
    }

    #[test]
    fn written_json_is_the_bytes_of_serialize_with_the_members_after_it() {
        #[derive(Serialize)]
        struct Stamped<'a> {
            #[serde(flatten)]
            event: &'a WireEvent,
            at_ms: f64,
        }
        let kinds: Vec<_> = events().iter().map(WireEvent::kind).collect();
        assert_eq!(
            kinds,
            [
                "text_delta",
                "run_started",
                "message",
                "tool_result",
                "completed",
                "error",
                "unknown"
            ]
        );
        for event in events() {
            let mut plain = Vec::new();
            event.write_json(b"", &mut plain).unwrap_or_default();
            assert_eq!(plain, serde_json::to_vec(&event).unwrap_or_default());

            let mut stamped = Vec::new();
            event
                .write_json(b",\"at_ms\":12.5", &mut stamped)
                .unwrap_or_default();
            let flattened = Stamped {
                event: &event,
                at_ms: 12.5,
            };
            let expected = serde_json::to_vec(&flattened).unwrap_or_default();
            assert_eq!(
                String::from_utf8_lossy(&stamped),
                String::from_utf8_lossy(&expected)
            );
        }
    }
}
