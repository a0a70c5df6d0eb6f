//! [`AgentRun`]: a run as its caller holds it, the stream of its [`AgentEvent`]s that can
//! be awaited to its [`AgentResult`] ([`RunResult`], the future of that result); and the
//! adapter that makes those events of the runner's steps.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

use super::AgentInner;
use super::error::AgentError;
use super::event::AgentEvent;
use super::request::AgentRequest;
use super::result::AgentResult;
use super::runner::Runner;
use super::shared::RunShared;
use crate::checkpoint::CheckpointId;
use crate::error::Panicked;
use crate::telemetry::metrics::RunMeter;
use crate::telemetry::{self, InSpan};

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
    /// The run, as the metrics count it (empty without the `metrics` feature).
    #[cfg_attr(
        not(feature = "metrics"),
        allow(dead_code, reason = "read only to count the run's end")
    )]
    meter: RunMeter,
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
    /// use tower_adk::agent::CheckpointStatus;
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

    /// Starts a run of the agent for the request: its runner's steps, as events.
    pub(super) fn start(agent: Arc<AgentInner>, request: AgentRequest) -> Self {
        let (timeout, meter) = (agent.run_timeout, RunMeter::start(&agent.name));
        let span = telemetry::run_span(&agent.name, request.thread());
        let runner = Runner::for_request(agent, request);
        let audience = runner.audience().clone();
        AgentRun::new(events(runner), timeout, audience, span, meter)
    }

    fn new(
        events: impl Stream<Item = Result<AgentEvent, AgentError>> + Send + 'static,
        timeout: Option<Duration>,
        audience: RunShared,
        span: telemetry::Span,
        meter: RunMeter,
    ) -> Self {
        AgentRun {
            events: Some(InSpan::new(events.boxed(), span)),
            deadline: timeout.map_or(Deadline::None, Deadline::Armed),
            audience: Some(audience),
            meter,
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
            events: Some(InSpan::new(events.boxed(), telemetry::composed_run_span())),
            deadline: Deadline::None,
            audience: None,
            meter: RunMeter::default(),
        }
    }
}

/// The adapter: the run's events, step after step, then its result. (The events of a
/// turn's calls are polled directly rather than through `Runner::advance`: output
/// chunks are most of a streaming run's events.)
fn events(mut run: Runner) -> impl Stream<Item = Result<AgentEvent, AgentError>> + Send + 'static {
    async_stream::try_stream! {
        loop {
            let step = if run.running_tools() {
                std::future::poll_fn(|cx| run.poll_calls(cx)).await
            } else if run.finishing() {
                break;
            } else {
                run.advance().await
            };
            match step {
                Ok(Some(event)) => yield event,
                Ok(None) => {}
                Err(error) => match run.interrupted_by(error) {
                    Ok(event) => {
                        if let Some(event) = event {
                            yield event;
                        }
                    }
                    Err(error) => Err(run.fail(error).await)?,
                },
            }
        }
        let result = match run.finish().await {
            Ok(result) => result,
            Err(error) => Err(run.fail(error).await)?,
        };
        yield AgentEvent::Completed(result);
    }
}

impl Stream for AgentRun {
    type Item = Result<AgentEvent, AgentError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let poll = self.poll_events(cx);
        #[cfg(feature = "metrics")]
        if let Some((status, waiting)) = ending(&poll) {
            self.meter.finished(status, waiting);
        }
        poll
    }
}

/// How the run's last event ends it, for its meter: the status it ended with (as the
/// metrics name it) and the interrupts it stopped at; `None` for any other event.
#[cfg(feature = "metrics")]
fn ending(poll: &Poll<Option<Result<AgentEvent, AgentError>>>) -> Option<(&'static str, usize)> {
    use super::RunStatus;
    match poll {
        Poll::Ready(Some(Ok(AgentEvent::Completed(result)))) => {
            let status = match result.status {
                RunStatus::Completed => "completed",
                RunStatus::Degraded => "degraded",
                RunStatus::Interrupted => "interrupted",
            };
            Some((status, result.interrupts.len()))
        }
        Poll::Ready(Some(Err(error))) => Some(match error {
            AgentError::Timeout { .. } => ("timeout", 0),
            AgentError::Cancelled { .. } => ("cancelled", 0),
            _ => ("failed", 0),
        }),
        _ => None,
    }
}

impl AgentRun {
    /// The next event, within the run's deadline.
    fn poll_events(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<AgentEvent, AgentError>>> {
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
    use crate::agent::{Agent, AgentRequest};
    use crate::testing::{ScriptedModel, Turn};

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
