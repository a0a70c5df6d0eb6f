//! Everything a run is, as plain data: [`Run`], and where it stands, [`RunStep`].
//!
//! The loop (`runner/`) advances a `Run` step by step; the events a caller reads are a
//! view of it. Between two steps a `Run` is all there is to a run besides the agent and
//! the request's extensions, so it can be written with serde and read back.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::result::{AgentResult, RunStatus};
use crate::context::{History, RunContext};
use crate::message::{Message, Messages, ToolCall};
use crate::model::{Usage, UsageTotals};
use crate::tool::ToolRecord;

/// Where a run stands: the step it takes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStep {
    /// Not started: `before_agent` runs next, then the history gets its instruction.
    #[default]
    Start,
    /// The model is called next: `before_model`, the `wrap_model` chain, then
    /// `after_model`.
    CallModel,
    /// The model's reply is the last message of the history: `after_model` runs next,
    /// then the loop routes on the reply.
    AfterModel,
    /// The tool calls of the model's last reply run next.
    RunTools,
    /// The run ends next: `after_agent`, then the result.
    Finish,
    /// The run has ended.
    Done,
}

/// Everything a run is, as plain data: where it stands ([`RunStep`]), its context's
/// run-local values and iteration ([`RunContext`]), its history ([`History`]), the tool
/// calls of the turn in progress and the records of those that finished, the records of
/// earlier turns, and the outcome so far. Handlers keep their per-run counters in the
/// run-local values, so they are part of it too.
///
/// It is `Serialize + Deserialize`: a run written between two steps can be read back and
/// continued. The context's extensions are in-memory values and are not written; a
/// continued run gets those of its new request.
///
/// # Example
///
/// ```
/// use tower_adk::{Message, Run, RunStep};
///
/// let run = Run::new(vec![Message::user("hi")].into(), http::Extensions::new());
/// assert_eq!(run.step(), RunStep::Start);
///
/// let json = serde_json::to_string(&run)?;
/// let back: Run = serde_json::from_str(&json)?;
/// assert_eq!(back.history().messages, run.history().messages);
/// # Ok::<_, serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    step: RunStep,
    context: RunContext,
    /// (Written as `state`, its name in format 1.)
    #[serde(rename = "state")]
    history: History,
    /// The turn whose calls are running (or ran): their records as they finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    turn: Option<Turn>,
    /// The records of every call of the turns before, in the model's order.
    records: Vec<Arc<ToolRecord>>,
    /// The final message, when something other than the model's last reply ends the run
    /// (a finishing tool, a degraded end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    returned: Option<Box<Message>>,
    status: RunStatus,
    /// How many times the model service was called, in the steps finished so far.
    model_calls: usize,
    /// What the model calls so far used, as they reported it; `None` until one did.
    /// (Boxed: every run's future holds its run, and a run's future that outgrows the
    /// allocator's small-size cache costs more than the box.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Box<UsageTotals>>,
}

/// The usage of a run whose calls reported none.
static UNUSED: UsageTotals = UsageTotals::EMPTY;

/// The tool calls of one turn: those of the model's last reply.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Turn {
    /// One slot per call, in the model's order: its record once it finished.
    pub(crate) finished: Vec<Option<Arc<ToolRecord>>>,
    /// The first call, in the model's order, that finishes the run.
    pub(crate) winner: Option<usize>,
}

impl Run {
    /// A run that has not started, with this input and these extensions.
    pub fn new(input: Messages, extensions: http::Extensions) -> Self {
        Run {
            step: RunStep::Start,
            context: RunContext::new(extensions),
            history: History::new(input),
            turn: None,
            records: Vec::new(),
            returned: None,
            status: RunStatus::Completed,
            model_calls: 0,
            usage: None,
        }
    }

    /// Begins a new run's history, and takes it to its first step: the instruction (if
    /// any), the history of its thread before it (`base`, if any), then the request's
    /// messages, in a new list with room for a few turns (growing one in place is the
    /// allocator's slow path).
    pub(crate) fn begin(&mut self, base: Option<&Messages>, instruction: &str, first: RunStep) {
        const ROOM: usize = 8;
        let mut input = std::mem::take(&mut self.history.messages);
        if let Some(base) = base.filter(|b| !b.is_empty()) {
            input = base.iter().chain(input.iter()).cloned().collect();
        }
        input.repair_tool_calls();
        let mut history = Vec::with_capacity(input.len() + 1 + ROOM);
        if !instruction.is_empty() {
            history.push(Message::system(instruction));
        }
        history.extend(input.into_vec());
        self.history.messages = Messages::from(history);
        self.step = first;
    }

    /// The step the run takes next.
    pub fn step(&self) -> RunStep {
        self.step
    }

    /// The run's context: its extensions, run-local values and iteration.
    pub fn context(&self) -> &RunContext {
        &self.context
    }

    /// The run's history.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The records of the calls that finished, in the model's order: those of the
    /// turns before, then those of the turn in progress.
    pub fn records(&self) -> impl Iterator<Item = &ToolRecord> {
        let turn = self.turn.iter().flat_map(|t| t.finished.iter().flatten());
        self.records.iter().chain(turn).map(|record| &**record)
    }

    /// The tool calls of the turn in progress that have not finished: those of the
    /// model's last reply without a record.
    pub fn pending_calls(&self) -> impl Iterator<Item = &ToolCall> {
        let calls = match (&self.turn, self.history.messages.last()) {
            (Some(_), Some(reply)) => reply.tool_calls(),
            _ => &[],
        };
        let finished = self.turn.as_ref().map_or(&[][..], |t| &t.finished[..]);
        calls
            .iter()
            .enumerate()
            .filter(move |(at, _)| finished.get(*at).is_none_or(Option::is_none))
            .map(|(_, call)| call)
    }

    /// The places (in the model's order) of the calls of the turn in progress that have
    /// not finished.
    pub(crate) fn unfinished_calls(&self) -> impl Iterator<Item = usize> + '_ {
        let finished = self.turn.as_ref().map_or(&[][..], |t| &t.finished[..]);
        finished
            .iter()
            .enumerate()
            .filter(|(_, record)| record.is_none())
            .map(|(at, _)| at)
    }

    /// How many times the model service was called so far.
    pub fn model_calls(&self) -> usize {
        self.model_calls
    }

    pub(crate) fn set_step(&mut self, step: RunStep) {
        self.step = step;
    }

    /// The context and the history, each mutably, for a hook.
    pub(crate) fn parts(&mut self) -> (&mut RunContext, &mut History) {
        (&mut self.context, &mut self.history)
    }

    pub(crate) fn context_mut(&mut self) -> &mut RunContext {
        &mut self.context
    }

    pub(crate) fn history_mut(&mut self) -> &mut History {
        &mut self.history
    }

    /// The turn whose calls are running (or ran), if one is.
    pub(crate) fn turn(&self) -> Option<&Turn> {
        self.turn.as_ref()
    }

    pub(crate) fn turn_mut(&mut self) -> Option<&mut Turn> {
        self.turn.as_mut()
    }

    /// Begins a turn of this many calls, whose slots go in `slots` (emptied, given
    /// back by the turn before: growing one costs an allocation per turn).
    pub(crate) fn begin_turn(&mut self, calls: usize, mut slots: Vec<Option<Arc<ToolRecord>>>) {
        slots.clear();
        slots.resize(calls, None);
        self.turn = Some(Turn {
            finished: slots,
            winner: None,
        });
    }

    /// Ends the turn: its records join the run's, and its results the history.
    pub(crate) fn end_turn(&mut self) -> Option<Turn> {
        let turn = self.turn.take()?;
        let results = turn.finished.iter().flatten().map(|r| r.to_message());
        self.history.messages.to_mut().extend(results);
        self.records
            .extend(turn.finished.iter().flatten().map(Arc::clone));
        Some(turn)
    }

    /// Says what ends the run, when it is not the model's last reply.
    pub(crate) fn end_with(&mut self, message: Message, status: RunStatus) {
        self.returned = Some(Box::new(message));
        self.status = status;
    }

    pub(crate) fn set_model_calls(&mut self, calls: usize) {
        self.model_calls = calls;
    }

    /// What the model calls so far used, as they reported it.
    pub fn usage(&self) -> &UsageTotals {
        self.usage.as_deref().unwrap_or(&UNUSED)
    }

    pub(crate) fn add_usage(&mut self, model: Option<&str>, usage: Usage) {
        self.usage.get_or_insert_default().add(model, usage);
    }

    /// The result of a run that stopped at an interrupt: its history so far, and the
    /// records of the calls that finished (those of the turn that waits included). The
    /// run keeps its data: its checkpoint holds it.
    pub(crate) fn interrupted_result(&self) -> AgentResult {
        let messages = self.history.messages.clone();
        AgentResult {
            status: RunStatus::Interrupted,
            final_message: messages
                .last_assistant()
                .cloned()
                .unwrap_or_else(|| Message::assistant("")),
            messages,
            tool_records: self.records().cloned().collect(),
            iterations: self.context.iteration(),
            model_calls: self.model_calls,
            usage: self.usage().clone(),
            cost: None,
            locals: self.context.locals().clone(),
            interrupts: Vec::new(),
            checkpoint: None,
        }
    }

    /// The result of the run, taken out of it: the run is done.
    pub(crate) fn take_result(&mut self) -> AgentResult {
        self.step = RunStep::Done;
        let messages = std::mem::take(&mut self.history.messages);
        let final_message = match self.returned.take() {
            Some(message) => *message,
            None => messages
                .last()
                .cloned()
                .unwrap_or_else(|| Message::assistant("")),
        };
        let records = std::mem::take(&mut self.records);
        AgentResult {
            status: self.status,
            final_message,
            messages,
            // The caller has usually dropped the events by now: then nothing is copied.
            tool_records: records.into_iter().map(Arc::unwrap_or_clone).collect(),
            iterations: self.context.iteration(),
            model_calls: self.model_calls,
            usage: self.usage.take().map(|usage| *usage).unwrap_or_default(),
            cost: None,
            locals: std::mem::take(self.context.locals_mut()),
            interrupts: Vec::new(),
            checkpoint: None,
        }
    }
}

/// A run as a record that continues an earlier record of the same run writes it
/// ([`Run::tail`]): [`Run`]'s fields, with only the messages and the records that came
/// after those the earlier record holds. Read back, it is a `Run` whose history and
/// records are that tail, until [`Run::continue_from`] puts the earlier ones before it.
#[derive(Serialize)]
pub(crate) struct RunTail<'a> {
    step: RunStep,
    context: &'a RunContext,
    #[serde(rename = "state")]
    history: HistoryTail<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    turn: Option<&'a Turn>,
    records: &'a [Arc<ToolRecord>],
    #[serde(skip_serializing_if = "Option::is_none")]
    returned: Option<&'a Message>,
    status: RunStatus,
    model_calls: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a UsageTotals>,
}

/// [`History`]'s fields, with the messages from a point on.
#[derive(Serialize)]
struct HistoryTail<'a> {
    messages: &'a [Message],
}

impl Run {
    /// The run as a record that continues one holding its first `messages` messages and
    /// first `records` records writes it; `None` when the run has fewer.
    pub(crate) fn tail(&self, messages: usize, records: usize) -> Option<RunTail<'_>> {
        Some(RunTail {
            step: self.step,
            context: &self.context,
            history: HistoryTail {
                messages: self.history.messages.get(messages..)?,
            },
            turn: self.turn.as_ref(),
            records: self.records.get(records..)?,
            returned: self.returned.as_deref(),
            status: self.status,
            model_calls: self.model_calls,
            usage: self.usage.as_deref(),
        })
    }

    /// The records of the turns before the one in progress.
    pub(crate) fn earlier_records(&self) -> &[Arc<ToolRecord>] {
        &self.records
    }

    /// Puts the first `messages` messages and `records` records of `earlier` (the run as
    /// the record this one continues held it) before this run's own, read from a
    /// [`RunTail`]. `false`, changing nothing, when `earlier` has fewer.
    pub(crate) fn continue_from(&mut self, earlier: Run, messages: usize, records: usize) -> bool {
        let mut history = earlier.history.messages.into_vec();
        let mut earlier_records = earlier.records;
        if history.len() < messages || earlier_records.len() < records {
            return false;
        }
        history.truncate(messages);
        history.extend(std::mem::take(&mut self.history.messages).into_vec());
        self.history.messages = Messages::from(history);
        earlier_records.truncate(records);
        earlier_records.append(&mut self.records);
        self.records = earlier_records;
        true
    }
}
