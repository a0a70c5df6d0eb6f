//! Replacing how one turn's batch of tool calls is executed (the "execute" half of a
//! plan/execute split): [`ToolExecutor`], and what it is given, [`ToolBatch`] and the
//! [`DefaultExecutor`].

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use tower::BoxError;

use crate::message::ToolCall;
use crate::tool::ToolRecord;

/// Executes one turn's tool calls in place of the default executor.
///
/// A handler installs one for its runs with [`AgentConfig::set_executor`](super::AgentConfig::set_executor)
/// in `before_agent`; without it (remove the handler) the default executor runs the calls,
/// in parallel up to the agent's cap. An executor may run the calls through the default
/// pipeline (validation, wrappers, the tool) with its own concurrency, answer some itself,
/// or replace them, and returns one [`ToolRecord`] per call. Events of calls run through
/// [`ToolBatch::default_executor`] (call started, output chunks) reach the caller as they
/// happen; the loop emits each returned record as an
/// [`AgentEvent::ToolResult`](crate::agent::AgentEvent::ToolResult).
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
pub struct DefaultExecutor(Arc<dyn RunCalls>);

/// How the default executor runs calls: the loop's batch of the run the executor
/// serves (`agent::executor`), behind this seam so that a configuration can hold an
/// executor without knowing the loop.
pub(crate) trait RunCalls: Send + Sync + fmt::Debug + 'static {
    /// Runs these calls, returning their records in the same order.
    fn run(&self, calls: Vec<ToolCall>) -> BoxFuture<'_, Result<Vec<ToolRecord>, BoxError>>;
}

impl DefaultExecutor {
    pub(crate) fn new(calls: impl RunCalls) -> Self {
        DefaultExecutor(Arc::new(calls))
    }

    /// Runs these calls, returning their records in the same order.
    ///
    /// # Errors
    ///
    /// A tool wrapper's handler error; tool failures are records, not errors.
    pub async fn run(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolRecord>, BoxError> {
        self.0.run(calls).await
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
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _obj_safe(_: Box<dyn RunCalls>, _: Box<dyn DynExecutor>) {}
}
