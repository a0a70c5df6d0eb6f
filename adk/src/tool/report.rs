//! What a streamed call reports besides its chunks: typed events for the run's caller,
//! and the result the model reads in place of the chunks joined.

use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde_json::Value;

use crate::content::Part;

/// A typed event that a streaming tool reports to its run's caller, as
/// [`AgentEvent::ToolEvent`](crate::AgentEvent::ToolEvent): progress a UI shows, or the
/// events of an agent that the tool runs
/// ([`SubAgentEvent`](crate::compose::SubAgentEvent)). The model never sees it.
///
/// Cloning is cheap (a reference count). It has a JSON form for the
/// [wire](crate::wire).
#[derive(Clone)]
pub struct ToolEvent {
    value: Arc<dyn Any + Send + Sync>,
    to_json: fn(&(dyn Any + Send + Sync)) -> Value,
}

impl ToolEvent {
    /// An event holding `value`.
    ///
    /// ```
    /// use tower_adk::tool::ToolEvent;
    ///
    /// #[derive(serde::Serialize)]
    /// struct Progress(u8);
    ///
    /// let event = ToolEvent::new(Progress(40));
    /// assert_eq!(event.downcast_ref::<Progress>().map(|p| p.0), Some(40));
    /// assert_eq!(event.to_json(), serde_json::json!(40));
    /// ```
    pub fn new<T: Serialize + Send + Sync + 'static>(value: T) -> Self {
        ToolEvent {
            value: Arc::new(value),
            to_json: |value| {
                value
                    .downcast_ref::<T>()
                    .and_then(|value| serde_json::to_value(value).ok())
                    .unwrap_or(Value::Null)
            },
        }
    }

    /// The value, if it is a `T`.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.value.downcast_ref()
    }

    /// The value's JSON form (`null` if it cannot be serialized).
    pub fn to_json(&self) -> Value {
        (self.to_json)(&*self.value)
    }
}

impl fmt::Debug for ToolEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ToolEvent").field(&self.to_json()).finish()
    }
}

/// The other side of a [`ToolStream`](super::ToolStream): what a streaming tool reports
/// besides its chunks (attach it with [`ToolStream::reporting`](super::ToolStream::reporting)).
///
/// - [`event`](ToolReport::event) queues a [`ToolEvent`] for the run's caller; the run
///   hands it on before the next chunk the stream yields (yield an empty chunk to have it
///   handed on at once).
/// - [`result`](ToolReport::result) sets what the model reads as the call's result, in
///   place of the chunks joined: a tool can stream its progress to the caller and answer
///   the model with a summary.
/// - [`part`](ToolReport::part) adds a part the model sees after that text: an image or
///   a file the tool made.
///
/// Clones share the same report.
#[derive(Clone, Default)]
pub struct ToolReport(Arc<Mutex<Reported>>);

#[derive(Default)]
struct Reported {
    events: VecDeque<ToolEvent>,
    result: Option<String>,
    parts: Vec<Part>,
    /// No one reads the events (the run is awaited for its result, or the call is
    /// joined whole).
    unread: bool,
}

impl ToolReport {
    /// An empty report.
    pub fn new() -> Self {
        ToolReport::default()
    }

    /// Queues an event for the run's caller.
    pub fn event(&self, event: ToolEvent) {
        self.lock().events.push_back(event);
    }

    /// Sets the call's result, as the model reads it.
    pub fn result(&self, result: impl Into<String>) {
        self.lock().result = Some(result.into());
    }

    /// Adds a part the model sees after the call's text: an image or a file (see
    /// [`ToolOutput::parts`](super::ToolOutput::parts)).
    pub fn part(&self, part: Part) {
        self.lock().parts.push(part);
    }

    /// Whether the events are read: `false` once the run that streams the call is only
    /// awaited for its result (or the call's output is joined whole), so a tool can
    /// skip making them. It may turn `false` after the stream was first polled (a
    /// retried or drained call is known unread only then), and never turns back: check it
    /// before making each event, not once at the start.
    pub fn is_read(&self) -> bool {
        !self.lock().unread
    }

    /// No one reads the events from now on.
    pub(crate) fn set_unread(&self) {
        self.lock().unread = true;
    }

    /// The next queued event.
    pub(crate) fn next_event(&self) -> Option<ToolEvent> {
        self.lock().events.pop_front()
    }

    /// The result, if one was set.
    pub(crate) fn take_result(&self) -> Option<String> {
        self.lock().result.take()
    }

    /// The parts the tool added.
    pub(crate) fn take_parts(&self) -> Vec<Part> {
        std::mem::take(&mut self.lock().parts)
    }

    /// (Plain data: a panic while it was held leaves it valid.)
    fn lock(&self) -> std::sync::MutexGuard<'_, Reported> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for ToolReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolReport").finish_non_exhaustive()
    }
}
