//! What a run gives back: [`AgentRun`], the stream of its [`AgentEvent`]s that can be
//! awaited to its [`AgentResult`]; the [`ToolRecord`] of each tool call; how it ended
//! ([`RunStatus`]); and what a failed tool call does to it ([`ToolFailurePolicy`]).

use std::fmt;
use std::future::{Future, IntoFuture};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use serde::{Deserialize, Serialize};

use crate::SmolStr;
use crate::checkpoint::CheckpointId;
use crate::interrupt::PendingInterrupt;
use crate::run_shared::RunShared;
use crate::telemetry::{self, InSpan};
use crate::tool::ToolEvent;
use crate::{AgentError, Finish, Locals, Message, Messages, Panicked, ToolCall, ToolError};

/// Something that happened during a run, in order.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentEvent {
    /// Text from the model, as it streams. Text that comes before a turn's tool calls
    /// arrives before those tools run.
    TextDelta(String),
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
    /// [`RunStatus::Interrupted`].
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

/// The record of one tool execution.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolRecord {
    /// The call id.
    pub call_id: SmolStr,
    /// The tool name.
    pub name: SmolStr,
    /// The arguments, as the model sent them.
    pub arguments: SmolStr,
    /// What the model saw: the output, or the description of the failure.
    pub content: String,
    /// The failure, if the call failed.
    pub error: Option<ToolError>,
    /// How long the call took, from its start to its last chunk.
    pub latency: Duration,
    /// Whether (and how) this call ends the run; see [`Finish`].
    pub finish: Option<Finish>,
    /// Why the call was made, when a planner or an executor says so.
    pub purpose: Option<String>,
}

impl ToolRecord {
    /// A successful call with this output, e.g. answered by a custom
    /// [`ToolExecutor`](super::ToolExecutor) without running the tool.
    pub fn success(call: &ToolCall, content: impl Into<String>) -> Self {
        ToolRecord {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            content: content.into(),
            error: None,
            latency: Duration::ZERO,
            finish: None,
            purpose: None,
        }
    }

    /// A failed call; the model sees the error's text.
    pub fn failure(call: &ToolCall, error: ToolError) -> Self {
        ToolRecord {
            content: error.to_model_text(),
            error: Some(error),
            ..ToolRecord::success(call, "")
        }
    }

    /// Says why the call was made.
    pub fn with_purpose(mut self, purpose: impl Into<String>) -> Self {
        self.purpose = Some(purpose.into());
        self
    }

    /// Whether the call succeeded.
    pub fn is_success(&self) -> bool {
        self.error.is_none()
    }

    /// The tool result message for the history.
    pub(crate) fn to_message(&self) -> Message {
        if self.error.is_some() {
            Message::tool_error(self.call_id.clone(), self.name.clone(), &self.content)
        } else {
            Message::tool(self.call_id.clone(), self.name.clone(), &self.content)
        }
    }
}

/// How a run that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// The model answered, or a return-directly tool ended the run.
    Completed,
    /// A tool failed and the agent's [`ToolFailurePolicy::EndDegraded`] ended the run;
    /// the final message is the first failed call's result.
    Degraded,
    /// The run waits for a person's decisions on its
    /// [`interrupts`](AgentResult::interrupts); resume it from its
    /// [`checkpoint`](AgentResult::checkpoint). The final message is the model's last
    /// reply.
    Interrupted,
}

/// What the agent does when a tool call fails (set with
/// [`AgentBuilder::on_tool_failure`](super::AgentBuilder::on_tool_failure)).
///
/// Every failure counts: unknown tool, invalid arguments, timeout, tool error, panic and
/// denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolFailurePolicy {
    /// The failure becomes a tool result the model reads, and the run goes on.
    #[default]
    Continue,
    /// The turn's other calls finish, then the run ends with [`RunStatus::Degraded`].
    EndDegraded,
    /// The run fails at once with [`AgentError::ToolFailed`]; calls still in flight are
    /// cancelled.
    FailRun,
}

/// The final result of a successful run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentResult {
    /// Whether the run completed or was ended early, degraded.
    pub status: RunStatus,
    /// The message that ends the run: the model's last reply or, when a return-directly
    /// tool ended it, that tool's result.
    pub final_message: Message,
    /// The whole history of the run.
    pub messages: Messages,
    /// One record per tool execution, in the order of the calls: turn by turn, and in
    /// the model's order within a turn (as in the history), whatever order they finished in.
    pub tool_records: Vec<ToolRecord>,
    /// How many iterations of the loop the run made: each is one model turn, one pass
    /// through `before_model`, the `wrap_model` chain and `after_model`, however it was
    /// answered (by the model, by a `wrap_model` hook that answered itself, or after
    /// several attempts of a retrying wrapper). It is what
    /// [`AgentBuilder::max_iterations`](super::AgentBuilder::max_iterations) bounds.
    pub iterations: usize,
    /// How many times the agent's model service was called: at the inner end of the
    /// `wrap_model` chain, so a turn that a `wrap_model` hook answered itself counts
    /// none, and each attempt of a retrying wrapper (such as a
    /// [`ModelLayer`](crate::handler::ModelLayer) retry) counts one. (Middleware built into
    /// the model service itself, before it was given to the agent, is inside that one
    /// call.)
    pub model_calls: usize,
    /// The run-local values at the end of the run (e.g. filled slots).
    pub locals: Locals,
    /// The interrupts that wait for decisions, when the run is
    /// [`Interrupted`](RunStatus::Interrupted).
    pub interrupts: Vec<PendingInterrupt>,
    /// The checkpoint the run wrote last: the one to resume an interrupted run from.
    /// `None` for a run that wrote none (no thread, not durable, not interrupted).
    pub checkpoint: Option<CheckpointId>,
}

impl AgentResult {
    /// The record of the tool call with this id, if the run made it.
    pub fn tool_record(&self, call_id: &str) -> Option<&ToolRecord> {
        self.tool_records.iter().find(|r| r.call_id == call_id)
    }
}

/// A run of an agent: a stream of [`AgentEvent`]s that can also be awaited to its final
/// [`AgentResult`].
///
/// The run does its work as it is polled, in the caller's task: nothing is spawned, so
/// dropping the run cancels the model and tool calls in flight, and a slow reader slows
/// streaming tools down (backpressure).
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentEvent, AgentRequest};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use futures::StreamExt;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::new([Turn::text("Hello!")])).build()?;
///
/// let mut run = agent.run(AgentRequest::user("hi"));
/// while let Some(event) = run.next().await {
///     if let AgentEvent::TextDelta(text) = event? {
///         print!("{text}");
///     }
/// }
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct AgentRun {
    /// `None` once the run's deadline passed: everything in flight was dropped.
    events: Option<InSpan<BoxStream<'static, Result<AgentEvent, AgentError>>>>,
    deadline: Deadline,
    /// `None` for a run made from a stream of events ([`AgentRun::from_events`]).
    audience: Option<RunShared>,
}

/// The whole-run deadline: armed on the first poll, inside the caller's runtime.
enum Deadline {
    None,
    Armed(Duration),
    Running(Pin<Box<tokio::time::Sleep>>, Duration),
}

impl AgentRun {
    /// The final result, skipping the events; the same as awaiting the run, without the
    /// name clash between `IntoFuture::into_future` and `StreamExt::into_future`.
    ///
    /// From here on the run does not build the events it would have streamed (text
    /// deltas, messages, tool calls and chunks, tool results), so a run that is only
    /// awaited does not pay for copying their text.
    pub fn result(self) -> RunResult {
        if let Some(audience) = &self.audience {
            audience.leave();
        }
        RunResult { run: self }
    }

    /// Cancels the run: drops everything in flight, as dropping the run does, and for a
    /// run that held a thread (a durable run, or one on a thread) waits until its state
    /// is written as the thread's newest checkpoint, marked failed, which it gives back.
    /// Resuming that checkpoint with no decisions takes the run over, in this process or
    /// in another one that shares the agent's store; a new run on the thread goes on
    /// from the history before this one. `None` when the run held no thread or had
    /// ended.
    ///
    /// (Dropping a run writes the same checkpoint, on a task of its own that no one
    /// waits for: a process about to exit cancels its runs instead.)
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures::StreamExt;
    /// use serde_json::json;
    /// use tower_adk::checkpoint::CheckpointStatus;
    /// use tower_adk::testing::{ScriptedModel, Turn, sleep_tool};
    /// use tower_adk::{Agent, AgentEvent, AgentRequest};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let model = ScriptedModel::per_run([Turn::call("c1", "slow", json!({})), Turn::text("Done.")]);
    /// let agent = Agent::builder(model)
    ///     .tool(sleep_tool("slow", Duration::from_secs(3600), "done"))
    ///     .build()?;
    ///
    /// let mut run = agent.run(AgentRequest::user("go").on_thread("t1"));
    /// while !matches!(run.next().await, Some(Ok(AgentEvent::ToolCallStarted { .. }))) {}
    /// let checkpoint = run.cancel().await.expect("the run held its thread");
    ///
    /// let (newest, record) = agent.last_checkpoint("t1").await?.expect("a checkpoint");
    /// assert_eq!((newest, record.status), (checkpoint, CheckpointStatus::Failed));
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn cancel(self) -> Option<CheckpointId> {
        let audience = self.audience.clone();
        drop(self);
        audience?.take_released()?.await.ok().flatten()
    }

    /// No one reads the events from here on (see [`AgentRun::result`]).
    #[cfg(feature = "server")]
    pub(crate) fn leave(&self) {
        if let Some(audience) = &self.audience {
            audience.leave();
        }
    }

    pub(crate) fn new(
        events: impl Stream<Item = Result<AgentEvent, AgentError>> + Send + 'static,
        timeout: Option<Duration>,
        audience: RunShared,
    ) -> Self {
        AgentRun {
            events: Some(InSpan::new(events.boxed(), telemetry::run_span())),
            deadline: timeout.map_or(Deadline::None, Deadline::Armed),
            audience: Some(audience),
        }
    }

    /// A run made of a stream of events: what a service that composes agents (see
    /// [`compose`](crate::compose)) answers, so that it can stand where an agent does.
    /// The stream should end with [`AgentEvent::Completed`] or an error; awaiting the
    /// run reads it to that event.
    ///
    /// ```
    /// use tower_adk::{Agent, AgentEvent, AgentRequest, AgentRun};
    /// use tower_adk::testing::{ScriptedModel, Turn};
    /// use futures::StreamExt;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let agent = Agent::builder(ScriptedModel::new([Turn::text("hi")])).build()?;
    /// // The same run, its text shouted.
    /// let shouted = agent.run(AgentRequest::user("hello")).map(|event| match event {
    ///     Ok(AgentEvent::TextDelta(text)) => Ok(AgentEvent::TextDelta(text.to_uppercase())),
    ///     other => other,
    /// });
    /// let result = AgentRun::from_events(shouted).await?;
    /// assert_eq!(result.final_message.content(), "hi");
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn from_events(
        events: impl Stream<Item = Result<AgentEvent, AgentError>> + Send + 'static,
    ) -> Self {
        AgentRun {
            events: Some(InSpan::new(events.boxed(), telemetry::run_span())),
            deadline: Deadline::None,
            audience: None,
        }
    }
}

impl Stream for AgentRun {
    type Item = Result<AgentEvent, AgentError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Deadline::Armed(limit) = self.deadline {
            self.deadline = Deadline::Running(Box::pin(tokio::time::sleep(limit)), limit);
        }
        if let Deadline::Running(sleep, limit) = &mut self.deadline
            && sleep.as_mut().poll(cx).is_ready()
        {
            let limit = *limit;
            self.deadline = Deadline::None;
            // Dropping the run's stream cancels every model and tool call in flight.
            self.events = None;
            return Poll::Ready(Some(Err(AgentError::Timeout { limit })));
        }
        let Some(events) = &mut self.events else {
            return Poll::Ready(None);
        };
        // Hooks, models and tools have their panics caught where they are called; this
        // catches the rest (a stream wrapper's closure, say), so that a panic ends this
        // run only, never the task that polls it with others.
        match std::panic::catch_unwind(AssertUnwindSafe(|| events.poll_next_unpin(cx))) {
            Ok(poll) => poll,
            Err(panic) => {
                self.events = None;
                Poll::Ready(Some(Err(AgentError::Panicked(Panicked::from_payload(
                    &*panic,
                )))))
            }
        }
    }
}

impl fmt::Debug for AgentRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentRun").finish_non_exhaustive()
    }
}

impl IntoFuture for AgentRun {
    type Output = Result<AgentResult, AgentError>;
    type IntoFuture = RunResult;

    fn into_future(self) -> RunResult {
        self.result()
    }
}

/// The future of a run's final result: drives the run, skipping its events.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct RunResult {
    run: AgentRun,
}

impl Future for RunResult {
    type Output = Result<AgentResult, AgentError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match std::task::ready!(self.run.poll_next_unpin(cx)) {
                Some(Ok(AgentEvent::Completed(result))) => return Poll::Ready(Ok(*result)),
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Poll::Ready(Err(error)),
                None => return Poll::Ready(Err(AgentError::Incomplete)),
            }
        }
    }
}

#[cfg(all(test, not(feature = "tracing")))]
mod tests {
    use crate::testing::{ScriptedModel, Turn};
    use crate::{Agent, AgentRequest};

    /// A run's state is one allocation per run, held by every run in flight. Up to 1,032
    /// bytes glibc serves it from its per-thread cache; above, from its bins after
    /// consolidating the fast bins, which cost W1 18% more instructions per run (see
    /// BENCHMARKS.md). A local added to the loop that lives across yields can cross it.
    /// (With the `tracing` feature the spans make it larger; this checks the default.)
    #[test]
    fn a_runs_state_fits_the_allocators_small_size_cache() {
        let Ok(agent) = Agent::builder(ScriptedModel::new([Turn::text("hi")])).build() else {
            panic!("the agent builds");
        };
        let run = agent.run(AgentRequest::user("hi"));
        let Some(events) = &run.events else {
            panic!("a new run has its state");
        };
        let size = std::mem::size_of_val(&**events.get_ref());
        assert!(size <= 1032, "a run's state is {size} bytes");
    }
}
