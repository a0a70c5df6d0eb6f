//! [`WireError`]: a failure as a stable code and a message.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::agent::{AgentError, ResumeError};
use crate::checkpoint::CheckpointError;

/// A failure in the wire form: `{"code": "thread_busy", "message": "..."}`, and the
/// `checkpoint` of a cancelled run that left one.
///
/// The code is stable (see [`AgentError::code`], [`CheckpointError::code`] and
/// [`ResumeError::code`]) and is what a program matches on; the message is for people
/// and may change.
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
    /// For a run cancelled while it held a thread (code `cancelled`), the checkpoint
    /// that a resume takes it over from, in its text form; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
}

impl WireError {
    /// An error with this code and message (e.g. a server's own, such as
    /// `unknown_agent`).
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        WireError {
            code: code.into(),
            message: message.into(),
            checkpoint: None,
        }
    }
}

impl From<&AgentError> for WireError {
    fn from(error: &AgentError) -> Self {
        let mut wire = WireError::new(error.code(), error.to_string());
        wire.checkpoint = error.cancelled_checkpoint().map(ToString::to_string);
        wire
    }
}

impl From<&CheckpointError> for WireError {
    fn from(error: &CheckpointError) -> Self {
        WireError::new(error.code(), error.to_string())
    }
}

impl From<&ResumeError> for WireError {
    fn from(error: &ResumeError) -> Self {
        WireError::new(error.code(), error.to_string())
    }
}
