//! [`History`]: the message history the loop keeps for a run, which `before_model` and
//! `after_model` hooks rewrite.

use serde::{Deserialize, Serialize};

use crate::message::Messages;

/// The message history the loop keeps for a run: the instruction (as a system message,
/// if any), the input and every turn since. `before_model` and `after_model` hooks
/// rewrite it, and later iterations see the rewrite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct History {
    /// The messages, oldest first.
    pub messages: Messages,
}

impl History {
    /// A history of these messages.
    pub fn new(messages: Messages) -> Self {
        History { messages }
    }
}

/// The old name of [`History`].
#[deprecated(note = "renamed `History`: what the loop keeps is the run's history")]
pub type RunState = History;
