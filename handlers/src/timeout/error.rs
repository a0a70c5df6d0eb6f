//! The model-visible error of a timed-out call.

use std::time::Duration;

use adk::{BoxError, ToolError, ToolErrorKind};

/// The limit that cut a call short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// The whole call took longer than this.
    Total(Duration),
    /// The tool produced nothing for this long.
    Idle(Duration),
}

impl From<Limit> for ToolError {
    fn from(limit: Limit) -> Self {
        let message = match limit {
            Limit::Total(total) => {
                format!("total deadline of {total:?} exceeded; the call was cancelled")
            }
            Limit::Idle(idle) => {
                format!("idle timeout: no output for {idle:?}; the call was cancelled")
            }
        };
        ToolError::new(ToolErrorKind::Timeout, message)
    }
}

impl From<Limit> for BoxError {
    fn from(limit: Limit) -> Self {
        Box::new(ToolError::from(limit))
    }
}
