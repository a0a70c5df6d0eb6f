//! [`AgentEvent`]: what happened during a run, in order: the events a caller reads from
//! an [`AgentRun`](super::AgentRun).

use std::sync::Arc;

use super::result::AgentResult;
use crate::interrupt::PendingInterrupt;
use crate::message::Message;
use crate::model::Usage;
use crate::tool::{ToolEvent, ToolRecord};

/// Something that happened during a run, in order.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentEvent {
    /// Text from the model, as it streams. Text that comes before a turn's tool calls
    /// arrives before those tools run.
    TextDelta(String),
    /// Text of the model's reasoning, as it streams (from a model that shows it), apart
    /// from its answer: a page may show it or hide it. The reply's
    /// [`Message`](AgentEvent::Message) keeps the whole reasoning, with the provider's
    /// data, in its parts.
    ReasoningDelta(String),
    /// What one model call used, as it reported it (usually at the end of its reply),
    /// and the model that answered, when it said.
    Usage {
        /// The model that answered.
        model: Option<String>,
        /// What the call used.
        usage: Usage,
    },
    /// The model's whole reply for one turn, as rewritten by the `after_model` hooks: the
    /// message the loop routes on.
    Message(Message),
    /// The text of a reply that also calls tools ("Let me look that up."), marked as
    /// intermediate: it comes after the reply's [`AgentEvent::Message`] and before the
    /// turn's tools run, so a UI can show it while they work. Switched off with
    /// [`AgentBuilder::filler_messages`](super::AgentBuilder::filler_messages).
    Filler(String),
    /// A tool call started.
    ToolCallStarted {
        /// The call id.
        call_id: Arc<str>,
        /// The tool name.
        name: Arc<str>,
    },
    /// A chunk of a streamed tool call's output, after every stream wrapper. (The id and
    /// name are shared by all of a call's events, not copied per chunk.)
    ToolOutputChunk {
        /// The call id.
        call_id: Arc<str>,
        /// The tool name.
        name: Arc<str>,
        /// The chunk.
        chunk: String,
    },
    /// A typed event that a streaming tool reported (see
    /// [`ToolReport`](crate::tool::ToolReport)), such as an event of an agent that the
    /// call runs ([`SubAgentEvent`](crate::compose::SubAgentEvent)). It comes in order
    /// with the call's chunks; the model never sees it.
    ToolEvent {
        /// The call id.
        call_id: Arc<str>,
        /// The tool name.
        name: Arc<str>,
        /// The event.
        event: ToolEvent,
    },
    /// A tool call finished, successfully or not. The record is shared with the run,
    /// which needs it for the next model call and the result; it is copied at the end
    /// only if the caller still holds this event then. (Behind a pointer, like
    /// `Completed`, to keep events small: most of a run's events are text deltas and
    /// output chunks.)
    ToolResult(Arc<ToolRecord>),
    /// A tool call or a hook interrupted the run (see [`interrupt`](crate::interrupt)):
    /// once the turn's other calls are done, the run ends with
    /// [`RunStatus::Interrupted`](super::RunStatus::Interrupted).
    Interrupt(Box<PendingInterrupt>),
    /// The run finished (or stopped at an interrupt); always the last event of a run that
    /// did not fail.
    Completed(Box<AgentResult>),
}

impl AgentEvent {
    /// The text of a [`TextDelta`](AgentEvent::TextDelta); `None` for other events.
    pub fn text_delta(&self) -> Option<&str> {
        match self {
            AgentEvent::TextDelta(text) => Some(text),
            _ => None,
        }
    }

    /// The chunk of a [`ToolOutputChunk`](AgentEvent::ToolOutputChunk); `None` for other
    /// events.
    ///
    /// ```
    /// use tower_adk::AgentEvent;
    ///
    /// let events = [AgentEvent::TextDelta("Hel".into()), AgentEvent::TextDelta("lo".into())];
    /// let text: String = events.iter().filter_map(AgentEvent::text_delta).collect();
    /// assert_eq!(text, "Hello");
    /// assert!(events.iter().all(|e| e.output_chunk().is_none()));
    /// ```
    pub fn output_chunk(&self) -> Option<&str> {
        match self {
            AgentEvent::ToolOutputChunk { chunk, .. } => Some(chunk),
            _ => None,
        }
    }
}
