//! The wire form of what a run gives back: [`WireResult`], [`WireToolResult`], and a
//! thread's state, [`WireThread`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::agent::AgentResult;
use crate::agent::RunStatus;
use crate::agent::{Checkpoint, CheckpointStatus};
use crate::auth::Decided;
use crate::checkpoint::CheckpointId;
use crate::content::Part;
use crate::context::Locals;
use crate::interrupt::PendingInterrupt;
use crate::message::Message;
use crate::message::Messages;
use crate::model::{Cost, Prices, UsageTotals};
use crate::tool::ToolError;
use crate::tool::ToolRecord;

/// The record of one tool call in the wire form (the `tool_result` event, and each of a
/// result's `tool_records`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WireToolResult {
    /// The call id.
    pub call_id: String,
    /// The tool name.
    pub name: String,
    /// The arguments as the model sent them (JSON text).
    pub arguments: String,
    /// What the model saw: the output, or the description of the failure.
    pub content: String,
    /// What else the model saw after the text: the images and files the tool returned
    /// (left out when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// The failure (`{"kind": "timeout", "message": "..."}`), when the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<WireToolError>,
    /// How long the call took, in milliseconds.
    pub latency_ms: f64,
}

/// A failed tool call's kind (a [`ToolErrorKind`](crate::ToolErrorKind) in snake_case)
/// and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WireToolError {
    /// The kind of failure ([`ToolErrorKind::as_str`](crate::ToolErrorKind::as_str)),
    /// e.g. `unknown_tool`, `invalid_arguments`, `timeout`: text, so that a reader
    /// takes kinds added later.
    pub kind: String,
    /// What went wrong.
    pub message: String,
}

impl From<&ToolError> for WireToolError {
    fn from(error: &ToolError) -> Self {
        WireToolError {
            kind: error.kind().as_str().to_owned(),
            message: error.message().to_owned(),
        }
    }
}

impl From<&ToolRecord> for WireToolResult {
    fn from(record: &ToolRecord) -> Self {
        WireToolResult::with(record, record.content.clone(), record.parts.clone())
    }
}

impl WireToolResult {
    /// The wire form of `record`, taking its content and parts rather than copying them.
    pub(crate) fn from_record(mut record: ToolRecord) -> Self {
        let (content, parts) = (
            std::mem::take(&mut record.content),
            std::mem::take(&mut record.parts),
        );
        WireToolResult::with(&record, content, parts)
    }

    /// The wire form of a record that others share: only what the wire form holds is
    /// copied.
    pub(crate) fn from_shared(record: Arc<ToolRecord>) -> Self {
        match Arc::try_unwrap(record) {
            Ok(record) => WireToolResult::from_record(record),
            Err(shared) => WireToolResult::from(&*shared),
        }
    }

    /// `record`'s wire form with its `content` and `parts` as given.
    fn with(record: &ToolRecord, content: String, parts: Vec<Part>) -> Self {
        WireToolResult {
            // Copied as text (`to_string` would go through `Display`).
            call_id: String::from(record.call_id.as_str()),
            name: String::from(record.name.as_str()),
            arguments: String::from(record.arguments.as_str()),
            content,
            parts,
            error: record.error.as_ref().map(WireToolError::from),
            latency_ms: record.latency.as_secs_f64() * 1000.0,
        }
    }
}

/// A run's final result in the wire form (the `completed` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WireResult {
    /// `completed`, `degraded` or `interrupted`.
    pub status: RunStatus,
    /// The message that ends the run.
    pub final_message: Message,
    /// The whole history of the run.
    pub messages: Messages,
    /// One record per tool call, in the order of the calls.
    pub tool_records: Vec<WireToolResult>,
    /// How many iterations of the loop the run made.
    pub iterations: usize,
    /// How many times the model service was called.
    pub model_calls: usize,
    /// What the run's model calls used, as they reported it.
    #[serde(default)]
    pub usage: UsageTotals,
    /// What that cost, when the agent has a price table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
    /// The run-local values at the end of the run.
    #[serde(default, skip_serializing_if = "Locals::is_empty")]
    pub locals: Locals,
    /// The interrupts that wait for decisions, when `status` is `interrupted`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interrupts: Vec<PendingInterrupt>,
    /// The checkpoint the run wrote last, in its text form (`thread@version#run`): the
    /// one to resume an interrupted run from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
}

impl From<&AgentResult> for WireResult {
    fn from(result: &AgentResult) -> Self {
        WireResult::from_result(result.clone())
    }
}

impl WireResult {
    /// The wire form of `result`, taking its messages and records rather than copying
    /// them.
    pub(crate) fn from_result(result: AgentResult) -> Self {
        let records = result.tool_records.into_iter();
        WireResult {
            status: result.status,
            final_message: result.final_message,
            messages: result.messages,
            tool_records: records.map(WireToolResult::from_record).collect(),
            iterations: result.iterations,
            model_calls: result.model_calls,
            usage: result.usage,
            cost: result.cost,
            locals: result.locals,
            interrupts: result.interrupts,
            checkpoint: result.checkpoint.as_ref().map(CheckpointId::to_string),
        }
    }
}

/// Where a thread stands, from its newest checkpoint (see
/// [`Agent::last_checkpoint`](crate::Agent::last_checkpoint)): its history, the
/// interrupts that wait, its owner and its audit trail.
///
/// ```
/// use tower_adk::{Agent, AgentRequest};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::wire::WireThread;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::new([Turn::text("Hi!")])).build()?;
/// agent.run(AgentRequest::user("hello").on_thread("t1")).await?;
///
/// let (id, checkpoint) = agent.last_checkpoint("t1").await?.unwrap();
/// let thread = WireThread::new(&id, &checkpoint);
/// assert_eq!(thread.messages.last().unwrap().content(), "Hi!");
/// assert!(thread.interrupts.is_empty());
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WireThread {
    /// The thread.
    pub thread: String,
    /// The newest checkpoint's id, in its text form.
    pub checkpoint: String,
    /// Where its last run stands: `running`, `interrupted`, `completed` or `failed`.
    pub status: CheckpointStatus,
    /// The thread's history: once its last run completed (or failed), the history the
    /// next run starts from; while it runs or waits, that run's history as of the
    /// checkpoint (with the run's instruction first, when it has one).
    pub messages: Messages,
    /// The interrupts that wait for decisions, when `status` is `interrupted`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interrupts: Vec<PendingInterrupt>,
    /// The subject of the principal the thread belongs to.
    #[serde(default)]
    pub owner: String,
    /// Every decision made on the thread's runs, oldest first: `{"interrupt", "decision",
    /// "by", "at"}` (see [`Decided`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit: Vec<Decided>,
    /// What the thread's runs used, as their models reported it.
    #[serde(default)]
    pub usage: UsageTotals,
    /// What that cost, when the agent has a price table (see [`WireThread::priced`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

impl WireThread {
    /// With the cost of the thread's usage at these prices, if there are any.
    pub fn priced(mut self, prices: Option<&Prices>) -> Self {
        self.cost = prices.map(|prices| self.usage.cost(prices));
        self
    }

    /// The state of the thread whose newest checkpoint is `checkpoint`, named `id`.
    pub fn new(id: &CheckpointId, checkpoint: &Checkpoint) -> Self {
        WireThread {
            thread: id.thread.clone(),
            checkpoint: id.to_string(),
            status: checkpoint.status,
            messages: thread_history(checkpoint),
            interrupts: checkpoint.interrupts.clone(),
            owner: checkpoint.owner.subject().to_owned(),
            audit: checkpoint.audit.clone(),
            usage: checkpoint.thread_usage(),
            cost: None,
        }
    }
}

/// The history a thread's reader sees: a completed run's record keeps it as the base of
/// the next run only.
fn thread_history(checkpoint: &Checkpoint) -> Messages {
    let run = &checkpoint.run.history().messages;
    match checkpoint.status {
        CheckpointStatus::Running | CheckpointStatus::Interrupted if !run.is_empty() => run.clone(),
        _ => checkpoint.base.clone(),
    }
}
