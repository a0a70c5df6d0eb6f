//! [`AgentBuilder`]: an agent's model, instruction, tools and limits, checked once when
//! the agent is built; and what a run does when a tool call fails
//! ([`ToolFailurePolicy`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tower::{BoxError, Layer, Service};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::batch::BatchOptions;
use super::compile::Variants;
use super::{Agent, AgentInner, DEFAULT_CLAIM_LEASE, DEFAULT_MAX_ITERATIONS, DEFAULT_NAME};
use crate::auth::{Authorize, KeptTypes, SharedAuthorize};
use crate::checkpoint::{CheckpointStore, MemoryStore};
use crate::config::AgentConfig;
use crate::error::BuildError;
use crate::model::{BoxModel, ModelOptions, ModelRequest, ModelResponse, Prices, SharedModel};
use crate::tool::{Tool, ToolSet};

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
            prices: None,
            tool_sets: Vec::new(),
            recompile_every_run: false,
            name: Arc::from(DEFAULT_NAME),
            store: None,
            durable: false,
            claim_lease: DEFAULT_CLAIM_LEASE,
            authorize: SharedAuthorize::default(),
            kept: KeptTypes::default(),
        }
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
    prices: Option<Arc<Prices>>,
    tool_sets: Vec<ToolSet>,
    recompile_every_run: bool,
    name: Arc<str>,
    store: Option<Arc<dyn CheckpointStore>>,
    durable: bool,
    claim_lease: Duration,
    authorize: SharedAuthorize,
    kept: KeptTypes,
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

    /// Puts a tower layer around the model given to [`Agent::builder`], for code that
    /// gets a builder it did not start, such as an agent file's
    /// (`tower_adk::file::LoadedAgent::model_layer`): a timeout, a retry, or recorded traffic. The layer sees the model as a
    /// [`BoxModel`](crate::BoxModel); layers added later wrap earlier ones.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tower::timeout::TimeoutLayer;
    /// use tower_adk::testing::{ScriptedModel, Turn};
    /// use tower_adk::{Agent, AgentRequest};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let agent = Agent::builder(ScriptedModel::new([Turn::text("hello")]))
    ///     .model_layer(TimeoutLayer::new(Duration::from_secs(30)))
    ///     .build()?;
    /// let result = agent.run(AgentRequest::user("hi")).await?;
    /// assert_eq!(result.final_message.content(), "hello");
    /// # Ok::<_, tower_adk::BoxError>(())
    /// # }).unwrap();
    /// ```
    pub fn model_layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<BoxModel>,
        L::Service: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        <L::Service as Service<ModelRequest>>::Error: Into<BoxError>,
        <L::Service as Service<ModelRequest>>::Future: Send + 'static,
    {
        let model = BoxModel::new(self.model);
        self.model = SharedModel::new(layer.layer(model));
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
    /// [`AgentError::Timeout`](super::AgentError::Timeout).
    pub fn run_timeout(mut self, limit: Duration) -> Self {
        self.run_timeout = Some(limit);
        self
    }

    /// Whether the text of a reply that also calls tools is emitted as an
    /// [`AgentEvent::Filler`](super::AgentEvent::Filler) before the tools run (default: yes).
    pub fn filler_messages(mut self, on: bool) -> Self {
        self.filler_messages = on;
        self
    }

    /// Costs every run with this price table: [`AgentResult::cost`](super::AgentResult::cost)
    /// is what the run's [`usage`](super::AgentResult::usage) cost, model by model.
    ///
    /// ```
    /// use tower_adk::model::{Price, Prices, Usage, ModelResponse};
    /// use tower_adk::{Agent, AgentRequest, BoxError, Message, ModelRequest};
    /// use tower::service_fn;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let model = service_fn(|_: ModelRequest| async {
    ///     let reply = ModelResponse::message(Message::assistant("Hi!"));
    ///     Ok::<_, BoxError>(reply.with_usage(Some("small".into()), Usage::new(2_000, 500, 2_500)))
    /// });
    /// let agent = Agent::builder(model)
    ///     .prices(Prices::new().with("small", Price::per_million(1.0, 4.0)))
    ///     .build()?;
    ///
    /// let result = agent.run(AgentRequest::user("hello")).await?;
    /// assert_eq!(result.usage.total.prompt_tokens, 2_000);
    /// assert!((result.cost.unwrap().usd - 0.004).abs() < 1e-12);
    /// # Ok::<_, BoxError>(())
    /// # }).unwrap();
    /// ```
    pub fn prices(mut self, prices: Prices) -> Self {
        self.prices = Some(Arc::new(prices));
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
    /// resumed from its last finished turn (by [`AgentRequest::resume`](super::AgentRequest::resume) with the
    /// checkpoint and no decisions) without running the finished turns' tools again.
    /// The calls of the turn in flight run again: tools can make that exactly-once with
    /// [`ToolRequest::idempotency_key`](crate::ToolRequest::idempotency_key).
    pub fn durable(mut self, on: bool) -> Self {
        self.durable = on;
        self
    }

    /// How long a run's claim on its thread holds without news of the run (default
    /// [`DEFAULT_CLAIM_LEASE`](super::DEFAULT_CLAIM_LEASE), 10 minutes). A run on a thread claims it when it starts (its record says it is
    /// running, until now + the lease) and renews the claim at the end of each turn once
    /// half the lease has passed (a durable run, at the end of every turn). A run whose
    /// process died leaves its claim behind: until it runs out, a new run on the thread
    /// is refused with [`CheckpointError::ThreadBusy`]; after, the new run goes on from
    /// the history before the dead run, as after a failed one. Resuming the dead run's
    /// checkpoint with no decisions takes it over at any time, lease or not.
    ///
    /// Make it longer than the longest turn (a model call and its tools): a run whose
    /// claim ran out mid-turn may find the thread taken by a new run when it writes
    /// next, and then ends with a conflict, having written nothing over it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tower_adk::Agent;
    /// use tower_adk::testing::{ScriptedModel, Turn};
    ///
    /// // A thread whose run died is free again within 2 minutes.
    /// let agent = Agent::builder(ScriptedModel::new([Turn::text("hi")]))
    ///     .claim_lease(Duration::from_secs(120))
    ///     .build()?;
    /// # Ok::<_, tower_adk::BuildError>(())
    /// ```
    ///
    /// [`CheckpointError::ThreadBusy`]: crate::checkpoint::CheckpointError::ThreadBusy
    pub fn claim_lease(mut self, lease: Duration) -> Self {
        self.claim_lease = lease;
        self
    }

    /// Who may do what with the threads of the agent's runs (default [`OwnerOnly`]): asked
    /// before a run on a thread, a resume, and [`Agent::thread_for`] and
    /// [`Agent::delete_thread_for`]. See [`auth`](crate::auth).
    ///
    /// [`OwnerOnly`]: crate::auth::OwnerOnly
    pub fn authorize(mut self, authorize: impl Authorize) -> Self {
        self.authorize = SharedAuthorize::new(authorize);
        self
    }

    /// Keeps the value of type `T` in a run's extensions (a role, a tenant) with the
    /// run, under `key`: its checkpoints write it, and when someone else resumes the run
    /// (a manager deciding on a clerk's call), the run's extensions have the requester's
    /// value again, not the resumer's (whose identity the run's hooks read as its
    /// [`decider`](crate::context::RunContext::decider)). A kept type the requester had
    /// no value of is removed from a resumed run's extensions.
    ///
    /// Keep the values that decide what a run may do: those a role filter or a policy
    /// reads. (The run's [principal](crate::auth::Principal) is always kept.)
    pub fn keep_identity<T>(mut self, key: impl Into<Arc<str>>) -> Self
    where
        T: Serialize + DeserializeOwned + Clone + Send + Sync + 'static,
    {
        self.kept = self.kept.with::<T>(key);
        self
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
                prices: self.prices,
                variants: Variants::new(self.recompile_every_run),
                name: self.name,
                store: self.store.unwrap_or_else(|| Arc::new(MemoryStore::new())),
                durable: self.durable,
                claim_lease: self.claim_lease,
                authorize: self.authorize,
                kept: self.kept,
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

/// What the agent does when a tool call fails (set with
/// [`AgentBuilder::on_tool_failure`]).
///
/// Every failure counts: unknown tool, invalid arguments, timeout, tool error, panic and
/// denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolFailurePolicy {
    /// The failure becomes a tool result the model reads, and the run goes on.
    #[default]
    Continue,
    /// The turn's other calls finish, then the run ends with [`RunStatus::Degraded`](super::RunStatus::Degraded).
    EndDegraded,
    /// The run fails at once with [`AgentError::ToolFailed`](super::AgentError::ToolFailed); calls still in flight are
    /// cancelled.
    FailRun,
}
