//! [`WireError`]: a failure as a stable code and a message.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::AgentError;
use crate::checkpoint::CheckpointError;

/// A failure in the wire form: `{"code": "thread_busy", "message": "..."}`.
///
/// The code is stable (see [`AgentError::code`] and [`CheckpointError::code`]) and is
/// what a program matches on; the message is for people and may change.
///
/// # Example
///
/// ```
/// use tower_adk::AgentError;
/// use tower_adk::wire::WireError;
///
/// let error = WireError::from(&AgentError::MaxIterations { limit: 3 });
/// assert_eq!(error.code, "max_iterations");
/// assert_eq!(error.message, "the run reached its limit of 3 model calls");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WireError {
    /// The stable code.
    pub code: Cow<'static, str>,
    /// What happened, for people.
    pub message: String,
}

impl WireError {
    /// An error with this code and message (e.g. a server's own, such as
    /// `unknown_agent`).
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        WireError {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl From<&AgentError> for WireError {
    fn from(error: &AgentError) -> Self {
        WireError::new(error.code(), error.to_string())
    }
}

impl From<&CheckpointError> for WireError {
    fn from(error: &CheckpointError) -> Self {
        WireError::new(error.code(), error.to_string())
    }
}
