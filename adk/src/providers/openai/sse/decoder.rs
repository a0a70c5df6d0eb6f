//! Reading a streamed chat completion's JSON chunks, one per event, into
//! [`ModelDelta`]s: text, tool-call fragments on dense indices, usage, `[DONE]` and error
//! chunks ([`ChunkDecoder`]).

use std::collections::VecDeque;

use super::event_data;
use crate::model::ModelDelta;
use crate::model::Usage;
use crate::providers::http::ProviderError;
use crate::providers::openai::OpenAiError;
use crate::providers::openai::wire::{ChatChunk, WireCallIn, WireFunctionIn};
use crate::providers::sse::{Decode, Flow, SseEvent};

/// The most tool calls one streamed reply may open.
const MAX_TOOL_CALLS: usize = 1024;

/// One tool call being assembled.
#[derive(Debug)]
struct OpenCall {
    /// The server's index for it, if it gave one.
    server_index: Option<usize>,
    id: String,
    name: String,
}

/// Reads the chat completion chunks of a streamed reply into [`ModelDelta`]s.
///
/// One decoder reads one reply: it keeps the tool calls opened so far (to give their
/// fragments dense indices, see [`decode`](ChunkDecoder::decode)) and the last usage
/// reported.
#[derive(Debug, Default)]
pub struct ChunkDecoder {
    calls: Vec<OpenCall>,
    usage: Option<Usage>,
}

impl ChunkDecoder {
    /// A decoder at the start of a reply.
    pub fn new() -> Self {
        ChunkDecoder::default()
    }

    /// Reads one event, adding its deltas to `out`: the text (and refusal) deltas of the
    /// first choice, and its tool-call fragments.
    ///
    /// A fragment's delta carries a dense index: the order in which its call first
    /// appeared (a server's sparse indices become 0, 1, 2, ...; a fragment without an
    /// index belongs to the call with its id, else to the last call). Ids and names that
    /// repeat what is known are left out, so servers that send them in every fragment
    /// give the same deltas as those that send them once. The deltas are ready for a
    /// [`MessageAccumulator`](crate::MessageAccumulator).
    ///
    /// # Errors
    ///
    /// [`OpenAiError::MalformedChunk`] for data that is not a chat completion chunk,
    /// [`OpenAiError::StreamError`] for an error chunk or an `event: error`, and
    /// [`OpenAiError::MalformedResponse`] for a reply that opens more than 1,024 tool
    /// calls.
    pub fn decode(
        &mut self,
        event: &SseEvent<'_>,
        out: &mut impl Extend<ModelDelta>,
    ) -> Result<Flow, OpenAiError> {
        let Some(data) = event_data(event)? else {
            return Ok(Flow::Done);
        };
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
                    out.extend(Some(ModelDelta::Text(text)));
                }
            }
            for call in delta.tool_calls.into_iter().flatten() {
                out.extend(self.tool_call(call)?);
            }
        }
        Ok(Flow::More)
    }

    /// The usage the stream reported (the last one it sent), if it did.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// One fragment of a tool call, as a delta on a dense index.
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

impl Decode for ChunkDecoder {
    type Error = OpenAiError;

    fn decode(
        &mut self,
        event: &SseEvent<'_>,
        out: &mut VecDeque<ModelDelta>,
    ) -> Result<Flow, OpenAiError> {
        ChunkDecoder::decode(self, event, out)
    }

    fn usage(&self) -> Option<Usage> {
        ChunkDecoder::usage(self)
    }
}
