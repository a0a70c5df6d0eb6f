//! Replacing how one turn's batch of tool calls is executed (the "execute" half of a
//! plan/execute split).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::channel::mpsc;
use futures::future::{self, BoxFuture, Either};
use futures::stream::BoxStream;
use futures::{SinkExt, StreamExt};
use tower::BoxError;

use super::batch::{self, BatchOptions, CallEvent};
use super::{AgentConfig, AgentEvent, ToolRecord};
use crate::context::Scope;
use crate::handler::Chain;
use crate::{AgentError, ToolCall, ToolError, ToolErrorKind};

/// Executes one turn's tool calls in place of the default executor.
///
/// A handler installs one for its runs with [`AgentConfig::set_executor`] in
/// `before_agent`; without it (remove the handler) the default executor runs the calls,
/// in parallel up to the agent's cap. An executor may run the calls through the default
/// pipeline (validation, wrappers, the tool) with its own concurrency, answer some itself,
/// or replace them, and returns one [`ToolRecord`] per call. Events of calls run through
/// [`ToolBatch::default_executor`] (call started, output chunks) reach the caller as they
/// happen; the loop emits each returned record as an [`AgentEvent::ToolResult`].
///
/// A call without a record in the answer gets a failed record; records for calls the turn
/// did not make are dropped.
///
/// # Example
///
/// ```
/// use tower_adk::agent::{ToolBatch, ToolExecutor};
/// use tower_adk::{AgentConfig, BoxError, Handler, RunContext, ToolRecord};
///
/// /// Runs the calls one after another, in the model's order.
/// struct OneByOne;
///
/// impl ToolExecutor for OneByOne {
///     async fn execute(&self, batch: ToolBatch) -> Result<Vec<ToolRecord>, BoxError> {
///         let (calls, executor) = batch.into_parts();
///         let mut records = Vec::new();
///         for call in calls {
///             records.push(executor.run_one(call).await?);
///         }
///         Ok(records)
///     }
/// }
///
/// /// The handler that installs it.
/// struct Sequential;
///
/// impl Handler for Sequential {
///     async fn before_agent(&self, _: &mut RunContext, mut config: AgentConfig) -> Result<AgentConfig, BoxError> {
///         config.set_executor(OneByOne);
///         Ok(config)
///     }
/// }
/// ```
pub trait ToolExecutor: Send + Sync + 'static {
    /// Executes the batch, returning one record per call.
    fn execute(
        &self,
        batch: ToolBatch,
    ) -> impl Future<Output = Result<Vec<ToolRecord>, BoxError>> + Send;
}

/// The object-safe twin of [`ToolExecutor`].
pub(crate) trait DynExecutor: Send + Sync + 'static {
    fn execute(&self, batch: ToolBatch) -> BoxFuture<'_, Result<Vec<ToolRecord>, BoxError>>;
}

impl<E: ToolExecutor> DynExecutor for E {
    fn execute(&self, batch: ToolBatch) -> BoxFuture<'_, Result<Vec<ToolRecord>, BoxError>> {
        Box::pin(ToolExecutor::execute(self, batch))
    }
}

/// An executor installed in a run's configuration.
#[derive(Clone)]
pub(crate) struct SharedExecutor(pub(crate) Arc<dyn DynExecutor>);

/// How many events of a custom executor's calls may wait for the caller.
const EXECUTOR_EVENTS: usize = 16;

impl SharedExecutor {
    /// Runs a turn's calls with this executor, as the same stream of call events the
    /// default batch gives: the events of calls run through the default executor as they
    /// happen, then one record per call, in the model's order.
    ///
    /// Each call comes with its place in the turn, which its record keeps.
    pub(crate) fn run(
        &self,
        calls: Vec<(usize, ToolCall)>,
        default: DefaultExecutor,
    ) -> BoxStream<'static, CallEvent> {
        let executor = Arc::clone(&self.0);
        let (places, calls): (Vec<usize>, Vec<ToolCall>) = calls.into_iter().unzip();
        async_stream::stream! {
            let (sender, mut events) = mpsc::channel(EXECUTOR_EVENTS);
            let default = DefaultExecutor { events: Some(sender), ..default };
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
}

impl fmt::Debug for SharedExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ToolExecutor")
    }
}

/// One turn's tool calls, and the default executor to run them with.
#[derive(Debug)]
pub struct ToolBatch {
    calls: Vec<ToolCall>,
    executor: DefaultExecutor,
}

impl ToolBatch {
    pub(crate) fn new(calls: Vec<ToolCall>, executor: DefaultExecutor) -> Self {
        ToolBatch { calls, executor }
    }

    /// The calls, in the model's order.
    pub fn calls(&self) -> &[ToolCall] {
        &self.calls
    }

    /// The default executor of this run.
    pub fn default_executor(&self) -> &DefaultExecutor {
        &self.executor
    }

    /// The calls and the default executor.
    pub fn into_parts(self) -> (Vec<ToolCall>, DefaultExecutor) {
        (self.calls, self.executor)
    }

    /// Runs every call with the default executor, as if no executor were installed.
    ///
    /// # Errors
    ///
    /// A tool wrapper's handler error; tool failures are records, not errors.
    pub async fn run_default(self) -> Result<Vec<ToolRecord>, BoxError> {
        self.executor.run(self.calls).await
    }
}

/// The default way to run calls: arguments parsed and validated, the run's tool
/// wrappers, the tool, with the agent's parallelism cap. Cheap to clone.
#[derive(Clone)]
pub struct DefaultExecutor {
    chain: Chain,
    config: AgentConfig,
    scope: Scope,
    options: BatchOptions,
    /// Where the events of its calls go: the run's stream, when a custom executor runs.
    events: Option<mpsc::Sender<AgentEvent>>,
}

impl DefaultExecutor {
    pub(crate) fn new(
        chain: Chain,
        config: AgentConfig,
        scope: Scope,
        options: BatchOptions,
    ) -> Self {
        DefaultExecutor {
            chain,
            config,
            scope,
            options,
            events: None,
        }
    }

    /// Runs these calls, returning their records in the same order.
    ///
    /// # Errors
    ///
    /// A tool wrapper's handler error; tool failures are records, not errors.
    pub async fn run(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolRecord>, BoxError> {
        let mut records: Vec<Option<ToolRecord>> = vec![None; calls.len()];
        let batch = batch::run_batch(
            self.chain.clone(),
            self.config.clone(),
            self.scope.clone(),
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

    /// Runs one call.
    ///
    /// # Errors
    ///
    /// A tool wrapper's handler error; a tool failure is a record, not an error.
    pub async fn run_one(&self, call: ToolCall) -> Result<ToolRecord, BoxError> {
        let id = call.id.clone();
        let mut records = self.run(vec![call]).await?;
        records
            .pop()
            .ok_or_else(|| format!("the call `{id}` left no record").into())
    }
}

impl fmt::Debug for DefaultExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefaultExecutor")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}
