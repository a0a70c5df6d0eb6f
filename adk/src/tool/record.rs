//! [`ToolRecord`]: the record of one tool execution, as a run keeps it and its result
//! gives it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Finish, ToolError};
use crate::content::{Content, Part};
use crate::message::{Message, SmolStr, ToolCall};

/// The record of one tool execution.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolRecord {
    /// The call id.
    pub call_id: SmolStr,
    /// The tool name.
    pub name: SmolStr,
    /// The arguments, as the model sent them.
    pub arguments: SmolStr,
    /// What the model saw: the output, or the description of the failure.
    pub content: String,
    /// What else the model saw after the text: an image or a file the tool returned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// The failure, if the call failed.
    pub error: Option<ToolError>,
    /// How long the call took, from its start to its last chunk.
    pub latency: Duration,
    /// Whether (and how) this call ends the run; see [`Finish`].
    pub finish: Option<Finish>,
    /// Why the call was made, when a planner or an executor says so.
    pub purpose: Option<String>,
}

impl ToolRecord {
    /// A successful call with this output, e.g. answered by a custom
    /// [`ToolExecutor`](crate::agent::ToolExecutor) without running the tool.
    pub fn success(call: &ToolCall, content: impl Into<String>) -> Self {
        ToolRecord {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            content: content.into(),
            parts: Vec::new(),
            error: None,
            latency: Duration::ZERO,
            finish: None,
            purpose: None,
        }
    }

    /// A failed call; the model sees the error's text.
    pub fn failure(call: &ToolCall, error: ToolError) -> Self {
        ToolRecord {
            content: error.to_model_text(),
            error: Some(error),
            ..ToolRecord::success(call, "")
        }
    }

    /// Says why the call was made.
    pub fn with_purpose(mut self, purpose: impl Into<String>) -> Self {
        self.purpose = Some(purpose.into());
        self
    }

    /// Whether the call succeeded.
    pub fn is_success(&self) -> bool {
        self.error.is_none()
    }

    /// The tool result message for the history: the text, then the parts.
    pub(crate) fn to_message(&self) -> Message {
        let mut content = Content::from(&self.content);
        for part in &self.parts {
            content.push(part.clone());
        }
        if self.error.is_some() {
            Message::tool_error(self.call_id.clone(), self.name.clone(), content)
        } else {
            Message::tool(self.call_id.clone(), self.name.clone(), content)
        }
    }
}
