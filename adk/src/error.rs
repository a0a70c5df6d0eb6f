//! The errors that every layer of the core may meet: a caught panic ([`Panicked`]) and
//! why an agent, or the configuration of a run, could not be built ([`BuildError`]).
//!
//! The errors of a module that fails live with it: a run's is
//! [`AgentError`](crate::agent::AgentError), a model's
//! [`ModelError`](crate::model::ModelError), a tool's [`ToolError`](crate::tool::ToolError),
//! a hook's [`HandlerError`](crate::handler::HandlerError).

/// Code of a run panicked; the panic was caught and ends only that run.
///
/// It is the source of an [`AgentError::Handler`](crate::agent::AgentError::Handler) when a handler's hook panicked (see
/// [`HandlerError::is_panic`](crate::handler::HandlerError::is_panic)), [`AgentError::Panicked`](crate::agent::AgentError::Panicked) for other code a run polls, and
/// the source of a [`ModelError`](crate::model::ModelError) when the model service panicked.
#[derive(Debug, Clone, thiserror::Error)]
#[error("panicked: {message}")]
pub struct Panicked {
    message: String,
}

impl Panicked {
    /// The panic's payload, as a message (a `&str` or `String` payload; otherwise a
    /// placeholder).
    pub(crate) fn from_payload(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("no message");
        Panicked {
            message: message.to_owned(),
        }
    }

    /// The panic's message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Why an agent could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools have the same name.
    #[error("two tools are named `{0}`")]
    DuplicateTool(String),
    /// A tool's name is not one that chat-completion providers accept: 1 to 64 ASCII
    /// letters, digits, `_` or `-` (`^[a-zA-Z0-9_-]{1,64}$`).
    #[error("tool name {name:?} is invalid: {reason}")]
    InvalidToolName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A tool's parameter schema is not a valid JSON Schema.
    #[error("the parameter schema of tool `{tool}` is invalid: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What is wrong with the schema.
        reason: String,
    },
    /// A tool source was given both an include list and an exclude list.
    #[error("tool source `{0}` has both an include list and an exclude list")]
    IncludeAndExclude(String),
    /// A tool source's include or exclude list names a tool the source does not have.
    #[error("tool source `{set}` has no tool named `{tool}`")]
    UnknownToolInSet {
        /// The source.
        set: String,
        /// The unknown name.
        tool: String,
    },
    /// The cap on parallel tool calls is zero.
    #[error("the cap on parallel tool calls must be at least 1")]
    ZeroParallelism,
    /// The iteration limit is zero.
    #[error("max iterations must be at least 1")]
    ZeroIterations,
    /// A [workflow](crate::compose) has no agents.
    #[error("the workflow has no agents")]
    EmptyWorkflow,
    /// Two agents of a [workflow](crate::compose) have the same name, so a resume could
    /// not tell which one its interrupt ids address.
    #[error("two agents of the workflow are named `{0}`")]
    DuplicateAgent(String),
    /// A [composition](crate::compose) was given a request on a thread: its agents run
    /// one request each, and none of them holds the thread, so it is refused rather than
    /// dropped. Give the thread to the agents themselves.
    #[error("a composition does not run on a thread (`{0}`)")]
    CompositionOnThread(String),
}
