//! The agent: a `tower::Service<AgentRequest>` whose response is a run.
//!
//! An [`Agent`] is built once from a model, an instruction, tools and limits. Each call
//! starts an [`AgentRun`]: the ReAct loop (call the model; if its reply has tool calls,
//! run them in parallel, append the results, and call the model again) customised by the
//! run's [handlers](crate::handler).
//!
//! # Two faces
//!
//! The [`Agent`] answers each request at once with the run, an [`AgentRun`] to read event
//! by event (or await); [`AwaitRun`] is the same agent as a service whose response is the
//! run's final [`AgentResult`], so the tower layers around it (concurrency limit,
//! timeout, rate limit) bound whole runs. See [`AwaitRun`] for which to use when.
//!
//! # The compiled loop
//!
//! The loop's topology (is there a tools step? can the tools step end the run?) depends
//! only on whether the run has tools and whether one of them returns directly. The agent
//! compiles the topology for such a key the first time a run needs it, caches it, and
//! passes each run's tools and return-directly set in as data: a handler that filters
//! tools per request costs no recompilation, and one that adds tools to a tool-less agent
//! compiles one more variant, once. [`Agent::compiled_variants`] reports how many exist.
//!
//! # Return directly
//!
//! When a turn calls one or more return-directly tools, every call of the turn still
//! runs; the first return-directly call in the model's order wins: its result is the
//! run's final message, and its [`AgentEvent::ToolResult`] is the last tool event of the
//! run, just before [`AgentEvent::Completed`].
//!
//! # Example
//!
//! ```
//! use tower_adk::{Agent, AgentRequest, Message, Tool, ToolCall, ToolInfo, ToolOutput};
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new([
//!     Turn::call("c1", "weather", json!({"city": "Oslo"})),
//!     Turn::text("It is sunny in Oslo."),
//! ]);
//! let weather = Tool::from_fn(ToolInfo::new("weather", "Current weather"), |_| async {
//!     Ok::<_, std::convert::Infallible>(ToolOutput::new("sunny"))
//! });
//! let agent = Agent::builder(model.clone())
//!     .instruction("You report the weather.")
//!     .tool(weather)
//!     .build()?;
//!
//! let result = agent.run(AgentRequest::user("Weather in Oslo?")).await?;
//! assert_eq!(result.final_message.content(), "It is sunny in Oslo.");
//! assert_eq!(result.tool_records[0].content, "sunny");
//! assert_eq!(model.requests()[0].tool_names().collect::<Vec<_>>(), ["weather"]);
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod agent_run;
mod await_run;
mod batch;
mod builder;
mod chain;
mod checkpoint;
mod compile;
mod durable;
mod error;
mod event;
mod executor;
mod interrupts;
mod layer;
mod merge;
#[cfg(all(test, feature = "metrics"))]
mod metrics_tests;
mod request;
mod result;
mod resume;
mod run;
mod runner;
mod shared;
mod thread;

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tower::Service;

pub use self::agent_run::{AgentRun, RunResult};
pub use self::await_run::{AwaitRun, AwaitRunFuture, AwaitRunLayer};
use self::batch::BatchOptions;
pub use self::builder::{AgentBuilder, ToolFailurePolicy};
pub use self::checkpoint::{Checkpoint, CheckpointStatus};
use self::compile::Variants;
pub use self::error::{AgentError, ResumeError};
pub use self::event::AgentEvent;
pub use self::layer::{HandlerLayer, HandlerService};
pub use self::request::AgentRequest;
pub use self::result::{AgentResult, RunStatus};
pub use self::run::{Run, RunStep};
pub use self::thread::{InvalidThread, MAX_THREAD_LEN, check_thread};
use crate::auth::{Access, Action, Identity, KeptTypes, SharedAuthorize};
use crate::checkpoint::{CheckpointError, CheckpointId, CheckpointStore, ThreadEntry};
pub use crate::config::{AgentConfig, DefaultExecutor, ToolBatch, ToolExecutor};
use crate::handler::{Chain, Hook};
use crate::model::{ModelOptions, Prices, SharedModel};
use crate::tool::ToolInfo;

/// The name of an agent that was not given one.
pub const DEFAULT_NAME: &str = "agent";

/// The default limit on model calls per run.
pub const DEFAULT_MAX_ITERATIONS: usize = 20;

/// How long a run's claim on its thread holds without news of the run unless
/// [`AgentBuilder::claim_lease`] says otherwise: 10 minutes.
pub const DEFAULT_CLAIM_LEASE: Duration = Duration::from_secs(600);

/// An agent: a cheap-to-clone `tower::Service<AgentRequest, Response = AgentRun>`.
///
/// The agent is always ready: each call only sets a run up, and the run does its work
/// when it is polled (see [`AgentRun`]). Clones share everything, including the compiled
/// loop variants; an agent can be shared between tasks without a `Buffer`.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<AgentInner>,
}

struct AgentInner {
    model: SharedModel,
    config: AgentConfig,
    tool_infos: Arc<[Arc<ToolInfo>]>,
    options: ModelOptions,
    max_iterations: usize,
    batch: BatchOptions,
    on_tool_failure: ToolFailurePolicy,
    run_timeout: Option<Duration>,
    filler_messages: bool,
    variants: Variants,
    name: Arc<str>,
    store: Arc<dyn CheckpointStore>,
    durable: bool,
    /// How long a run's claim on its thread holds without news of it.
    claim_lease: Duration,
    authorize: SharedAuthorize,
    /// The identity types a run keeps with it.
    kept: KeptTypes,
    /// The price table runs and threads are costed with.
    prices: Option<Arc<Prices>>,
}

impl Agent {
    /// Starts a run; the same as calling the service, without `poll_ready`.
    pub fn run(&self, request: AgentRequest) -> AgentRun {
        AgentRun::start(Arc::clone(&self.inner), request)
    }

    /// The agent's name: the first part of its interrupts' ids.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The price table the agent costs its runs with, if it has one (see
    /// [`AgentBuilder::prices`]).
    pub fn prices(&self) -> Option<&Prices> {
        self.inner.prices.as_deref()
    }

    /// The store the agent's checkpoints go to.
    pub fn checkpoint_store(&self) -> &Arc<dyn CheckpointStore> {
        &self.inner.store
    }

    /// The newest checkpoint of a thread and its id: where the thread stands (its
    /// [`status`](Checkpoint::status), the interrupts that wait, the
    /// history the next run starts from). `None` for a thread with no record.
    ///
    /// A durable run whose process died is taken over by resuming this checkpoint with
    /// no decisions.
    ///
    /// This is the program's own view of the store, whoever owns the thread; on behalf
    /// of a caller, use [`Agent::thread_for`].
    ///
    /// # Errors
    ///
    /// The store's, or a record that cannot be read.
    pub async fn last_checkpoint(
        &self,
        thread: &str,
    ) -> Result<Option<(CheckpointId, Checkpoint)>, CheckpointError> {
        let Some(head) = self.inner.store.head(thread).await? else {
            return Ok(None);
        };
        let checkpoint = Checkpoint::load(&*self.inner.store, thread, &head).await?;
        let id = CheckpointId {
            thread: thread.to_owned(),
            version: head.version,
            run: checkpoint.run_id.clone(),
        };
        Ok(Some((id, checkpoint)))
    }

    /// The newest checkpoint of a thread, as [`Agent::last_checkpoint`] gives it, if the
    /// agent's [`Authorize`](crate::auth::Authorize) lets `caller` read the thread
    /// ([`Action::Read`]); `None` for a thread with no record and for one the caller
    /// may not read, told apart to no one.
    ///
    /// # Errors
    ///
    /// The store's, or a record that cannot be read.
    pub async fn thread_for(
        &self,
        caller: &Identity,
        thread: &str,
    ) -> Result<Option<(CheckpointId, Checkpoint)>, CheckpointError> {
        let Some((id, checkpoint)) = self.last_checkpoint(thread).await? else {
            return Ok(None);
        };
        let allowed = self.allows(caller, Action::Read, thread, &checkpoint).await;
        Ok(allowed.then_some((id, checkpoint)))
    }

    /// Deletes every checkpoint of a thread; says whether it had any.
    ///
    /// This is the program's own access to the store, whoever owns the thread; on
    /// behalf of a caller, use [`Agent::delete_thread_for`].
    ///
    /// # Errors
    ///
    /// The store's.
    pub async fn delete_thread(&self, thread: &str) -> Result<bool, CheckpointError> {
        Ok(self.inner.store.delete_thread(thread).await?)
    }

    /// Deletes every checkpoint of a thread if the agent's
    /// [`Authorize`](crate::auth::Authorize) lets `caller` delete it
    /// ([`Action::Delete`]); says whether it did: `false` for a thread with no record
    /// and for one the caller may not delete, which stays as it was.
    ///
    /// # Errors
    ///
    /// The store's, or a record that cannot be read.
    pub async fn delete_thread_for(
        &self,
        caller: &Identity,
        thread: &str,
    ) -> Result<bool, CheckpointError> {
        let Some((_, checkpoint)) = self.last_checkpoint(thread).await? else {
            return Ok(false);
        };
        if !self
            .allows(caller, Action::Delete, thread, &checkpoint)
            .await
        {
            return Ok(false);
        }
        self.delete_thread(thread).await
    }

    /// The threads `caller` owns in the agent's store, the most recently written first:
    /// up to `limit`, those after `after` (the last entry of the page before) when it is
    /// given. See [`CheckpointStore::threads`].
    ///
    /// # Errors
    ///
    /// The store's ([`StoreError::Unsupported`](crate::checkpoint::StoreError::Unsupported)
    /// from a store that does not list threads).
    pub async fn threads_for(
        &self,
        caller: &Identity,
        after: Option<&ThreadEntry>,
        limit: usize,
    ) -> Result<Vec<ThreadEntry>, CheckpointError> {
        let owner = caller.principal().subject();
        Ok(self.inner.store.threads(owner, after, limit).await?)
    }

    /// Whether the agent's [`Authorize`](crate::auth::Authorize) lets `caller` do
    /// `action` to the thread whose newest record is `checkpoint`.
    async fn allows(
        &self,
        caller: &Identity,
        action: Action,
        thread: &str,
        checkpoint: &Checkpoint,
    ) -> bool {
        let access = Access {
            caller: caller.principal(),
            identity: caller.extensions(),
            action,
            agent: &self.inner.name,
            thread,
            owner: Some(&checkpoint.owner),
            interrupts: &checkpoint.interrupts,
        };
        self.inner.authorize.allows(&access).await
    }

    /// The configuration every run starts from.
    pub fn config(&self) -> &AgentConfig {
        &self.inner.config
    }

    /// The configuration a run of `request` would start with: the agent's, as the
    /// `before_agent` hooks of the request's handlers (layers' first, as in a run) leave
    /// it for the request's extensions, e.g. the tools a role filter lets this caller's
    /// model see. The model is not called and no checkpoint is read or written: hooks
    /// that read the thread's values see none. Hooks do run, side effects included.
    ///
    /// # Errors
    ///
    /// A hook's, as in a run ([`AgentError::Handler`]; one that would interrupt the run
    /// has an [`interrupt`](crate::HandlerError::interrupt)), or
    /// [`AgentError::Config`] when the hooks left a configuration no agent could have.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::testing::{ScriptedModel, text_tool};
    /// use tower_adk::{Agent, AgentRequest, BoxHandler};
    ///
    /// #[derive(Clone)]
    /// struct Admin;
    ///
    /// fn admins_refund() -> BoxHandler {
    ///     tower_adk::handlers::filter_tools(|ext, tool| {
    ///         tool.name() != "refund" || ext.get::<Admin>().is_some()
    ///     })
    ///     .into()
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let agent = Agent::builder(ScriptedModel::default())
    ///     .tool(text_tool("lookup", "found"))
    ///     .tool(text_tool("refund", "refunded"))
    ///     .build()?;
    /// let names = |config: tower_adk::AgentConfig| -> Vec<String> {
    ///     config.tools().iter().map(|t| t.name().to_owned()).collect()
    /// };
    ///
    /// let guest = AgentRequest::default().with_handler(admins_refund());
    /// let admin = AgentRequest::default().with_handler(admins_refund()).with_extension(Admin);
    /// assert_eq!(names(agent.config_for(guest).await?), ["lookup"]);
    /// assert_eq!(names(agent.config_for(admin).await?), ["lookup", "refund"]);
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn config_for(&self, request: AgentRequest) -> Result<AgentConfig, AgentError> {
        let (input, extensions, handlers, _) = request.into_parts();
        let chain = Chain::new(handlers);
        let mut run = Run::new(input, extensions);
        let agent = &self.inner.config;
        let mut config = agent.clone();
        if chain.calls(Hook::BeforeAgent) {
            config = chain.before_agent(run.context_mut(), config).await?;
        }
        if !config.shares_tools_with(agent) {
            config.check_tools().map_err(AgentError::Config)?;
        }
        Ok(config)
    }

    /// How many loop variants this agent (and its clones) has compiled so far: one per
    /// distinct compatibility key its runs needed (or, with
    /// [`AgentBuilder::recompile_every_run`], one per run).
    pub fn compiled_variants(&self) -> usize {
        self.inner.variants.compiled()
    }
}

impl Service<AgentRequest> for Agent {
    type Response = AgentRun;
    type Error = Infallible;
    type Future = std::future::Ready<Result<AgentRun, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: AgentRequest) -> Self::Future {
        std::future::ready(Ok(self.run(request)))
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("config", &self.inner.config)
            .field("max_iterations", &self.inner.max_iterations)
            .field("parallel_tool_calls", &self.inner.batch.parallel)
            .field("compiled_variants", &self.compiled_variants())
            .finish_non_exhaustive()
    }
}
