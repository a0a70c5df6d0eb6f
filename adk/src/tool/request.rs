//! The request of the tool seam.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::Tool;
use super::whole::ChunkSink;
use crate::context::{LocalsGuard, Scope};
use crate::interrupt::{CallAnswers, Decision, IdempotencyKey};
use crate::message::{SmolStr, ToolCall};

/// One tool call, as it travels through the tool wrappers to the tool: the request of the
/// tool seam.
///
/// The arguments have been parsed from the model's JSON text once, before any wrapper
/// sees the call. The run's extensions ride along, so wrappers and tools see the caller's
/// identity, role or tenant, and anything a hook inserted earlier in the run; and so do
/// its run-local values ([`ToolRequest::locals`]).
#[derive(Clone)]
pub struct ToolRequest {
    /// The id of the model's call.
    pub call_id: SmolStr,
    /// The name of the tool.
    pub name: SmolStr,
    /// The parsed arguments.
    pub arguments: Value,
    pub(super) scope: Scope,
    tool: Option<Tool>,
    /// The rest of the tool wrappers' chain, while a tower layer that a handler applied
    /// is in between (see [`ToolLayer`](crate::handler::ToolLayer)); erased, as the
    /// request of a seam knows nothing of the chain around it.
    pub(crate) continuation: Option<Arc<dyn Any + Send + Sync>>,
    /// Where the chunks go while a tower layer sees a streamed call whole.
    pub(crate) sink: Option<ChunkSink>,
}

impl ToolRequest {
    /// A request with empty extensions, e.g. to call a tool directly in a test.
    pub fn new(call_id: impl Into<SmolStr>, name: impl Into<SmolStr>, arguments: Value) -> Self {
        ToolRequest {
            call_id: call_id.into(),
            name: name.into(),
            arguments,
            scope: Scope::default(),
            tool: None,
            continuation: None,
            sink: None,
        }
    }

    pub(crate) fn for_run(call: &ToolCall, arguments: Value, scope: Scope, tool: Tool) -> Self {
        ToolRequest {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments,
            scope,
            tool: Some(tool),
            continuation: None,
            sink: None,
        }
    }

    /// The tool being called, when the call comes from a run: its schema, its flags
    /// (such as [`Tool::is_idempotent`]) and [`Tool::validate`] for re-checking changed
    /// arguments. `None` for a request made with [`ToolRequest::new`].
    pub fn tool(&self) -> Option<&Tool> {
        self.tool.as_ref()
    }

    /// The run's extensions.
    pub fn extensions(&self) -> &http::Extensions {
        &self.scope.extensions
    }

    /// The extensions, mutably. Inserted values are seen by the inner wrappers and the
    /// tool of this call only; the run's extensions are not changed.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        self.scope.extensions_mut()
    }

    /// The run's run-local values, locked for this call (see [`LocalsGuard`]): what the
    /// call changes there is the run's. The tool calls of a turn share them.
    pub fn locals(&self) -> LocalsGuard<'_> {
        self.scope.locals()
    }

    /// The person's decision about this call, when the run resumes from an interrupt of
    /// this call (see [`interrupt`](crate::interrupt)): a wrapper that asked for approval
    /// lets the call through when it is approved. Only approved (or edited) calls run: a
    /// rejected one, or one answered in its place, never reaches the wrappers.
    pub fn decision(&self) -> Option<&Decision> {
        let answers = self.scope.extensions.get::<CallAnswers>()?;
        answers.of(&self.call_id)
    }

    /// The decisions for the interrupts of an agent that this call ran (see
    /// [`Interrupt::nested`](crate::interrupt::Interrupt::nested)), by their ids in that
    /// agent, when the run resumes from them: what the call passes on when it resumes
    /// that agent. `None` otherwise.
    pub fn nested_decisions(&self) -> Option<&BTreeMap<String, Decision>> {
        let answers = self.scope.extensions.get::<CallAnswers>()?;
        answers.nested_of(&self.call_id)
    }

    /// The key this call can make its effect exactly-once with: the run's id (the same
    /// across the run's interrupts and resumes, on any host) and the call's. `None` for a
    /// request made outside a run.
    pub fn idempotency_key(&self) -> Option<IdempotencyKey> {
        Some(IdempotencyKey {
            run_id: self.scope.run_id()?.to_string(),
            call_id: self.call_id.to_string(),
        })
    }
}

impl fmt::Debug for ToolRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRequest")
            .field("call_id", &self.call_id)
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}
