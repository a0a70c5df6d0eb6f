//! Streamed replies of the Messages API: server-sent events in,
//! [`ModelDelta`]s out.
//!
//! [`AnthropicModel`](super::AnthropicModel) reads its streamed replies with the shared
//! [`SseParser`] and [`EventDecoder`]; they are public for programs that bring their own
//! transport (a recorded stream, another HTTP client, a gateway that speaks the Messages
//! API).
//!
//! # Example
//!
//! ```
//! use tower_adk::providers::anthropic::sse::{EventDecoder, Flow, SseParser};
//! use tower_adk::{MessageAccumulator, ModelDelta};
//!
//! let body = concat!(
//!     "event: content_block_start\n",
//!     "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
//!     "event: content_block_delta\n",
//!     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Hmm.\"}}\n\n",
//!     "event: content_block_delta\n",
//!     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c2ln\"}}\n\n",
//!     "event: content_block_stop\n",
//!     "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
//!     "event: message_stop\n",
//!     "data: {\"type\":\"message_stop\"}\n\n",
//! );
//! let mut parser = SseParser::new();
//! let mut decoder = EventDecoder::new();
//! let mut deltas: Vec<ModelDelta> = Vec::new();
//! let mut done = false;
//! parser.feed(body.as_bytes());
//! while let Some(event) = parser.next_event()? {
//!     done |= decoder.decode(&event, &mut deltas)? == Flow::Done;
//! }
//! assert!(done);
//!
//! let mut reply = MessageAccumulator::default();
//! deltas.into_iter().for_each(|delta| reply.push(delta));
//! let thinking = reply.finish().full_content().reasoning().next().cloned().unwrap();
//! assert_eq!((thinking.text.as_str(), thinking.data.as_deref()), ("Hmm.", Some("c2ln")));
//! # Ok::<_, tower_adk::providers::anthropic::AnthropicError>(())
//! ```

use std::borrow::Cow;
use std::collections::VecDeque;

use serde::Deserialize;

use super::error::AnthropicError;
use super::wire::{ReplyBlock, WireUsage, reasoning};
use crate::content::Part;
use crate::model::{ModelDelta, Usage};
use crate::providers::http::ProviderError;
use crate::providers::sse::Decode;
pub use crate::providers::sse::{Flow, SseEvent, SseParser};

/// The most content blocks one streamed reply may open.
const MAX_BLOCKS: usize = 4096;

/// Reads the events of a streamed Messages API reply into [`ModelDelta`]s.
///
/// One decoder reads one reply. Text deltas become [`ModelDelta::Text`]; a `thinking`
/// block's text becomes [`ModelDelta::Reasoning`] pieces as it streams, and its signature
/// (which comes in `signature_delta`s) closes the block at its `content_block_stop`: one
/// [`Reasoning`](crate::content::Reasoning) part of kind `signature`, byte for byte. A
/// `redacted_thinking` block, which comes whole, is a part of kind `redacted_thinking`.
/// A `tool_use` block is a call on a dense index, its `input_json_delta`s the arguments
/// as they stream. Thinking that comes after tool calls of the same reply carries the id
/// of the call it follows, so the blocks go back in their order.
///
/// The usage is the start's, updated by the cumulative counts of `message_delta`; the
/// reply is complete at `message_stop`. Pings, unknown events and blocks of other kinds
/// (server tools) are skipped.
#[derive(Debug, Default)]
pub struct EventDecoder {
    /// The open and closed blocks, by their index.
    blocks: Vec<Block>,
    /// The `tool_use` blocks so far.
    calls: usize,
    /// The id of the last `tool_use` block so far.
    last_call: Option<String>,
    usage: Option<WireUsage>,
}

/// What a content block of the reply is, and what it still needs.
#[derive(Debug)]
enum Block {
    Text,
    Thinking {
        /// The call it follows in the reply, if any.
        after: Option<String>,
        signature: String,
    },
    ToolUse {
        index: usize,
        /// The input its start carried, until an `input_json_delta` comes.
        input: Option<String>,
    },
    Other,
}

/// One event's JSON: the fields of every event type, borrowed where they can be.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    index: Option<usize>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    content_block: Option<ReplyBlock>,
    message: Option<Start>,
    usage: Option<WireUsage>,
}

/// `message_start`'s message: its usage so far.
#[derive(Deserialize)]
struct Start {
    usage: Option<WireUsage>,
}

/// A `content_block_delta`'s delta (or `message_delta`'s, whose fields are not read).
#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow)]
    partial_json: Option<Cow<'a, str>>,
}

impl EventDecoder {
    /// A decoder at the start of a reply.
    pub fn new() -> Self {
        EventDecoder::default()
    }

    /// Reads one event, adding its deltas to `out`.
    ///
    /// # Errors
    ///
    /// [`AnthropicError::Overloaded`], [`RateLimited`](AnthropicError::RateLimited) or
    /// [`StreamError`](AnthropicError::StreamError) for an `error` event,
    /// [`AnthropicError::MalformedEvent`] for data that is not an event's JSON, and
    /// [`AnthropicError::MalformedResponse`] for a reply of more than 4,096 blocks.
    pub fn decode(
        &mut self,
        event: &SseEvent<'_>,
        out: &mut impl Extend<ModelDelta>,
    ) -> Result<Flow, AnthropicError> {
        let data = event.data();
        if event.event() == "error" {
            return Err(AnthropicError::from_error_event(data));
        }
        let parsed: Event<'_> =
            serde_json::from_str(data).map_err(|e| AnthropicError::malformed_event(data, e))?;
        let kind = parsed.kind.as_deref().unwrap_or(event.event());
        match kind {
            "content_block_delta" => self.delta(parsed, out),
            "content_block_start" => self.start(parsed, out)?,
            "content_block_stop" => self.stop(parsed.index, out),
            "message_start" => self.add_usage(parsed.message.and_then(|m| m.usage)),
            "message_delta" => self.add_usage(parsed.usage),
            "message_stop" => return Ok(Flow::Done),
            "error" => return Err(AnthropicError::from_error_event(data)),
            _ => {}
        }
        Ok(Flow::More)
    }

    /// The usage the stream reported, if it did.
    pub fn usage(&self) -> Option<Usage> {
        self.usage.as_ref().map(WireUsage::usage)
    }

    fn add_usage(&mut self, usage: Option<WireUsage>) {
        if let Some(later) = usage {
            self.usage.get_or_insert_default().update(&later);
        }
    }

    /// A block's start: whole redacted blocks, the id and name of calls, any text or
    /// thinking it already carries.
    fn start(
        &mut self,
        event: Event<'_>,
        out: &mut impl Extend<ModelDelta>,
    ) -> Result<(), AnthropicError> {
        let (Some(at), Some(block)) = (event.index, event.content_block) else {
            return Ok(());
        };
        if at >= MAX_BLOCKS {
            let reason = format!("more than {MAX_BLOCKS} content blocks in one reply");
            return Err(AnthropicError::malformed_response(reason, b""));
        }
        let after = self.last_call.clone();
        let opened = match block.kind.as_str() {
            "text" => {
                let text = block.text.unwrap_or_default();
                out.extend((!text.is_empty()).then_some(ModelDelta::Text(text)));
                Block::Text
            }
            "thinking" => {
                let text = block.thinking.unwrap_or_default();
                let piece = (!text.is_empty()).then(|| reasoning(text, after.as_deref()));
                out.extend(piece.map(ModelDelta::Reasoning));
                let signature = block.signature.unwrap_or_default();
                Block::Thinking { after, signature }
            }
            "redacted_thinking" => {
                let data = block.data.unwrap_or_default();
                let part = reasoning("", after.as_deref()).with_data("redacted_thinking", data);
                out.extend(Some(ModelDelta::Part(Part::Reasoning(part))));
                Block::Other
            }
            "tool_use" => {
                let index = self.calls;
                self.calls += 1;
                let input = block.arguments();
                self.last_call.clone_from(&block.id);
                out.extend(Some(ModelDelta::ToolCall {
                    index,
                    id: block.id,
                    name: block.name,
                    arguments: String::new(),
                }));
                Block::ToolUse {
                    index,
                    input: Some(input),
                }
            }
            _ => Block::Other,
        };
        if self.blocks.len() <= at {
            self.blocks.resize_with(at + 1, || Block::Other);
        }
        self.blocks[at] = opened;
        Ok(())
    }

    /// A piece of a block: text, thinking, signature, or arguments.
    fn delta(&mut self, event: Event<'_>, out: &mut impl Extend<ModelDelta>) {
        let (Some(at), Some(delta)) = (event.index, event.delta) else {
            return;
        };
        match (self.blocks.get_mut(at), delta) {
            (
                Some(Block::Text),
                Delta {
                    text: Some(text), ..
                },
            ) => out.extend(Some(ModelDelta::Text(text.into_owned()))),
            (Some(Block::Thinking { after, signature }), delta) => {
                if let Some(text) = delta.thinking {
                    let piece = reasoning(text, after.as_deref());
                    out.extend(Some(ModelDelta::Reasoning(piece)));
                }
                if let Some(more) = delta.signature {
                    signature.push_str(&more);
                }
            }
            (
                Some(Block::ToolUse { index, input }),
                Delta {
                    partial_json: Some(json),
                    ..
                },
            ) => {
                // The start's `{}` is a placeholder once the input streams.
                *input = None;
                out.extend(Some(ModelDelta::ToolCall {
                    index: *index,
                    id: None,
                    name: None,
                    arguments: json.into_owned(),
                }));
            }
            _ => {}
        }
    }

    /// A block's end: a thinking block's signature, a call's input that never streamed.
    fn stop(&mut self, index: Option<usize>, out: &mut impl Extend<ModelDelta>) {
        let Some(block) = index.and_then(|at| self.blocks.get_mut(at)) else {
            return;
        };
        match std::mem::replace(block, Block::Other) {
            Block::Thinking { after, signature } => {
                let piece = reasoning("", after.as_deref()).with_data("signature", signature);
                out.extend(Some(ModelDelta::Reasoning(piece)));
            }
            Block::ToolUse {
                index,
                input: Some(arguments),
            } => out.extend(Some(ModelDelta::ToolCall {
                index,
                id: None,
                name: None,
                arguments,
            })),
            _ => {}
        }
    }
}

impl Decode for EventDecoder {
    type Error = AnthropicError;

    fn decode(
        &mut self,
        event: &SseEvent<'_>,
        out: &mut VecDeque<ModelDelta>,
    ) -> Result<Flow, AnthropicError> {
        EventDecoder::decode(self, event, out)
    }

    fn usage(&self) -> Option<Usage> {
        EventDecoder::usage(self)
    }
}
