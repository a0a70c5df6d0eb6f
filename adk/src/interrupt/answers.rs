//! Where a resume's decisions go: [`HookAnswer`], the decision for the hook of a handler
//! that interrupted, and [`CallAnswers`], those of the calls of the resumed turn. The
//! resume's plan (`agent/resume.rs`) makes them; the run hands each to what asks for it.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Decision, Decisions};
use crate::hook::Hook;

/// The decision for the interrupt of one hook of one handler: in the run's context while
/// the run resumes (see [`RunContext::decision`](crate::context::RunContext::decision)),
/// and for a `wrap_model` hook, in the extensions of the model call that runs again (see
/// [`ModelRequest::decision`](crate::model::ModelRequest::decision)).
#[derive(Debug, Clone)]
pub(crate) struct HookAnswer {
    pub(crate) hook: Hook,
    /// The handler's name.
    pub(crate) handler: String,
    pub(crate) decision: Decision,
}

impl HookAnswer {
    /// Whether this is the answer for `hook` of the handler named `handler`.
    pub(crate) fn is_for(&self, hook: Hook, handler: &str) -> bool {
        self.hook == hook && self.handler == handler
    }
}

/// The decisions of the calls of a resumed turn, in the extensions of its calls (see
/// [`ToolRequest::decision`](crate::tool::ToolRequest::decision) and
/// [`ToolRequest::nested_decisions`](crate::tool::ToolRequest::nested_decisions)): by call
/// id, each call's own; and for a call that ran an agent which interrupted, that agent's
/// decisions, by their ids there. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallAnswers(Arc<Calls>);

#[derive(Debug, Default)]
struct Calls {
    own: HashMap<String, Decision>,
    nested: HashMap<String, Decisions>,
}

impl CallAnswers {
    /// Each call's own decision, and the decisions for the agents that calls ran, by
    /// call id.
    pub(crate) fn new(own: HashMap<String, Decision>, nested: HashMap<String, Decisions>) -> Self {
        CallAnswers(Arc::new(Calls { own, nested }))
    }

    /// The decision for the call with this id.
    pub(crate) fn of(&self, call_id: &str) -> Option<&Decision> {
        self.0.own.get(call_id)
    }

    /// The decisions for the interrupts of the agent that the call with this id ran.
    pub(crate) fn nested_of(&self, call_id: &str) -> Option<&Decisions> {
        self.0.nested.get(call_id)
    }
}
