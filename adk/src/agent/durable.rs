//! What a run does with the agent's checkpoint store: it takes up a checkpoint or a
//! thread when it starts, claims the thread, and writes its checkpoints.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Serialize;

use super::{AgentConfig, Run};
use crate::checkpoint::{Checkpoint, CheckpointError, CheckpointId, CheckpointStatus};
use crate::checkpoint::{CheckpointStore, FORMAT, StoreError};
use crate::interrupt::{Decision, Decisions, PendingInterrupt};
use crate::run_shared::Released;
use crate::{Locals, Message, Messages};

/// The durable side of a run: its thread, where the thread's head is, and the
/// interrupts it raised or resumes from. (Boxed in the loop: most runs have none.)
pub(super) struct Durable {
    pub(super) store: Arc<dyn CheckpointStore>,
    pub(super) thread: String,
    /// The version of the thread's head: what the next write expects.
    pub(super) head: Option<u64>,
    pub(super) run_id: Arc<str>,
    /// The thread's history before this run, without an instruction.
    pub(super) base: Messages,
    /// Whether the thread's head is this run's own record.
    pub(super) claimed: bool,
    /// Whether the run wrote its last record (completed, interrupted or failed): the
    /// thread is free.
    pub(super) ended: bool,
    /// A checkpoint is due at the next step (a durable run finished a turn).
    pub(super) save_due: bool,
    /// The interrupts this run raised, waiting.
    pub(super) interrupts: Vec<PendingInterrupt>,
    /// The interrupts of the checkpoint this run resumes, and their decisions.
    pub(super) answered: Vec<PendingInterrupt>,
    pub(super) decisions: Decisions,
    /// The checkpoint this run wrote last.
    pub(super) last: Option<CheckpointId>,
}

/// A record as it is written: [`Checkpoint`]'s fields, borrowed.
#[derive(Serialize)]
struct RecordRef<'a> {
    format: u32,
    run_id: &'a str,
    status: CheckpointStatus,
    run: &'a Run,
    base: &'a Messages,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    interrupts: &'a [PendingInterrupt],
    #[serde(skip_serializing_if = "Decisions::is_empty")]
    decisions: &'a Decisions,
}

impl Durable {
    /// A run on `thread`, whose head is at `head`.
    pub(super) fn new(
        store: Arc<dyn CheckpointStore>,
        thread: String,
        head: Option<u64>,
        run_id: Arc<str>,
        base: Messages,
    ) -> Self {
        Durable {
            store,
            thread,
            head,
            run_id,
            base,
            claimed: false,
            ended: false,
            save_due: false,
            interrupts: Vec::new(),
            answered: Vec::new(),
            decisions: Decisions::new(),
            last: None,
        }
    }

    /// Writes the run as the thread's new head.
    ///
    /// # Errors
    ///
    /// The store's, a [`StoreError::Conflict`] when someone else wrote to the thread
    /// since this run read or wrote its head.
    /// (Boxed: the runs that write pay for the room its future takes, not every run.)
    pub(super) fn write<'a>(
        &'a mut self,
        status: CheckpointStatus,
        run: &'a Run,
    ) -> BoxFuture<'a, Result<CheckpointId, CheckpointError>> {
        Box::pin(self.write_now(status, run))
    }

    async fn write_now(
        &mut self,
        status: CheckpointStatus,
        run: &Run,
    ) -> Result<CheckpointId, CheckpointError> {
        let interrupts = match status {
            CheckpointStatus::Interrupted => &self.interrupts[..],
            CheckpointStatus::Running => &self.answered[..],
            _ => &[],
        };
        let no_decisions = Decisions::new();
        let decisions = match status {
            CheckpointStatus::Running => &self.decisions,
            _ => &no_decisions,
        };
        let record = RecordRef {
            format: FORMAT,
            run_id: &self.run_id,
            status,
            run,
            base: &self.base,
            interrupts,
            decisions,
        };
        let bytes =
            serde_json::to_vec(&record).map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
        let version = self.store.append(&self.thread, self.head, bytes).await?;
        self.head = Some(version);
        self.claimed = true;
        self.ended = status != CheckpointStatus::Running;
        let id = CheckpointId {
            thread: self.thread.clone(),
            version,
            run: self.run_id.to_string(),
        };
        self.last = Some(id.clone());
        Ok(id)
    }

    /// Claims the thread for this run: writes the run as the thread's head, if no one
    /// else wrote there since the run read it.
    ///
    /// # Errors
    ///
    /// [`CheckpointError::ThreadBusy`] when another run wrote to the thread, or
    /// [`CheckpointError::Used`] when the checkpoint this run resumes was resumed
    /// first.
    pub(super) fn claim<'a>(
        &'a mut self,
        run: &'a Run,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            let resumes = self.last.take();
            let claimed = self.write_now(CheckpointStatus::Running, run).await;
            claimed.map(drop).map_err(|error| match (error, resumes) {
                (CheckpointError::Store(StoreError::Conflict { found, .. }), Some(id)) => {
                    CheckpointError::Used(id, found.unwrap_or_default())
                }
                (CheckpointError::Store(StoreError::Conflict { .. }), None) => {
                    CheckpointError::ThreadBusy(self.thread.clone())
                }
                (error, _) => error,
            })
        })
    }

    /// The decisions of the calls of the resumed turn, by call id; and those of the
    /// interrupts that came through a call from an agent it ran, by call id and their
    /// inner ids (such a call itself is approved: it runs again, to pass them on).
    pub(super) fn call_decisions(
        &self,
        agent: &str,
    ) -> (HashMap<String, Decision>, HashMap<String, Decisions>) {
        let (mut own, mut nested) = (HashMap::new(), HashMap::<String, Decisions>::new());
        for interrupt in &self.answered {
            let (Some(call), Some(decision)) = (&interrupt.call, self.decisions.get(&interrupt.id))
            else {
                continue;
            };
            match interrupt.inner_id(agent) {
                Some(inner) => {
                    own.insert(call.id.to_string(), Decision::Approve);
                    let of_call = nested.entry(call.id.to_string()).or_default();
                    of_call.insert(inner.to_owned(), decision.clone());
                }
                None => {
                    own.insert(call.id.to_string(), decision.clone());
                }
            }
        }
        (own, nested)
    }
}

/// Frees the thread of a run that was dropped while it held it: writes the run as failed
/// (the next run on the thread goes on from the history before it; resuming the record
/// takes the run over), on a task of the runtime the run was dropped in; the task gives
/// the checkpoint it wrote. Without a runtime the thread stays claimed until its last
/// checkpoint is resumed or deleted.
pub(super) fn release(mut durable: Box<Durable>, run: Run) -> Option<Released> {
    if !durable.claimed || durable.ended {
        return None;
    }
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    Some(runtime.spawn(async move {
        // A conflict means someone took the thread over already: nothing to free.
        durable.write(CheckpointStatus::Failed, &run).await.ok()
    }))
}

/// Reads the thread's head for a new run on it: the history to start from, the
/// thread's values (see [`RunContext::thread_values`](crate::RunContext::thread_values))
/// as the last run left them, and where the head is.
///
/// # Errors
///
/// [`CheckpointError::ThreadBusy`] when a run is running on the thread,
/// [`CheckpointError::ThreadInterrupted`] when its last run waits for decisions.
pub(super) async fn open_thread(
    store: &dyn CheckpointStore,
    thread: &str,
) -> Result<(Option<u64>, Messages, Locals), CheckpointError> {
    let Some(head) = store.head(thread).await? else {
        return Ok((None, Messages::new(), Locals::default()));
    };
    let checkpoint = Checkpoint::decode(&head.bytes)?;
    match checkpoint.status {
        CheckpointStatus::Running => Err(CheckpointError::ThreadBusy(thread.to_owned())),
        CheckpointStatus::Interrupted => Err(CheckpointError::ThreadInterrupted(CheckpointId {
            thread: thread.to_owned(),
            version: head.version,
            run: checkpoint.run_id,
        })),
        _ => {
            let values = checkpoint.run.context().thread_values().clone();
            Ok((Some(head.version), checkpoint.base, values))
        }
    }
}

/// Reads the checkpoint a resume names, and checks the decisions against it.
///
/// # Errors
///
/// An unknown, used or ended checkpoint; a missing decision, or one for no interrupt.
pub(super) async fn open_checkpoint(
    store: &dyn CheckpointStore,
    id: &CheckpointId,
    decisions: &Decisions,
) -> Result<Checkpoint, CheckpointError> {
    let unknown = || CheckpointError::Unknown(id.clone());
    let head = store.head(&id.thread).await?.ok_or_else(unknown)?;
    if head.version != id.version {
        // An older record of the same run: used. Anything else: unknown.
        let older = match store.get(&id.thread, id.version).await? {
            Some(record) if head.version > id.version => Checkpoint::decode(&record.bytes).ok(),
            _ => None,
        };
        return Err(match older {
            Some(older) if older.run_id == id.run => {
                CheckpointError::Used(id.clone(), head.version)
            }
            _ => unknown(),
        });
    }
    let checkpoint = Checkpoint::decode(&head.bytes)?;
    if checkpoint.run_id != id.run {
        return Err(unknown());
    }
    match checkpoint.status {
        CheckpointStatus::Completed => return Err(CheckpointError::Ended(id.clone())),
        // Taking over a run that was running: the decisions it was resumed with hold.
        CheckpointStatus::Running | CheckpointStatus::Failed => {
            if let Some(extra) = decisions.keys().next() {
                return Err(CheckpointError::UnknownInterrupt(extra.clone()));
            }
        }
        _ => check_decisions(&checkpoint.interrupts, decisions)?,
    }
    Ok(checkpoint)
}

/// Each interrupt has exactly one decision, of a kind it takes.
fn check_decisions(
    interrupts: &[PendingInterrupt],
    decisions: &Decisions,
) -> Result<(), CheckpointError> {
    for interrupt in interrupts {
        let decision = decisions
            .get(&interrupt.id)
            .ok_or_else(|| CheckpointError::MissingDecision(interrupt.id.clone()))?;
        if interrupt.call.is_none() && matches!(decision, Decision::Edit { .. }) {
            return Err(CheckpointError::WrongDecision {
                id: interrupt.id.clone(),
                decision: decision.kind(),
            });
        }
    }
    match decisions
        .keys()
        .find(|id| interrupts.iter().all(|i| &i.id != *id))
    {
        Some(extra) => Err(CheckpointError::UnknownInterrupt(extra.clone())),
        None => Ok(()),
    }
}

/// Checks the edited arguments of the resumed calls against their tools, and puts them
/// in place of the model's in the history's last reply.
pub(super) fn apply_edits(
    durable: &Durable,
    agent: &str,
    config: &AgentConfig,
    messages: &mut Messages,
) -> Result<(), CheckpointError> {
    // An edit of a nested interrupt is the nested agent's to apply.
    let own = durable
        .answered
        .iter()
        .filter(|i| i.inner_id(agent).is_none());
    for interrupt in own {
        let (Some(call), Some(Decision::Edit { arguments })) =
            (&interrupt.call, durable.decisions.get(&interrupt.id))
        else {
            continue;
        };
        let invalid = |reason: String| CheckpointError::InvalidEdit {
            id: interrupt.id.clone(),
            reason,
        };
        if !arguments.is_object() {
            return Err(invalid("the arguments are not a JSON object".to_owned()));
        }
        #[cfg(feature = "validation")]
        if let Some(tool) = config.tool(&call.name) {
            tool.validate(arguments)
                .map_err(|e| invalid(e.message().to_owned()))?;
        }
        #[cfg(not(feature = "validation"))]
        let _ = config;
        let reply = messages.last_mut().and_then(Message::tool_calls_mut);
        let Some(edited) = reply.and_then(|calls| calls.iter_mut().find(|c| c.id == call.id))
        else {
            return Err(invalid(
                "the call is not in the run's last reply".to_owned(),
            ));
        };
        edited.arguments = arguments.to_string().into();
    }
    Ok(())
}

/// The history a completed run leaves to its thread: its own, without the instruction.
pub(super) fn thread_history(messages: &Messages, instructed: bool) -> Messages {
    match messages.first() {
        Some(Message::System { .. }) if instructed => messages[1..].iter().cloned().collect(),
        _ => messages.clone(),
    }
}

/// A conflict on a write means someone else took the thread over.
pub(super) fn is_conflict(error: &CheckpointError) -> bool {
    matches!(error, CheckpointError::Store(StoreError::Conflict { .. }))
}
