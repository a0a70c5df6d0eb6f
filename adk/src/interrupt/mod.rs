//! Interrupts: a run that stops for a person and goes on later.
//!
//! A tool, a tool wrapper or a handler hook interrupts its run by returning an
//! [`Interrupt`] as its error, with a JSON payload (the question, what is to be approved).
//! The run ends, not with an error but with [`RunStatus::Interrupted`](crate::RunStatus):
//! its [`AgentResult`](crate::AgentResult) names every [`PendingInterrupt`] and the
//! [`CheckpointId`](crate::checkpoint::CheckpointId) its state was written to. The calls
//! of the turn that did not interrupt finish first, and their results are kept.
//!
//! A later request, [`AgentRequest::resume`](crate::AgentRequest::resume), names the
//! checkpoint and gives one [`Decision`] per interrupt id; the run goes on from where it
//! stopped, in this process or in another one that shares the agent's store. Only the
//! interrupted calls run; a call the person rejected never reaches its tool.
//!
//! # Interrupt ids
//!
//! An interrupt id is an address ([`InterruptAddress`]): the agent, then the tool call
//! or the hook and handler that interrupted, e.g. `agent:support/tool:call_7` or
//! `agent:support/before_model:my_crate::Confirm`. It is stable: a resumed run that
//! interrupts again at the same place gets the same id.
//!
//! # Example
//!
//! ```
//! use tower_adk::{Agent, AgentRequest, RunStatus, Tool, ToolInfo, ToolOutput, ToolRequest};
//! use tower_adk::interrupt::{Decision, Interrupt};
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A tool that asks before it transfers, and transfers once approved.
//! let transfer = Tool::from_fn(ToolInfo::new("transfer", "Moves money"), |request: ToolRequest| async move {
//!     if request.decision().is_none() {
//!         return Err(Interrupt::new(json!({"question": "Transfer?"})).into());
//!     }
//!     Ok::<_, tower_adk::BoxError>(ToolOutput::new("done"))
//! });
//! let model = ScriptedModel::new([Turn::call("c1", "transfer", json!({})), Turn::text("Transferred.")]);
//! let agent = Agent::builder(model).name("bank").tool(transfer).build()?;
//!
//! let stopped = agent.run(AgentRequest::user("Send 5 to Bob")).await?;
//! assert_eq!(stopped.status, RunStatus::Interrupted);
//! let pending = &stopped.interrupts[0];
//! assert_eq!(pending.id, "agent:bank/tool:c1");
//! assert_eq!(pending.payload["question"], "Transfer?");
//!
//! let checkpoint = stopped.checkpoint.clone().unwrap();
//! let resume = AgentRequest::resume(checkpoint, [(pending.id.clone(), Decision::Approve)]);
//! let done = agent.run(resume).await?;
//! assert_eq!(done.final_message.content(), "Transferred.");
//! assert_eq!(done.tool_record("c1").unwrap().content, "done");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod address;
mod answers;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use self::address::{InterruptAddress, InvalidAddress};
pub(crate) use self::answers::{CallAnswers, HookAnswer};
use crate::hook::Hook;
use crate::message::ToolCall;

/// The error a tool, a tool wrapper or a hook returns to interrupt its run, with what
/// the person is to see.
///
/// Return it boxed (`Err(Interrupt::new(payload).into())`). From a streaming tool it may
/// come in the middle of the stream: the chunks so far are dropped, and the call runs
/// again from the start once it is approved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the run is interrupted: {payload}")]
pub struct Interrupt {
    payload: Value,
    nested: Vec<PendingInterrupt>,
}

impl Interrupt {
    /// An interrupt that shows `payload` to the person who answers it.
    pub fn new(payload: impl Into<Value>) -> Self {
        Interrupt {
            payload: payload.into(),
            nested: Vec::new(),
        }
    }

    /// The interrupts of an agent that a tool call ran and that stopped at them (see
    /// [`AgentTool`](crate::compose::AgentTool)), surfacing as the call's: the run that
    /// made the call names each with its own address in front
    /// (`agent:support/tool:c1/agent:billing/tool:c9`), and the resumed call gets their
    /// decisions by their inner ids from
    /// [`ToolRequest::nested_decisions`](crate::ToolRequest::nested_decisions). The
    /// payload is `payload` here; the person sees each nested interrupt's own.
    pub fn nested(
        payload: impl Into<Value>,
        interrupts: impl IntoIterator<Item = PendingInterrupt>,
    ) -> Self {
        Interrupt {
            payload: payload.into(),
            nested: interrupts.into_iter().collect(),
        }
    }

    /// The nested interrupts; empty for an interrupt of the call itself.
    pub fn nested_interrupts(&self) -> &[PendingInterrupt] {
        &self.nested
    }

    /// What the person is to see.
    pub fn payload(&self) -> &Value {
        &self.payload
    }

    pub(crate) fn into_payload(self) -> Value {
        self.payload
    }
}

/// An interrupt that waits for a decision: where it came from and what it shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingInterrupt {
    /// The interrupt's address (see the [module docs](self)); the key of its
    /// [`Decision`] on resume.
    pub id: String,
    /// The tool call that interrupted, or whose wrapper did; `None` for a hook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<ToolCall>,
    /// The payload of the [`Interrupt`].
    pub payload: Value,
}

impl PendingInterrupt {
    /// The interrupt's address, read from its id.
    ///
    /// # Errors
    ///
    /// An id that is not an address (one this crate did not make).
    pub fn address(&self) -> Result<InterruptAddress, InvalidAddress> {
        self.id.parse()
    }

    pub(crate) fn for_call(agent: &str, call: &ToolCall, payload: Value) -> Self {
        PendingInterrupt {
            id: InterruptAddress::for_call(agent, &*call.id).to_string(),
            call: Some(call.clone()),
            payload,
        }
    }

    /// The interrupt `inner` of an agent that the call `call` ran, as the caller's.
    pub(crate) fn through_call(agent: &str, call: &ToolCall, inner: &PendingInterrupt) -> Self {
        let address = InterruptAddress::for_call(agent, &*call.id).through(&inner.id);
        PendingInterrupt {
            id: address.to_string(),
            call: Some(call.clone()),
            payload: inner.payload.clone(),
        }
    }

    pub(crate) fn for_hook(agent: &str, hook: Hook, handler: &str, payload: Value) -> Self {
        PendingInterrupt {
            id: InterruptAddress::for_hook(agent, hook, handler).to_string(),
            call: None,
            payload,
        }
    }
}

/// What a person decided about one interrupt.
///
/// For a tool call: run it as it is, run it with other arguments, do not run it (the
/// model reads the reason as the call's result), or answer in its place (the answer is
/// the call's result). A hook reads the decision, whichever it is, when it runs again
/// (see [`RunContext::decision`](crate::RunContext::decision) and
/// [`ModelRequest::decision`](crate::ModelRequest::decision)): `Respond` carries an
/// answer for it, and what the others mean is the hook's to say.
///
/// It serializes as `{"type": "approve"}`, `{"type": "edit", "arguments": {...}}`,
/// `{"type": "reject", "reason": "..."}` or `{"type": "respond", "answer": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Go ahead.
    Approve,
    /// Go ahead with these arguments instead (checked again against the tool's schema).
    Edit {
        /// The arguments to run the call with.
        arguments: Value,
    },
    /// Do not run the call; the model reads the reason as its result.
    Reject {
        /// Why, for the model.
        reason: String,
    },
    /// Answer in the call's place (the answer is its result), or answer a hook.
    Respond {
        /// The answer.
        answer: Value,
    },
}

impl Decision {
    /// Whether the call may run: approved, with its arguments or edited ones.
    pub fn allows_call(&self) -> bool {
        matches!(self, Decision::Approve | Decision::Edit { .. })
    }

    /// A stable snake_case name: `approve`, `edit`, `reject`, `respond`.
    pub fn kind(&self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Edit { .. } => "edit",
            Decision::Reject { .. } => "reject",
            Decision::Respond { .. } => "respond",
        }
    }
}

/// Marks a run that resumes an interrupted one: [`before_agent`](crate::Handler::before_agent)
/// runs again on resume, and a handler or an instruction template can tell the two apart
/// by this extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resumed;

/// The decisions of one resume, by interrupt id.
pub(crate) type Decisions = BTreeMap<String, Decision>;

/// The key a tool can make its effect exactly-once with: the run and the call. A run
/// that crashes between a tool's effect and its checkpoint runs that call again when it
/// is resumed (at least once); a tool that records the key with its effect can skip the
/// repeat.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IdempotencyKey {
    /// The run's id, the same across its interrupts and resumes.
    pub run_id: String,
    /// The model's call id.
    pub call_id: String,
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.run_id, self.call_id)
    }
}
