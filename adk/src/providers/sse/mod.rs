//! Server-sent events, as the providers' streamed replies come: [`SseParser`] cuts a
//! body's bytes into [`SseEvent`]s (`data:` lines up to a blank line; comments and other
//! fields skipped), whatever the chunking of the bytes, and bounds the memory a server
//! can make it hold. Each provider reads the events with its own decoder (for OpenAI's
//! chat completions, [`ChunkDecoder`](super::openai::sse::ChunkDecoder)).
//!
//! # Example
//!
//! ```
//! use tower_adk::providers::sse::{SseError, SseParser};
//!
//! let mut parser = SseParser::new();
//! parser.feed(b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n: ping\n\n");
//! let event = parser.next_event()?.expect("a complete event");
//! assert_eq!(event.event(), "message_start");
//! assert_eq!(event.data(), r#"{"type":"message_start"}"#);
//! assert!(parser.next_event()?.is_none());
//! # Ok::<_, SseError>(())
//! ```

mod parser;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod stream;

pub use self::parser::{SseEvent, SseParser};
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
pub(crate) use self::stream::{Decode, DeltaStream};

/// What an event said about the stream: more to come, or the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// More to come.
    More,
    /// The reply is complete (`[DONE]`, `message_stop`, ...).
    Done,
}

/// Why a stream of server-sent events could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// An event went on for more than 8 MiB without ending.
    #[error("an event longer than 8 MiB: {start}")]
    EventTooLong {
        /// Its first bytes.
        start: String,
    },
    /// The body ended cleanly before the reply said it was complete: it may be cut short.
    #[error("the stream ended before the reply was complete")]
    Incomplete,
}
