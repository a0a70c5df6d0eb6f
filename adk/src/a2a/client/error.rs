//! [`A2aError`]: what went wrong with a remote A2A agent, in connecting to it or in a
//! call; during a run it reaches the model as the source of a tool error.

use std::time::Duration;

use tower::BoxError;

/// What went wrong with a remote A2A agent: reading its card, or a call.
///
/// [`RemoteAgentBuilder::connect`](super::RemoteAgentBuilder::connect) returns it when
/// the agent cannot be used. During a run, a call that fails for one of these reasons
/// becomes a model-visible tool error of kind [`Failed`](crate::ToolErrorKind::Failed)
/// (of kind [`Timeout`](crate::ToolErrorKind::Timeout) for [`A2aError::Timeout`]) whose
/// [`source`](std::error::Error::source) is this error, so a tool wrapper can
/// `downcast_ref::<A2aError>()` it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// The URL given is not an `http` or `https` URL, or a header is not valid in HTTP.
    #[error("invalid A2A agent setting: {reason}")]
    Config {
        /// What is wrong.
        reason: String,
    },
    /// The agent could not be reached: no server at its address, DNS, TLS.
    #[error("could not reach the A2A agent at {url}: {source}")]
    Connect {
        /// The URL asked.
        url: String,
        /// What the HTTP client reported.
        #[source]
        source: BoxError,
    },
    /// The agent card could not be had or read: not found (the URL is no A2A agent), not
    /// JSON, not a card, or with no JSON-RPC interface of A2A 1.0.
    #[error("the agent card at {url} cannot be used: {reason}")]
    Card {
        /// The card's URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// The agent answered with an HTTP error status (401 or 403 for a missing or wrong
    /// token).
    #[error("the A2A agent `{agent}` answered {method} with HTTP {status}: {body}")]
    Http {
        /// The agent's name.
        agent: String,
        /// The JSON-RPC method called.
        method: &'static str,
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The agent answered with a JSON-RPC error (its code and message kept).
    #[error("the A2A agent `{agent}` answered {method} with error {code}: {message}")]
    Remote {
        /// The agent's name.
        agent: String,
        /// The JSON-RPC method called.
        method: &'static str,
        /// The JSON-RPC error code (A2A's own from -32001 down, JSON-RPC's from -32700).
        code: i64,
        /// The agent's message.
        message: String,
        /// The error's data, if any.
        data: Option<serde_json::Value>,
    },
    /// The agent's answer is not what A2A 1.0 sends: not JSON-RPC, not the method's
    /// result, a stream cut short, a body too large.
    #[error("the A2A agent `{agent}` answered {method} with something else than A2A: {reason}")]
    Protocol {
        /// The agent's name.
        agent: String,
        /// The JSON-RPC method called.
        method: &'static str,
        /// What is wrong, with an excerpt of what came.
        reason: String,
    },
    /// No answer (or, for a stream, no next event) within the time allowed.
    #[error("the A2A agent `{agent}` did not answer {what} within {after:?}")]
    Timeout {
        /// The agent's name (or its URL while connecting).
        agent: String,
        /// What was waited for.
        what: &'static str,
        /// How long.
        after: Duration,
    },
    /// The connection dropped while the answer came in.
    #[error("the connection to the A2A agent `{agent}` dropped during {method}: {source}")]
    Disconnected {
        /// The agent's name.
        agent: String,
        /// The JSON-RPC method called.
        method: &'static str,
        /// What the HTTP client reported.
        #[source]
        source: BoxError,
    },
}

impl A2aError {
    /// Whether a time limit passed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, A2aError::Timeout { .. })
    }

    /// Whether the agent could not be reached or was lost: a later call may succeed.
    pub fn is_connection(&self) -> bool {
        matches!(
            self,
            A2aError::Connect { .. } | A2aError::Disconnected { .. } | A2aError::Timeout { .. }
        )
    }

    /// The JSON-RPC error code, for [`A2aError::Remote`].
    pub fn code(&self) -> Option<i64> {
        match self {
            A2aError::Remote { code, .. } => Some(*code),
            _ => None,
        }
    }
}
