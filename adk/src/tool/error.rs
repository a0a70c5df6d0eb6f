//! Tool failures as the model and the run's records see them: [`ToolError`] and its
//! [`ToolErrorKind`], which travels with the result so that handlers tell failures apart
//! without parsing text.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tower::BoxError;

/// What kind of failure a tool call ended with.
///
/// The kind travels with the model-visible tool result, so handlers, records and
/// providers can tell failures apart without parsing text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The model named a tool that this run does not offer.
    #[serde(rename = "unknown_tool")]
    UnknownTool,
    /// The arguments were not valid JSON, or not what the tool accepts.
    #[serde(rename = "invalid_arguments")]
    InvalidArguments,
    /// The call took longer than it was allowed.
    #[serde(rename = "timeout")]
    Timeout,
    /// The tool returned an error.
    #[serde(rename = "tool_error")]
    Failed,
    /// The tool panicked.
    #[serde(rename = "tool_panicked")]
    Panicked,
    /// A handler refused the call.
    #[serde(rename = "denied")]
    Denied,
    /// A call limit of the run was reached, so the call was not made.
    #[serde(rename = "limit_reached")]
    LimitReached,
    /// The call interrupted the run (see [`Interrupt`](crate::interrupt::Interrupt)): it
    /// waits for a person's decision. The message is the interrupt's payload, as JSON.
    /// (A custom [`ToolExecutor`](crate::agent::ToolExecutor) sees such records; the
    /// run turns them into interrupts, and the model never reads them.)
    #[serde(rename = "interrupted")]
    Interrupted,
}

impl ToolErrorKind {
    /// A stable snake_case name, as shown to the model.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::UnknownTool => "unknown_tool",
            ToolErrorKind::InvalidArguments => "invalid_arguments",
            ToolErrorKind::Timeout => "timeout",
            ToolErrorKind::Failed => "tool_error",
            ToolErrorKind::Panicked => "tool_panicked",
            ToolErrorKind::Denied => "denied",
            ToolErrorKind::LimitReached => "limit_reached",
            ToolErrorKind::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed tool call, as the model and the run's records see it.
///
/// Errors that a tool returns reach the tool wrappers wrapped in a `ToolError` of kind
/// [`ToolErrorKind::Failed`], with the tool's own error as [`source`](Error::source), so a
/// wrapper (or a tower retry policy) can inspect it with `downcast_ref`. A wrapper may
/// return its own `ToolError` (for example [`ToolError::denied`]) to answer the model.
///
/// It serializes as its kind and message (a run's records are saved with it); the source
/// is an in-memory value and is not kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolError {
    kind: ToolErrorKind,
    message: String,
    #[serde(skip)]
    source: Option<Arc<dyn Error + Send + Sync>>,
}

impl ToolError {
    /// The call was rejected by a person; `reason` is shown to the model.
    pub fn rejected(reason: &str) -> Self {
        ToolError::denied(format!("a person rejected the call: {reason}"))
    }

    /// A tool error of `kind` with a message for the model.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// The model named a tool that the run does not offer.
    pub fn unknown_tool(name: &str) -> Self {
        ToolError::new(ToolErrorKind::UnknownTool, format!("unknown tool `{name}`"))
    }

    /// The arguments are not acceptable; `reason` says why.
    pub fn invalid_arguments(reason: impl Into<String>) -> Self {
        ToolError::new(ToolErrorKind::InvalidArguments, reason)
    }

    /// A handler refused the call; `reason` is shown to the model.
    pub fn denied(reason: impl Into<String>) -> Self {
        ToolError::new(ToolErrorKind::Denied, reason)
    }

    /// Wraps an error returned by a tool (or by middleware around it).
    ///
    /// A `ToolError` passes through unchanged, tower's `Elapsed` becomes
    /// [`ToolErrorKind::Timeout`], and an [`Interrupt`](crate::interrupt::Interrupt)
    /// [`ToolErrorKind::Interrupted`].
    pub fn from_boxed(error: BoxError) -> Self {
        let error = match error.downcast::<ToolError>() {
            Ok(tool_error) => return *tool_error,
            Err(error) => error,
        };
        let error = match error.downcast::<crate::interrupt::Interrupt>() {
            Ok(interrupt) if interrupt.nested_interrupts().is_empty() => {
                let payload = interrupt.into_payload().to_string();
                return ToolError::new(ToolErrorKind::Interrupted, payload);
            }
            // The nested interrupts ride along as the source, for the run to surface.
            Ok(interrupt) => {
                let payload = interrupt.payload().to_string();
                return ToolError {
                    source: Some(Arc::new(*interrupt)),
                    ..ToolError::new(ToolErrorKind::Interrupted, payload)
                };
            }
            Err(error) => error,
        };
        let kind = if error.is::<tower::timeout::error::Elapsed>() {
            ToolErrorKind::Timeout
        } else {
            ToolErrorKind::Failed
        };
        ToolError {
            kind,
            message: error.to_string(),
            source: Some(Arc::from(error)),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The message shown to the model (without the kind).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The text the model sees in the tool result.
    pub fn to_model_text(&self) -> String {
        format!("error ({}): {}", self.kind, self.message)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl Error for ToolError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn Error + 'static))
    }
}
