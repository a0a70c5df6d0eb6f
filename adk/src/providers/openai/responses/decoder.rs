//! Reading the semantic events of a streamed response into [`ModelDelta`]s
//! ([`EventDecoder`]): text, function-call arguments and reasoning summaries as they come,
//! each reasoning item's encrypted content when the item is done, the usage at the end.

use std::borrow::Cow;
use std::collections::VecDeque;

use serde::Deserialize;
use serde_json::Value;

use super::PROVIDER;
use super::reply::{Lenient, OutputItem, WireUsage, failed};
use crate::content::Reasoning;
use crate::model::{ModelDelta, Usage};
use crate::providers::http::ProviderError;
use crate::providers::openai::OpenAiError;
use crate::providers::openai::sse::event_data;
use crate::providers::sse::{Decode, Flow, SseEvent};

/// The most output items one streamed response may open.
const MAX_ITEMS: usize = 1024;

/// Reads the events of a streamed Responses API reply into [`ModelDelta`]s.
///
/// | event | delta |
/// |---|---|
/// | `response.output_text.delta`, `response.refusal.delta` | [`ModelDelta::Text`] |
/// | `response.reasoning_summary_text.delta` (and `response.reasoning_text.delta`) | [`ModelDelta::Reasoning`]: a piece of the item's readable text (summary parts joined by a blank line) |
/// | `response.output_item.added` of a `function_call` | [`ModelDelta::ToolCall`] with the call's id (`call_id`) and name |
/// | `response.function_call_arguments.delta` | [`ModelDelta::ToolCall`]: more arguments |
/// | `response.output_item.done` of a `reasoning` item | [`ModelDelta::Reasoning`] carrying its `encrypted_content`: the piece that ends the reasoning part |
/// | `response.completed`, `response.incomplete` | the end ([`Flow::Done`]); the usage is read ([`usage`](Self::usage)) |
/// | `response.failed`, `error` | [`OpenAiError::StreamError`] with the server's message and code |
///
/// An item whose text or arguments were not streamed in deltas (servers that send only
/// the `done` events) gives them whole when it is done. Other events (lifecycle, content
/// parts, built-in tools) give nothing. One decoder reads one reply.
#[derive(Debug, Default)]
pub struct EventDecoder {
    items: Vec<OpenItem>,
    calls: usize,
    usage: Option<Usage>,
}

/// An output item of the reply so far.
#[derive(Debug)]
struct OpenItem {
    id: String,
    /// The tool call's index, for a function call.
    call: Option<usize>,
    /// Whether its text or arguments came in deltas (else they come whole when it is done).
    streamed: bool,
}

/// One event, with the fields the decoder reads.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    #[serde(borrow)]
    item_id: Option<Text<'a>>,
    #[serde(default)]
    delta: Lenient,
    summary_index: Option<u32>,
    item: Option<OutputItem>,
    response: Option<Lifecycle>,
}

/// The `response` of a lifecycle event: what the decoder reads of it (not its output,
/// which the deltas gave already).
#[derive(Deserialize)]
struct Lifecycle {
    usage: Option<WireUsage>,
    error: Option<Value>,
}

/// A string borrowed from the event when it has no escapes.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

impl EventDecoder {
    /// A decoder at the start of a reply.
    pub fn new() -> Self {
        EventDecoder::default()
    }

    /// Reads one event, adding its deltas to `out` (see the table above); says whether
    /// the reply is complete. A `data: [DONE]` (which some servers add) also ends it.
    ///
    /// # Errors
    ///
    /// [`OpenAiError::StreamError`] for `response.failed` and `error` events (retryable),
    /// [`OpenAiError::MalformedChunk`] for data that is not an event's JSON, and
    /// [`OpenAiError::MalformedResponse`] for a reply of more than 1,024 output items.
    pub fn decode(
        &mut self,
        event: &SseEvent<'_>,
        out: &mut impl Extend<ModelDelta>,
    ) -> Result<Flow, OpenAiError> {
        let Some(data) = event_data(event)? else {
            return Ok(Flow::Done);
        };
        let parsed: Event<'_> =
            serde_json::from_str(data).map_err(|e| OpenAiError::malformed_chunk(data, e))?;
        let item_id = parsed.item_id.as_ref().map(|id| id.0.as_ref());
        match parsed.kind.0.as_ref() {
            "response.output_text.delta" | "response.refusal.delta" => {
                self.mark_streamed(item_id)?;
                if let Some(text) = parsed.delta.0.filter(|text| !text.is_empty()) {
                    out.extend(Some(ModelDelta::Text(text)));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.mark_streamed(item_id)?;
                let text = parsed.delta.0.unwrap_or_default();
                out.extend(Some(reasoning_piece(item_id, text)));
            }
            // A summary's next part: a blank line after the one before.
            "response.reasoning_summary_part.added" if parsed.summary_index > Some(0) => {
                out.extend(Some(reasoning_piece(item_id, "\n\n".to_owned())));
            }
            "response.function_call_arguments.delta" => {
                let index = self.call(item_id)?;
                out.extend(Some(ModelDelta::ToolCall {
                    index,
                    id: None,
                    name: None,
                    arguments: parsed.delta.0.unwrap_or_default(),
                }));
            }
            "response.output_item.added" => {
                if let Some(item) = parsed.item {
                    self.added(item, out)?;
                }
            }
            "response.output_item.done" => {
                if let Some(item) = parsed.item {
                    self.done(item, out)?;
                }
            }
            "response.completed" | "response.incomplete" => {
                let usage = parsed.response.and_then(|r| r.usage);
                self.usage = usage.map(|usage| usage.usage());
                return Ok(Flow::Done);
            }
            "response.failed" => {
                return Err(failed(parsed.response.and_then(|r| r.error).as_ref()));
            }
            "error" => return Err(OpenAiError::from_error_event(data)),
            _ => {}
        }
        Ok(Flow::More)
    }

    /// The usage the reply reported at its end, if it did.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// An item begins: a function call opens its tool call, with its id and name.
    fn added(
        &mut self,
        item: OutputItem,
        out: &mut impl Extend<ModelDelta>,
    ) -> Result<(), OpenAiError> {
        let id = item.id.as_deref();
        if item.kind != "function_call" {
            self.find_or_open(id, false)?;
            return Ok(());
        }
        let arguments = item.arguments();
        let at = self.find_or_open(id, true)?;
        let open = &mut self.items[at];
        open.streamed |= !arguments.is_empty();
        let index = open.call.unwrap_or_default();
        out.extend(Some(ModelDelta::ToolCall {
            index,
            id: item.call_id,
            name: item.name,
            arguments,
        }));
        Ok(())
    }

    /// An item is done: a reasoning item gives its encrypted content (and its text, if
    /// none was streamed); a message or a call what it did not stream.
    fn done(
        &mut self,
        item: OutputItem,
        out: &mut impl Extend<ModelDelta>,
    ) -> Result<(), OpenAiError> {
        let is_call = item.kind == "function_call";
        let at = self.find_or_open(item.id.as_deref(), is_call)?;
        let open = &self.items[at];
        let streamed = open.streamed;
        match item.kind.as_str() {
            "reasoning" => {
                let mut piece = item.reasoning();
                if streamed {
                    piece.text.clear();
                }
                if piece.data.is_some() || !streamed {
                    out.extend(Some(ModelDelta::Reasoning(piece)));
                }
            }
            "message" if !streamed => {
                let text = item.message_text();
                if !text.is_empty() {
                    out.extend(Some(ModelDelta::Text(text)));
                }
            }
            "function_call" if !streamed => {
                out.extend(Some(ModelDelta::ToolCall {
                    index: open.call.unwrap_or_default(),
                    arguments: item.arguments(),
                    id: item.call_id,
                    name: item.name,
                }));
            }
            _ => {}
        }
        Ok(())
    }

    /// The tool-call index of the function call `item_id`; a call not announced before
    /// (servers that skip `output_item.added`) is opened.
    fn call(&mut self, item_id: Option<&str>) -> Result<usize, OpenAiError> {
        let at = self.find_or_open(item_id, true)?;
        let open = &mut self.items[at];
        open.streamed = true;
        Ok(open.call.unwrap_or_default())
    }

    /// Notes that the item's text came in deltas.
    fn mark_streamed(&mut self, item_id: Option<&str>) -> Result<(), OpenAiError> {
        let at = self.find_or_open(item_id, false)?;
        self.items[at].streamed = true;
        Ok(())
    }

    /// The item with this id (the last one when the server names none), or a new one.
    fn find_or_open(&mut self, id: Option<&str>, is_call: bool) -> Result<usize, OpenAiError> {
        let found = match id {
            Some(id) => self.items.iter().rposition(|item| item.id == id),
            None => self.items.len().checked_sub(1),
        };
        if let Some(at) = found {
            if is_call && self.items[at].call.is_none() {
                self.items[at].call = Some(self.calls);
                self.calls += 1;
            }
            return Ok(at);
        }
        if self.items.len() == MAX_ITEMS {
            return Err(OpenAiError::malformed_response(
                format!("more than {MAX_ITEMS} output items in one response"),
                b"",
            ));
        }
        let call = is_call.then(|| {
            self.calls += 1;
            self.calls - 1
        });
        self.items.push(OpenItem {
            id: id.unwrap_or_default().to_owned(),
            call,
            streamed: false,
        });
        Ok(self.items.len() - 1)
    }
}

/// A piece of a reasoning item's readable text.
fn reasoning_piece(item_id: Option<&str>, text: String) -> ModelDelta {
    let piece = Reasoning::new(PROVIDER, text);
    ModelDelta::Reasoning(match item_id {
        Some(id) => piece.with_id(id),
        None => piece,
    })
}

impl Decode for EventDecoder {
    type Error = OpenAiError;

    fn decode(
        &mut self,
        event: &SseEvent<'_>,
        out: &mut VecDeque<ModelDelta>,
    ) -> Result<Flow, OpenAiError> {
        EventDecoder::decode(self, event, out)
    }

    fn usage(&self) -> Option<Usage> {
        EventDecoder::usage(self)
    }
}
