//! Streamed replies: server-sent events in, [`ModelDelta`](crate::ModelDelta)s out.
//!
//! [`OpenAiModel`](super::OpenAiModel) reads its streamed replies with these two pieces;
//! they are public for providers that bring their own transport (another HTTP client, a
//! recorded stream, a gateway that speaks the chat completion wire) and for any other
//! server-sent event stream:
//!
//! - [`SseParser`] (from [`providers::sse`](crate::providers::sse), shared by the
//!   providers) cuts a body's bytes into [`SseEvent`]s (`data:` lines up to a blank
//!   line; comments and other fields skipped), whatever the chunking of the bytes, and
//!   bounds the memory a server can make it hold;
//! - [`ChunkDecoder`] reads each event's JSON chunk: text deltas, tool-call fragments on
//!   dense indices, usage, `[DONE]`, error chunks.
//!
//! The deltas go to a [`MessageAccumulator`](crate::MessageAccumulator) for the whole
//! message, or to [`ModelResponse::stream`](crate::ModelResponse::stream) for a model.
//!
//! # Example
//!
//! ```
//! use tower_adk::providers::openai::sse::{ChunkDecoder, Flow, SseParser};
//! use tower_adk::{MessageAccumulator, ModelDelta};
//!
//! // A reply as it may arrive: events cut anywhere, a keep-alive comment between them.
//! let body: [&[u8]; 3] = [
//!     b"data: {\"choices\":[{\"delta\":{\"content\":\"Let me \"}}]}\n\ndata: {\"choi",
//!     b"ces\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":\
//!       {\"name\":\"search\",\"arguments\":\"{}\"}}]}}]}\n\n: keep-alive\n\n",
//!     b"data: [DONE]\n\n",
//! ];
//!
//! let mut parser = SseParser::new();
//! let mut decoder = ChunkDecoder::new();
//! let mut deltas: Vec<ModelDelta> = Vec::new();
//! let mut done = false;
//! for piece in body {
//!     parser.feed(piece);
//!     while let Some(event) = parser.next_event()? {
//!         done |= decoder.decode(&event, &mut deltas)? == Flow::Done;
//!     }
//! }
//! assert!(done, "a reply without `[DONE]` may be cut short");
//!
//! let mut reply = MessageAccumulator::default();
//! deltas.into_iter().for_each(|delta| reply.push(delta));
//! let message = reply.finish();
//! assert_eq!(message.content(), "Let me ");
//! assert_eq!(message.tool_calls()[0].name, "search");
//! # Ok::<_, tower_adk::providers::openai::OpenAiError>(())
//! ```

mod decoder;
#[cfg(test)]
mod tests;

pub use self::decoder::ChunkDecoder;
use crate::providers::openai::OpenAiError;
pub use crate::providers::sse::{Flow, SseEvent, SseParser};

/// The data of an event of an OpenAI stream (chat completions or the Responses API),
/// trimmed: `None` for `data: [DONE]`, the end of the reply.
///
/// # Errors
///
/// [`OpenAiError::StreamError`] for an `event: error`, with the server's message.
pub(crate) fn event_data<'e>(event: &'e SseEvent<'_>) -> Result<Option<&'e str>, OpenAiError> {
    let data = event.data().trim();
    if data == "[DONE]" {
        return Ok(None);
    }
    if event.event() == "error" {
        return Err(OpenAiError::from_error_event(data));
    }
    Ok(Some(data))
}
