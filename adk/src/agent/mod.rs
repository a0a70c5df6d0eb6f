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

mod await_run;
mod batch;
mod compile;
mod config;
mod durable;
mod executor;
mod merge;
mod request;
mod run;
mod runner;
mod state;

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tower::{BoxError, Service};

pub use self::await_run::{AwaitRun, AwaitRunFuture, AwaitRunLayer};
use self::batch::BatchOptions;
use self::compile::Variants;
pub use self::config::AgentConfig;
pub use self::executor::{DefaultExecutor, ToolBatch, ToolExecutor};
pub use self::request::AgentRequest;
pub use self::run::{
    AgentEvent, AgentResult, AgentRun, RunResult, RunStatus, ToolFailurePolicy, ToolRecord,
};
pub use self::state::{Run, RunStep};
use crate::checkpoint::{Checkpoint, CheckpointError, CheckpointId, CheckpointStore};
use crate::handler::{Chain, Hook};
use crate::model::{ModelOptions, SharedModel};
use crate::tool::ToolSet;
use crate::{AgentError, BuildError, ModelRequest, ModelResponse, Tool, ToolInfo};

/// The name of an agent that was not given one.
pub const DEFAULT_NAME: &str = "agent";

/// The default limit on model calls per run.
pub const DEFAULT_MAX_ITERATIONS: usize = 20;

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
}

impl Agent {
    /// Starts building an agent around a model service.
    pub fn builder<M>(model: M) -> AgentBuilder
    where
        M: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        M::Error: Into<BoxError>,
        M::Future: Send + 'static,
    {
        AgentBuilder {
            model: SharedModel::new(model),
            config: AgentConfig::default(),
            options: ModelOptions::default(),
            max_iterations: DEFAULT_MAX_ITERATIONS,
            batch: BatchOptions {
                parallel: None,
                #[cfg(feature = "validation")]
                validate: true,
                events: true,
            },
            on_tool_failure: ToolFailurePolicy::default(),
            run_timeout: None,
            filler_messages: true,
            tool_sets: Vec::new(),
            recompile_every_run: false,
            name: Arc::from(DEFAULT_NAME),
            store: None,
            durable: false,
        }
    }

    /// Starts a run; the same as calling the service, without `poll_ready`.
    pub fn run(&self, request: AgentRequest) -> AgentRun {
        runner::start(Arc::clone(&self.inner), request)
    }

    /// The agent's name: the first part of its interrupts' ids.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The store the agent's checkpoints go to.
    pub fn checkpoint_store(&self) -> &Arc<dyn CheckpointStore> {
        &self.inner.store
    }

    /// The newest checkpoint of a thread and its id: where the thread stands (its
    /// [`status`](crate::checkpoint::Checkpoint::status), the interrupts that wait, the
    /// history the next run starts from). `None` for a thread with no record.
    ///
    /// A durable run whose process died is taken over by resuming this checkpoint with
    /// no decisions.
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
        let checkpoint = Checkpoint::decode(&head.bytes)?;
        let id = CheckpointId {
            thread: thread.to_owned(),
            version: head.version,
            run: checkpoint.run_id.clone(),
        };
        Ok(Some((id, checkpoint)))
    }

    /// Deletes every checkpoint of a thread; says whether it had any.
    ///
    /// # Errors
    ///
    /// The store's.
    pub async fn delete_thread(&self, thread: &str) -> Result<bool, CheckpointError> {
        Ok(self.inner.store.delete_thread(thread).await?)
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

/// Builds an [`Agent`]; see [`Agent::builder`].
pub struct AgentBuilder {
    model: SharedModel,
    config: AgentConfig,
    options: ModelOptions,
    max_iterations: usize,
    batch: BatchOptions,
    on_tool_failure: ToolFailurePolicy,
    run_timeout: Option<Duration>,
    filler_messages: bool,
    tool_sets: Vec<ToolSet>,
    recompile_every_run: bool,
    name: Arc<str>,
    store: Option<Arc<dyn CheckpointStore>>,
    durable: bool,
}

impl AgentBuilder {
    /// The instruction, sent to the model as the first (system) message of each run.
    pub fn instruction(mut self, instruction: impl Into<Arc<str>>) -> Self {
        self.config.set_instruction(instruction);
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.config.tools_mut().push(tool);
        self
    }

    /// Adds tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.config.tools_mut().extend(tools);
        self
    }

    /// Adds the tools of a source that pass its include or exclude list; the lists are
    /// checked when the agent is built.
    pub fn tool_set(mut self, set: ToolSet) -> Self {
        self.tool_sets.push(set);
        self
    }

    /// Makes calls of these tools end the run with their result, once the turn's other
    /// calls are done. A failed call ends it too, with the failure as the final message
    /// (to let the model try again instead, see `tower_adk::handlers::StopAtTool`'s
    /// until-success form).
    pub fn return_directly<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for name in names {
            self.config.set_return_directly(name, true);
        }
        self
    }

    /// Options sent with every model call.
    pub fn model_options(mut self, options: ModelOptions) -> Self {
        self.options = options;
        self
    }

    /// The most model calls a run may make (default [`DEFAULT_MAX_ITERATIONS`]).
    pub fn max_iterations(mut self, max: usize) -> Self {
        self.max_iterations = max;
        self
    }

    /// The most tool calls of one turn that run at the same time (default: all of them).
    pub fn parallel_tool_calls(mut self, cap: usize) -> Self {
        self.batch.parallel = Some(cap);
        self
    }

    /// Whether each call's arguments are checked against the tool's JSON Schema (default:
    /// yes). The check runs before any wrapper or the tool sees the call; arguments that
    /// fail it are answered with a model-visible [`ToolErrorKind::InvalidArguments`](crate::ToolErrorKind::InvalidArguments)
    /// result that gives the path and the reason of each problem, and the tool is not
    /// called. (Needs the `validation` feature, on by default; without it nothing is
    /// checked.)
    #[cfg(feature = "validation")]
    pub fn validate_arguments(mut self, validate: bool) -> Self {
        self.batch.validate = validate;
        self
    }

    /// What a run does when a tool call fails (default: the model reads the failure
    /// and the run goes on). See [`ToolFailurePolicy`].
    pub fn on_tool_failure(mut self, policy: ToolFailurePolicy) -> Self {
        self.on_tool_failure = policy;
        self
    }

    /// A deadline for each whole run, counted from its first poll. When it passes,
    /// every model and tool call in flight is cancelled and the run ends with
    /// [`AgentError::Timeout`].
    pub fn run_timeout(mut self, limit: Duration) -> Self {
        self.run_timeout = Some(limit);
        self
    }

    /// Whether the text of a reply that also calls tools is emitted as an
    /// [`AgentEvent::Filler`] before the tools run (default: yes).
    pub fn filler_messages(mut self, on: bool) -> Self {
        self.filler_messages = on;
        self
    }

    /// Switches the compiled-loop cache off (default: on): every run compiles its loop
    /// afresh, as Eino does, and [`Agent::compiled_variants`] counts each of those
    /// compilations.
    ///
    /// This is a benchmarking aid, to measure what the cache saves; it only makes runs
    /// slower, never different.
    pub fn recompile_every_run(mut self, on: bool) -> Self {
        self.recompile_every_run = on;
        self
    }

    /// The agent's name (default `agent`): the first part of the ids of its interrupts
    /// (`agent:NAME/tool:CALL`), so that the interrupts of nested agents are told apart.
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = name.into();
        self
    }

    /// Where the agent's checkpoints go: those of interrupted runs, of runs on a thread,
    /// and of durable runs (default: a [`MemoryStore`](crate::checkpoint::MemoryStore) of
    /// the agent's own, which lives as long as the agent). Share a store between
    /// processes (SQLite on one host, Postgres or Redis on several) and a run interrupted
    /// in one resumes in another. See [`checkpoint`](crate::checkpoint).
    pub fn checkpoints(mut self, store: impl CheckpointStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// Makes every run durable (default: no): a run writes a checkpoint when it starts
    /// and after every turn that did not end it, so a process that dies mid-run can be
    /// resumed from its last finished turn (by [`AgentRequest::resume`] with the
    /// checkpoint and no decisions) without running the finished turns' tools again.
    /// The calls of the turn in flight run again: tools can make that exactly-once with
    /// [`ToolRequest::idempotency_key`](crate::ToolRequest::idempotency_key).
    pub fn durable(mut self, on: bool) -> Self {
        self.durable = on;
        self
    }

    /// Makes the agent's runs end with a typed answer, a `T`: the schema of `T` reaches
    /// the model (as a final-answer tool, or natively), each answer is checked and, if
    /// invalid, given back to the model with its problems. Finish with
    /// [`OutputBuilder::build`](crate::output::OutputBuilder::build), which gives a
    /// [`TypedAgent<T>`](crate::output::TypedAgent). See [`output`](crate::output).
    pub fn output<T>(self) -> crate::output::OutputBuilder<T>
    where
        T: schemars::JsonSchema + serde::de::DeserializeOwned,
    {
        crate::output::OutputBuilder::new(self)
    }

    /// Builds the agent.
    ///
    /// # Errors
    ///
    /// Two tools with the same name, a tool name outside `^[a-zA-Z0-9_-]{1,64}$`
    /// ([`tool::check_name`](crate::tool::check_name)), a tool whose parameter schema is
    /// not a valid JSON Schema, a tool source with both lists or an unknown name in one, a zero iteration
    /// limit or a zero parallelism cap.
    pub fn build(mut self) -> Result<Agent, BuildError> {
        for set in std::mem::take(&mut self.tool_sets) {
            self.config.tools_mut().extend(set.into_tools()?);
        }
        self.config.index_tools()?;
        if self.max_iterations == 0 {
            return Err(BuildError::ZeroIterations);
        }
        if self.batch.parallel == Some(0) {
            return Err(BuildError::ZeroParallelism);
        }
        #[cfg(feature = "validation")]
        for tool in self.config.tools() {
            if let Err(reason) = tool.validator() {
                return Err(BuildError::InvalidSchema {
                    tool: tool.name().to_owned(),
                    reason: reason.to_owned(),
                });
            }
        }
        let tool_infos = self.config.tools().iter().map(Tool::shared_info).collect();
        Ok(Agent {
            inner: Arc::new(AgentInner {
                model: self.model,
                config: self.config,
                tool_infos,
                options: self.options,
                max_iterations: self.max_iterations,
                batch: self.batch,
                on_tool_failure: self.on_tool_failure,
                run_timeout: self.run_timeout,
                filler_messages: self.filler_messages,
                variants: Variants::new(self.recompile_every_run),
                name: self.name,
                store: self
                    .store
                    .unwrap_or_else(|| Arc::new(crate::checkpoint::MemoryStore::new())),
                durable: self.durable,
            }),
        })
    }
}

impl fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}
