//! [`AgentResult`]: what a run that did not fail gives back, and how it ended
//! ([`RunStatus`]).

use serde::{Deserialize, Serialize};

use crate::checkpoint::CheckpointId;
use crate::context::Locals;
use crate::interrupt::PendingInterrupt;
use crate::message::{Message, Messages};
use crate::model::{Cost, UsageTotals};
use crate::tool::ToolRecord;

/// How a run that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// The model answered, or a return-directly tool ended the run.
    Completed,
    /// A tool failed and the agent's [`ToolFailurePolicy::EndDegraded`](super::ToolFailurePolicy::EndDegraded) ended the run;
    /// the final message is the first failed call's result.
    Degraded,
    /// The run waits for a person's decisions on its
    /// [`interrupts`](AgentResult::interrupts); resume it from its
    /// [`checkpoint`](AgentResult::checkpoint). The final message is the model's last
    /// reply.
    Interrupted,
}

/// The final result of a successful run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentResult {
    /// Whether the run completed or was ended early, degraded.
    pub status: RunStatus,
    /// The message that ends the run: the model's last reply or, when a return-directly
    /// tool ended it, that tool's result.
    pub final_message: Message,
    /// The whole history of the run.
    pub messages: Messages,
    /// One record per tool execution, in the order of the calls: turn by turn, and in
    /// the model's order within a turn (as in the history), whatever order they finished in.
    pub tool_records: Vec<ToolRecord>,
    /// How many iterations of the loop the run made: each is one model turn, one pass
    /// through `before_model`, the `wrap_model` chain and `after_model`, however it was
    /// answered (by the model, by a `wrap_model` hook that answered itself, or after
    /// several attempts of a retrying wrapper). It is what
    /// [`AgentBuilder::max_iterations`](super::AgentBuilder::max_iterations) bounds.
    pub iterations: usize,
    /// How many times the agent's model service was called: at the inner end of the
    /// `wrap_model` chain, so a turn that a `wrap_model` hook answered itself counts
    /// none, and each attempt of a retrying wrapper (such as a
    /// [`ModelLayer`](crate::handler::ModelLayer) retry) counts one. (Middleware built into
    /// the model service itself, before it was given to the agent, is inside that one
    /// call.)
    pub model_calls: usize,
    /// What the run's model calls used, as the models reported it (calls whose model
    /// reports nothing add nothing): in all, and model by model.
    pub usage: UsageTotals,
    /// What that cost, when the agent has a price table
    /// ([`AgentBuilder::prices`](super::AgentBuilder::prices)).
    pub cost: Option<Cost>,
    /// The run-local values at the end of the run (e.g. filled slots).
    pub locals: Locals,
    /// The interrupts that wait for decisions, when the run is
    /// [`Interrupted`](RunStatus::Interrupted).
    pub interrupts: Vec<PendingInterrupt>,
    /// The checkpoint the run wrote last: the one to resume an interrupted run from.
    /// `None` for a run that wrote none (no thread, not durable, not interrupted).
    pub checkpoint: Option<CheckpointId>,
}

impl AgentResult {
    /// The record of the tool call with this id, if the run made it.
    pub fn tool_record(&self, call_id: &str) -> Option<&ToolRecord> {
        self.tool_records.iter().find(|r| r.call_id == call_id)
    }
}
