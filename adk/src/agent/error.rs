//! [`AgentError`]: why a run failed; and [`ResumeError`], why a resume was refused.
//!
//! A run fails with one [`AgentError`]; tool failures are not run failures, they become
//! tool results the model reads (see [`ToolError`](crate::ToolError)).
//!
//! # Example
//!
//! ```
//! use tower_adk::{Agent, AgentConfig, AgentError, AgentRequest, Handler, Hook, RunContext};
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use tower::BoxError;
//!
//! struct RequireTenant;
//!
//! impl Handler for RequireTenant {
//!     async fn before_agent(&self, cx: &mut RunContext, config: AgentConfig) -> Result<AgentConfig, BoxError> {
//!         cx.extensions().get::<String>().ok_or("no tenant in the request")?;
//!         Ok(config)
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new([Turn::text("hi")]);
//! let agent = Agent::builder(model.clone()).build().unwrap();
//! let error = agent.run(AgentRequest::user("hi").with_handler(RequireTenant)).await.unwrap_err();
//!
//! let AgentError::Handler(failed) = &error else { panic!("{error}") };
//! assert_eq!(failed.hook(), Hook::BeforeAgent);
//! assert!(failed.handler().ends_with("RequireTenant"));
//! assert_eq!(model.calls(), 0); // the model was never called
//! # });
//! ```

use tower::BoxError;

use super::thread::InvalidThread;
use crate::checkpoint::{CheckpointError, CheckpointId};
use crate::error::{BuildError, Panicked};
use crate::handler::HandlerError;
use crate::model::ModelError;
use crate::tool::ToolRecord;

/// Why a run failed.
///
/// Tool failures are not run failures: they become tool results the model sees (see
/// [`ToolError`](crate::ToolError)). A run fails when a handler fails, the model fails,
/// or the loop reaches its limit.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// A handler's hook returned an error; the run stopped there.
    #[error(transparent)]
    Handler(#[from] HandlerError),
    /// The model service failed, before or while streaming its reply.
    #[error("the model failed: {0}")]
    Model(#[source] BoxError),
    /// The loop made its maximum number of model calls and the model still asked for
    /// tools.
    #[error("the run reached its limit of {limit} model calls")]
    MaxIterations {
        /// The limit that was reached.
        limit: usize,
    },
    /// A custom tool executor (see [`ToolExecutor`](crate::agent::ToolExecutor)) failed.
    #[error("the tool executor failed: {0}")]
    Executor(#[source] BoxError),
    /// A tool call failed and the agent's failure policy is
    /// [`ToolFailurePolicy::FailRun`](crate::ToolFailurePolicy::FailRun).
    #[error("tool `{}` failed: {}", .0.name, .0.content)]
    ToolFailed(Box<ToolRecord>),
    /// The run's configuration, as the `before_agent` hooks left it, is one the agent
    /// could not have been built with: two tools with the same name, or a tool name
    /// outside `^[a-zA-Z0-9_-]{1,64}$`. Or a [composition](crate::compose) refused its
    /// request before running anything: it has no agents, two of its agents have the same
    /// name, or the request is on a thread.
    #[error("the run's configuration is invalid: {0}")]
    Config(#[source] BuildError),
    /// The run took longer than the agent's run timeout; everything in flight was
    /// cancelled.
    #[error("the run did not finish within {limit:?}")]
    Timeout {
        /// The run timeout.
        limit: std::time::Duration,
    },
    /// The run's event stream ended without a result (it was polled after it ended).
    #[error("the run ended without a result")]
    Incomplete,
    /// Code polled by the run panicked outside any hook of a handler, e.g. a closure that
    /// a stream wrapper maps chunks with, or the model's stream. (A panicking hook is an
    /// [`AgentError::Handler`] whose [`is_panic`](HandlerError::is_panic) is true; a
    /// panicking tool is a tool failure the model reads.) Only this run ends.
    #[error(transparent)]
    Panicked(Panicked),
    /// The run could not start on its thread, or a checkpoint could not be read or
    /// written (see [`CheckpointError`]). When the run was refused before it started,
    /// nothing ran and nothing was written.
    /// (Boxed, as `ToolFailed`'s record is: it keeps every run's state small.)
    #[error(transparent)]
    Checkpoint(Box<CheckpointError>),
    /// The resume was refused (see [`ResumeError`]): its checkpoint is unknown, used or
    /// ended, or its decisions do not answer the checkpoint's interrupts exactly. Nothing
    /// ran and nothing was written: the checkpoint is as it was.
    #[error(transparent)]
    Resume(Box<ResumeError>),
    /// Whoever drove the run cancelled it before it ended (see
    /// [`AgentRun::cancel`](crate::AgentRun::cancel)); a server does at the deadline of
    /// its graceful shutdown. Everything in flight was dropped.
    #[error("{}", cancelled(.checkpoint.as_deref()))]
    Cancelled {
        /// The checkpoint a run that held a thread (a durable run, or one on a thread)
        /// left: resuming it takes the run over. (Boxed: it keeps every run's state
        /// small.)
        checkpoint: Option<Box<CheckpointId>>,
    },
    /// The request's thread has a name no thread may have (see
    /// [`check_thread`](crate::agent::check_thread)): nothing ran and nothing was
    /// written.
    #[error("invalid thread: {0}")]
    InvalidThread(#[from] InvalidThread),
    /// An agent service that this run called did not answer with a run: a step of a
    /// [workflow](crate::compose) or an agent it handed off to, behind a layer that can
    /// fail (a load shed, say). (An [`Agent`](crate::Agent) itself never fails to.)
    #[error("an agent service failed: {0}")]
    Agent(#[source] BoxError),
}

fn cancelled(checkpoint: Option<&CheckpointId>) -> String {
    match checkpoint {
        Some(id) => format!("the run was cancelled; resume checkpoint `{id}` to take it over"),
        None => "the run was cancelled".to_owned(),
    }
}

impl From<CheckpointError> for AgentError {
    fn from(error: CheckpointError) -> Self {
        AgentError::Checkpoint(Box::new(error))
    }
}

impl From<ResumeError> for AgentError {
    fn from(error: ResumeError) -> Self {
        AgentError::Resume(Box::new(error))
    }
}

/// The error of a service that cannot fail, such as [`Agent`](crate::Agent), so that
/// [`AwaitRun`](crate::AwaitRun) wraps it.
impl From<std::convert::Infallible> for AgentError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

impl AgentError {
    /// Whether the run was stopped by its run timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, AgentError::Timeout { .. })
    }

    /// Whether the run stopped at the iteration limit.
    pub fn is_max_iterations(&self) -> bool {
        matches!(self, AgentError::MaxIterations { .. })
    }

    /// A stable snake_case name for the kind of failure, for logs and wire formats
    /// (see [`wire`](crate::wire)): `handler_failed`, `model_failed`, `max_iterations`,
    /// `executor_failed`, `tool_failed`, `invalid_config`, `run_timeout`, `incomplete`,
    /// `panicked`, `cancelled`, `agent_failed`, `invalid_thread`, the [`CheckpointError::code`] of a
    /// checkpoint failure, or the [`ResumeError::code`] of a refused resume. A code never
    /// changes meaning; new variants bring new codes.
    ///
    /// ```
    /// use tower_adk::AgentError;
    ///
    /// assert_eq!(AgentError::MaxIterations { limit: 3 }.code(), "max_iterations");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            AgentError::Handler(_) => "handler_failed",
            AgentError::Model(_) => "model_failed",
            AgentError::MaxIterations { .. } => "max_iterations",
            AgentError::Executor(_) => "executor_failed",
            AgentError::ToolFailed(_) => "tool_failed",
            AgentError::Config(_) => "invalid_config",
            AgentError::Timeout { .. } => "run_timeout",
            AgentError::Incomplete => "incomplete",
            AgentError::Panicked(_) => "panicked",
            AgentError::Checkpoint(error) => error.code(),
            AgentError::Resume(error) => error.code(),
            AgentError::Cancelled { .. } => "cancelled",
            AgentError::Agent(_) => "agent_failed",
            AgentError::InvalidThread(_) => "invalid_thread",
        }
    }

    /// The checkpoint a cancelled run left, which a resume takes it over from (see
    /// [`AgentError::Cancelled`]); `None` for other errors.
    pub fn cancelled_checkpoint(&self) -> Option<&CheckpointId> {
        match self {
            AgentError::Cancelled { checkpoint } => checkpoint.as_deref(),
            _ => None,
        }
    }

    /// The handler error, if a handler stopped the run.
    pub fn as_handler(&self) -> Option<&HandlerError> {
        match self {
            AgentError::Handler(e) => Some(e),
            _ => None,
        }
    }

    /// Boxes the error so that [`AgentError::from_chain`] gives it back.
    pub(crate) fn into_chain(self) -> BoxError {
        match self {
            AgentError::Handler(error) => Box::new(error),
            other => Box::new(other),
        }
    }

    /// The error of a custom tool executor.
    pub(crate) fn from_executor(error: BoxError) -> Self {
        match error.downcast::<HandlerError>() {
            Ok(e) => AgentError::Handler(*e),
            Err(e) => match e.downcast::<AgentError>() {
                Ok(e) => *e,
                Err(e) => AgentError::Executor(e),
            },
        }
    }

    pub(crate) fn from_chain(error: BoxError) -> Self {
        match error.downcast::<HandlerError>() {
            Ok(e) => AgentError::Handler(*e),
            Err(e) => match e.downcast::<ModelError>() {
                Ok(e) => AgentError::Model(e.into_inner()),
                Err(e) => AgentError::Model(e),
            },
        }
    }
}

/// Why a resume was refused. Nothing ran and nothing was written: the checkpoint is as
/// it was, and a corrected resume can use it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// No checkpoint has this id (it never existed, expired, or its thread was deleted).
    #[error("no checkpoint `{0}`")]
    Unknown(CheckpointId),
    /// The checkpoint was resumed already: its thread has gone on from it.
    #[error("the checkpoint `{0}` was used already; the thread is at version {1}")]
    Used(CheckpointId, u64),
    /// The checkpoint's run has ended; there is nothing to resume.
    #[error("the run of checkpoint `{0}` has ended")]
    Ended(CheckpointId),
    /// An interrupt of the checkpoint has no decision.
    #[error("no decision for the interrupt `{0}`")]
    MissingDecision(String),
    /// A decision names no interrupt of the checkpoint.
    #[error("the decision for `{0}` names no pending interrupt")]
    UnknownInterrupt(String),
    /// A decision that this interrupt does not take (an edit of a hook's interrupt).
    #[error("the interrupt `{id}` cannot be answered with `{decision}`")]
    WrongDecision {
        /// The interrupt.
        id: String,
        /// The decision's kind.
        decision: &'static str,
    },
    /// Edited arguments that the tool does not accept.
    #[error("the edited arguments of `{id}` are invalid: {reason}")]
    InvalidEdit {
        /// The interrupt.
        id: String,
        /// Why the tool's schema refuses them.
        reason: String,
    },
}

impl ResumeError {
    /// A stable snake_case name for the kind of refusal, for logs and wire formats (see
    /// [`wire`](crate::wire)): `checkpoint_unknown`, `checkpoint_used`,
    /// `checkpoint_ended`, `missing_decision`, `unknown_interrupt`, `wrong_decision`,
    /// `invalid_edit`. A code never changes meaning; new variants bring new codes.
    ///
    /// ```
    /// use tower_adk::agent::ResumeError;
    ///
    /// assert_eq!(ResumeError::MissingDecision("agent:a/tool:c1".into()).code(), "missing_decision");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            ResumeError::Unknown(_) => "checkpoint_unknown",
            ResumeError::Used(..) => "checkpoint_used",
            ResumeError::Ended(_) => "checkpoint_ended",
            ResumeError::MissingDecision(_) => "missing_decision",
            ResumeError::UnknownInterrupt(_) => "unknown_interrupt",
            ResumeError::WrongDecision { .. } => "wrong_decision",
            ResumeError::InvalidEdit { .. } => "invalid_edit",
        }
    }
}
