//! The loop's side of a custom [`ToolExecutor`](crate::agent::ToolExecutor): the batch
//! runner its [`DefaultExecutor`] runs calls with, and the stream of call events a turn
//! gets from the executor.

use std::fmt;
use std::sync::Arc;

use futures::channel::mpsc;
use futures::future::{self, BoxFuture, Either};
use futures::stream::BoxStream;
use futures::{SinkExt, StreamExt};
use tower::BoxError;

use super::batch::{self, BatchOptions, CallEvent};
use super::error::AgentError;
use super::event::AgentEvent;
use crate::config::{AgentConfig, DefaultExecutor, RunCalls, SharedExecutor, ToolBatch};
use crate::context::Scope;
use crate::handler::Chain;
use crate::message::ToolCall;
use crate::tool::{ToolError, ToolErrorKind, ToolRecord};

/// How many events of a custom executor's calls may wait for the caller.
const EXECUTOR_EVENTS: usize = 16;

/// What the default executor of a run runs calls with: the run's chain, configuration
/// and scope, with the agent's batch options. Cheap to clone.
#[derive(Clone)]
pub(super) struct BatchRunner {
    pub(super) chain: Chain,
    pub(super) config: AgentConfig,
    pub(super) scope: Scope,
    pub(super) options: BatchOptions,
    /// Where the events of its calls go: the run's stream, when a custom executor runs.
    events: Option<mpsc::Sender<AgentEvent>>,
}

impl BatchRunner {
    pub(super) fn new(
        chain: Chain,
        config: AgentConfig,
        scope: Scope,
        options: BatchOptions,
    ) -> Self {
        BatchRunner {
            chain,
            config,
            scope,
            options,
            events: None,
        }
    }

    async fn run_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolRecord>, BoxError> {
        let mut records: Vec<Option<ToolRecord>> = vec![None; calls.len()];
        let batch = batch::run_batch(
            &self.chain,
            &self.config,
            &self.scope,
            calls.into_iter().enumerate(),
            self.options,
        );
        futures::pin_mut!(batch);
        let mut events = self.events.clone();
        while let Some(event) = batch.next().await {
            match event {
                // The caller may have stopped reading; the calls go on regardless.
                CallEvent::Event(event) => {
                    if let Some(events) = &mut events {
                        drop(events.send(event).await);
                    }
                }
                CallEvent::Done(index, record) => {
                    records[index] = Some(Arc::unwrap_or_clone(record));
                }
                CallEvent::Fatal(error) => return Err(error.into_chain()),
            }
        }
        Ok(records.into_iter().flatten().collect())
    }
}

impl RunCalls for BatchRunner {
    fn run(&self, calls: Vec<ToolCall>) -> BoxFuture<'_, Result<Vec<ToolRecord>, BoxError>> {
        Box::pin(self.run_calls(calls))
    }
}

impl fmt::Debug for BatchRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefaultExecutor")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Runs a turn's calls with a custom executor, as the same stream of call events the
/// default batch gives: the events of calls run through the default executor as they
/// happen, then one record per call, in the model's order.
///
/// Each call comes with its place in the turn, which its record keeps.
pub(super) fn run_custom(
    executor: &SharedExecutor,
    calls: Vec<(usize, ToolCall)>,
    runner: BatchRunner,
) -> BoxStream<'static, CallEvent> {
    let executor = Arc::clone(&executor.0);
    let (places, calls): (Vec<usize>, Vec<ToolCall>) = calls.into_iter().unzip();
    async_stream::stream! {
        let (sender, mut events) = mpsc::channel(EXECUTOR_EVENTS);
        let default = DefaultExecutor::new(BatchRunner { events: Some(sender), ..runner });
        let mut execution = executor.execute(ToolBatch::new(calls.clone(), default));
        let answered = loop {
            match future::select(events.next(), &mut execution).await {
                Either::Left((Some(event), _)) => yield CallEvent::Event(event),
                Either::Left((None, _)) => break (&mut execution).await,
                Either::Right((answered, _)) => break answered,
            }
        };
        drop(execution);
        while let Ok(event) = events.try_recv() {
            yield CallEvent::Event(event);
        }
        let mut answered = match answered {
            Ok(answered) => answered,
            Err(error) => {
                yield CallEvent::Fatal(AgentError::from_executor(error));
                return;
            }
        };
        for (&index, call) in places.iter().zip(&calls) {
            let record = match answered.iter().position(|r| r.call_id == call.id) {
                Some(at) => answered.swap_remove(at),
                None => ToolRecord::failure(call, ToolError::new(
                    ToolErrorKind::Failed,
                    "the tool executor returned no result for this call",
                )),
            };
            yield CallEvent::Done(index, Arc::new(record));
        }
    }
    .boxed()
}
