//! A run's durable side, [`Durable`]: its thread in the agent's checkpoint store, the
//! records it writes there (when it claims the thread, after a turn, when it ends or
//! stops at interrupts), its claim's lease, and the write that frees the thread of a run
//! that was dropped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde::Serialize;

use super::chain::Chain;
use super::checkpoint::{Checkpoint, CheckpointStatus, Continues};
use super::error::{AgentError, ResumeError};
use super::resume::{Plan, TakenUp};
use super::run::Run;
use super::shared::Released;
use crate::auth::{Action, Asker, Decided, Principal};
use crate::checkpoint::{CheckpointError, CheckpointId, CheckpointStore, FORMAT, StoreError};
use crate::context::Locals;
use crate::interrupt::{Decisions, PendingInterrupt};
use crate::message::{Message, Messages};
use crate::model::UsageTotals;
use crate::telemetry::metrics;

/// The format of a record that holds everything: its run whole, and the thread's
/// history before it (format 3 holds only what changed since an earlier record).
const WHOLE: u32 = 2;

/// The durable side of a run: its thread, where the thread's head is, and the
/// interrupts it raised or resumes from. (Boxed in the loop: most runs have none.)
pub(super) struct Durable {
    store: Arc<dyn CheckpointStore>,
    thread: String,
    /// The version of the thread's head: what the next write expects.
    head: Option<u64>,
    run_id: Arc<str>,
    /// The thread's history before this run, without an instruction; after it, once the
    /// run completed.
    base: Messages,
    /// Whether the thread's head is this run's own record.
    claimed: bool,
    /// Whether the run wrote its last record (completed, interrupted or failed): the
    /// thread is free.
    ended: bool,
    /// A checkpoint is due at the next step (a durable run finished a turn).
    due: bool,
    /// The interrupts this run raised, waiting.
    raised: Vec<PendingInterrupt>,
    /// The decisions this run was resumed with, and the interrupts they answer.
    resumed: Plan,
    /// The checkpoint this run wrote last (or, until it claims its thread, the one it
    /// resumes).
    last: Option<CheckpointId>,
    /// The principal the thread belongs to.
    owner: Principal,
    /// The thread's audit trail: every decision made on its runs.
    audit: Vec<Decided>,
    /// What the thread's runs before this one used.
    earlier_usage: UsageTotals,
    /// How long the run's claim on the thread holds without news of it.
    lease: Duration,
    /// When the run last wrote its record as running: its claim holds a lease from then.
    renewed: Option<Instant>,
    /// What the run's last record holds, while the next one may continue it.
    chain: Option<Box<Chain>>,
}

/// A record as it is written: [`Checkpoint`]'s fields, borrowed; the run whole (`R` is
/// `&Run`), or only what changed since the record it continues (a `RunTail`, without
/// the base, which a run does not change while it runs).
#[derive(Serialize)]
struct RecordRef<'a, R> {
    format: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    continues: Option<Continues>,
    run_id: &'a str,
    owner: &'a Principal,
    status: CheckpointStatus,
    run: R,
    #[serde(skip_serializing_if = "Option::is_none")]
    base: Option<&'a Messages>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    interrupts: &'a [PendingInterrupt],
    #[serde(skip_serializing_if = "Option::is_none")]
    decisions: Option<&'a Decisions>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    audit: &'a [Decided],
    #[serde(skip_serializing_if = "unused")]
    earlier_usage: &'a UsageTotals,
    #[serde(skip_serializing_if = "Option::is_none")]
    claimed_until: Option<jiff::Timestamp>,
}

fn unused(usage: &&UsageTotals) -> bool {
    usage.calls == 0
}

impl Durable {
    /// A run on `thread` of `owner`, whose head is at `head`, with the thread's history
    /// before it; its claims hold for `lease`.
    pub(super) fn new(
        store: Arc<dyn CheckpointStore>,
        lease: Duration,
        thread: String,
        owner: Principal,
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
            due: false,
            raised: Vec::new(),
            resumed: Plan::default(),
            last: None,
            owner,
            audit: Vec::new(),
            earlier_usage: UsageTotals::default(),
            lease,
            renewed: None,
            chain: None,
        }
    }

    /// A run resumed from the checkpoint it was taken up from: it takes the thread over
    /// from that record, writes the decisions with its checkpoints, and carries the
    /// thread's audit trail on.
    pub(super) fn resumed(
        store: Arc<dyn CheckpointStore>,
        lease: Duration,
        taken: TakenUp,
    ) -> Self {
        let TakenUp {
            id,
            run_id,
            base,
            plan,
            owner,
            audit,
            earlier_usage,
        } = taken;
        let thread = id.thread.clone();
        let head = Some(id.version);
        let mut durable = Durable::new(store, lease, thread, owner, head, run_id, base);
        durable.resumed = plan;
        durable.last = Some(id);
        durable.audit = audit;
        durable.earlier_usage = earlier_usage;
        durable
    }

    /// A new run on `thread`, if the caller may run on it: reads the thread's head, for
    /// the history to start from, the thread's values (see
    /// [`RunContext::thread_values`](crate::context::RunContext::thread_values)) as the
    /// last run left them, its owner and its audit trail. A thread with no record
    /// becomes the caller's.
    ///
    /// # Errors
    ///
    /// [`CheckpointError::UnknownThread`] when the agent's
    /// [`Authorize`](crate::auth::Authorize) does not let the caller run on the thread,
    /// [`CheckpointError::ThreadBusy`] when a run is running on it (its claim has not
    /// run out), [`CheckpointError::ThreadInterrupted`] when its last run waits for
    /// decisions.
    pub(super) async fn on_thread(
        store: Arc<dyn CheckpointStore>,
        lease: Duration,
        thread: String,
        run_id: Arc<str>,
        asker: &Asker<'_>,
    ) -> Result<(Durable, Locals), CheckpointError> {
        let Some(head) = store.head(&thread).await? else {
            if !asker.allows(Action::Run, &thread, None, &[]).await {
                return Err(CheckpointError::UnknownThread(thread));
            }
            let (owner, base) = (asker.caller.clone(), Messages::new());
            let durable = Durable::new(store, lease, thread, owner, None, run_id, base);
            return Ok((durable, Locals::default()));
        };
        let checkpoint = Checkpoint::load(&*store, &thread, &head).await?;
        let (owner, waiting) = (Some(&checkpoint.owner), &checkpoint.interrupts);
        if !asker.allows(Action::Run, &thread, owner, waiting).await {
            return Err(CheckpointError::UnknownThread(thread));
        }
        match checkpoint.status {
            CheckpointStatus::Running if checkpoint.holds_thread(jiff::Timestamp::now()) => {
                Err(CheckpointError::ThreadBusy(thread))
            }
            CheckpointStatus::Interrupted => {
                Err(CheckpointError::ThreadInterrupted(CheckpointId {
                    thread,
                    version: head.version,
                    run: checkpoint.run_id,
                }))
            }
            // Ended, or running with a claim that ran out: the run that wrote it is gone.
            _ => {
                let values = checkpoint.run.context().thread_values().clone();
                let earlier_usage = checkpoint.thread_usage();
                let (owner, base, head) = (checkpoint.owner, checkpoint.base, Some(head.version));
                let mut durable = Durable::new(store, lease, thread, owner, head, run_id, base);
                durable.audit = checkpoint.audit;
                durable.earlier_usage = earlier_usage;
                Ok((durable, values))
            }
        }
    }

    /// The thread's history before this run, without an instruction.
    pub(super) fn base(&self) -> &Messages {
        &self.base
    }

    /// The decisions the run was resumed with.
    pub(super) fn resumed_with(&self) -> &Plan {
        &self.resumed
    }

    /// Claims the thread for this run: writes the run as the thread's head, if no one
    /// else wrote there since the run read it. A run that takes over a running
    /// checkpoint goes on over the failed mark that the checkpoint's own run wrote on
    /// top of it (see [`Durable::marked_failed`]).
    ///
    /// # Errors
    ///
    /// [`CheckpointError::ThreadBusy`] when another run wrote to the thread, or
    /// [`ResumeError::Used`] when the checkpoint this run resumes was resumed first.
    pub(super) fn claim<'a>(&'a mut self, run: &'a Run) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            let resumes = self.last.take();
            let mut claimed = self.write_now(CheckpointStatus::Running, run).await;
            if let Err(CheckpointError::Store(StoreError::Conflict { found, .. })) = &claimed
                && resumes.is_some()
                && self.marked_failed(*found).await
            {
                self.head = *found;
                claimed = self.write_now(CheckpointStatus::Running, run).await;
            }
            claimed.map(drop).map_err(|error| match (error, resumes) {
                (CheckpointError::Store(StoreError::Conflict { found, .. }), Some(id)) => {
                    ResumeError::Used(id, found.unwrap_or_default()).into()
                }
                (CheckpointError::Store(StoreError::Conflict { .. }), None) => {
                    CheckpointError::ThreadBusy(self.thread.clone()).into()
                }
                (error, _) => error.into(),
            })
        })
    }

    /// Makes a checkpoint due at the next step, or not.
    pub(super) fn set_due(&mut self, due: bool) {
        self.due = due;
    }

    /// Writes the run as running, if a checkpoint is due.
    ///
    /// # Errors
    ///
    /// The store's; a [`StoreError::Conflict`] when someone took the thread over.
    pub(super) async fn save_if_due(&mut self, run: &Run) -> Result<(), CheckpointError> {
        if std::mem::take(&mut self.due) {
            self.write(CheckpointStatus::Running, run).await?;
        }
        Ok(())
    }

    /// Keeps an interrupt the run raised; it waits in the run's last checkpoint.
    pub(super) fn raise(&mut self, interrupts: impl IntoIterator<Item = PendingInterrupt>) {
        self.raised.extend(interrupts);
    }

    /// Whether the run raised interrupts: it stops at them.
    pub(super) fn is_interrupted(&self) -> bool {
        !self.raised.is_empty()
    }

    /// Writes the run, stopped at its interrupts, as the thread's head; gives the
    /// checkpoint and the interrupts that wait there.
    ///
    /// # Errors
    ///
    /// The store's.
    pub(super) async fn stop(
        &mut self,
        run: &Run,
    ) -> Result<(CheckpointId, Vec<PendingInterrupt>), CheckpointError> {
        let id = self.write(CheckpointStatus::Interrupted, run).await?;
        Ok((id, self.raised.clone()))
    }

    /// Writes the completed run as the thread's head: the thread goes on from its
    /// history, which the record keeps once, as the base of the next run. Gives the
    /// checkpoint.
    ///
    /// # Errors
    ///
    /// The store's; the thread's history is then the one before the run, which a
    /// failed mark leaves to the next run.
    pub(super) async fn complete(
        &mut self,
        run: &mut Run,
        instructed: bool,
    ) -> Result<CheckpointId, CheckpointError> {
        let after = thread_history(&run.history().messages, instructed);
        let before = std::mem::replace(&mut self.base, after);
        let messages = std::mem::take(&mut run.history_mut().messages);
        let written = self.write(CheckpointStatus::Completed, run).await;
        run.history_mut().messages = messages;
        if written.is_err() {
            self.base = before;
        }
        written
    }

    /// Writes what a failed run leaves to its thread (the thread's history before it,
    /// and the run as it was, which a resume can take over), unless the thread is not
    /// the run's: it never claimed it, it ended, or (a conflict) someone took it over.
    /// When the run failed because the store did, the run's error does not wait for a
    /// second write (and a second bound of the store): the write is left to the run's
    /// [release](Durable::release), in the background, and frees the thread if the store
    /// answers again within its bound (else the run's claim runs out, or a resume takes
    /// it over; a late mark never lands over another writer, and a takeover goes on over
    /// it). Best effort: the run's own error is the one to report.
    pub(super) async fn fail(&mut self, run: &Run, error: &AgentError) {
        if !self.claimed || self.ended {
            return;
        }
        let AgentError::Checkpoint(error) = error else {
            let _ = self.write(CheckpointStatus::Failed, run).await;
            return;
        };
        match **error {
            // Someone else holds the thread now: it is not this run's to free.
            CheckpointError::Store(StoreError::Conflict { .. }) => self.ended = true,
            // The store's failure: the release writes the mark, in the background.
            CheckpointError::Store(_) | CheckpointError::OutcomeUnknown { .. } => {}
            _ => {
                let _ = self.write(CheckpointStatus::Failed, run).await;
            }
        }
    }

    /// Whether the run's claim is due for renewal: it has held it for half its lease.
    pub(super) fn claim_aging(&self) -> bool {
        self.claimed
            && !self.ended
            && self
                .renewed
                .is_some_and(|at| at.elapsed() >= self.lease / 2)
    }

    /// Whether the thread's head is at `version` and is the failed mark of this run,
    /// written right on top of the running record this run takes over: the run that
    /// wrote that record failed or was dropped, and wrote the mark after this run read
    /// the record (a release lands seconds later on a slow store). No other writer
    /// writes so: a run that takes over a record claims it running first.
    async fn marked_failed(&self, version: Option<u64>) -> bool {
        let (Some(version), Some(taken)) = (version, self.head) else {
            return false;
        };
        if taken.checked_add(1) != Some(version) {
            return false;
        }
        let Ok(Some(head)) = self.store.head(&self.thread).await else {
            return false;
        };
        let Ok(mark) = Checkpoint::decode(&head.bytes) else {
            return false;
        };
        head.version == version
            && mark.status == CheckpointStatus::Failed
            && *mark.run_id == *self.run_id
    }

    /// Frees the thread of a run that was dropped while it held it, or that failed
    /// because the store did: writes the run as failed (the next run on the thread goes
    /// on from the history before it; resuming the record takes the run over), on a task
    /// of the runtime the run was dropped in, within the store's bound; the task gives
    /// the checkpoint it wrote. Without a runtime, or when the store does not answer,
    /// the thread stays claimed until the claim runs out or its last checkpoint is
    /// resumed or deleted.
    pub(super) fn release(mut self: Box<Self>, run: &Run) -> Option<Released> {
        if !self.claimed || self.ended {
            return None;
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let run = run.clone();
        Some(runtime.spawn(async move {
            // A conflict means someone took the thread over already: nothing to free.
            self.write(CheckpointStatus::Failed, &run).await.ok()
        }))
    }

    /// Writes the run as the thread's new head.
    ///
    /// # Errors
    ///
    /// The store's, a [`StoreError::Conflict`] when someone else wrote to the thread
    /// since this run read or wrote its head.
    /// (Boxed: the runs that write pay for the room its future takes, not every run.)
    fn write<'a>(
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
        let now = Instant::now();
        let claimed_until = match status {
            CheckpointStatus::Running => jiff::Timestamp::now().checked_add(self.lease).ok(),
            _ => None,
        };
        let chain = self
            .chain
            .take()
            .filter(|chain| self.head == Some(chain.version()));
        let continues = match status {
            CheckpointStatus::Running => chain.as_ref().and_then(|chain| chain.continued_by(run)),
            _ => None,
        };
        let tail = continues.and_then(|c| Some((c, run.tail(c.messages, c.records)?)));
        let continued = tail.is_some();
        let bytes = match tail {
            Some((c, tail)) => {
                serde_json::to_vec(&self.record(status, tail, Some(c), claimed_until))
            }
            None => serde_json::to_vec(&self.record(status, run, None, claimed_until)),
        };
        let bytes = bytes.map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
        let (thread, owner) = (&self.thread, self.owner.subject());
        let appended = self
            .store
            .append_owned(thread, owner, self.head, bytes)
            .await;
        metrics::checkpoint_written(
            self.store.kind(),
            status.as_str(),
            now.elapsed(),
            appended.is_ok(),
        );
        let version = appended.map_err(|error| self.unwritten(error))?;
        if status == CheckpointStatus::Running {
            self.chain = Some(Chain::after(chain, continued, run, version));
        }
        self.head = Some(version);
        self.claimed = true;
        self.renewed = Some(now);
        self.ended = status != CheckpointStatus::Running;
        let id = CheckpointId {
            thread: self.thread.clone(),
            version,
            run: self.run_id.to_string(),
        };
        self.last = Some(id.clone());
        Ok(id)
    }

    /// The record of the run at `status`: whole, or continuing an earlier record of the
    /// run (`continues`, with `run` a tail of the run, and no base).
    fn record<R>(
        &self,
        status: CheckpointStatus,
        run: R,
        continues: Option<Continues>,
        claimed_until: Option<jiff::Timestamp>,
    ) -> RecordRef<'_, R> {
        let (interrupts, decisions) = match status {
            CheckpointStatus::Interrupted => (&self.raised[..], None),
            CheckpointStatus::Running => (
                &self.resumed.answered[..],
                Some(&self.resumed.decisions).filter(|d| !d.is_empty()),
            ),
            _ => (&[][..], None),
        };
        RecordRef {
            format: if continues.is_some() { FORMAT } else { WHOLE },
            continues,
            run_id: &self.run_id,
            owner: &self.owner,
            status,
            run,
            base: continues.is_none().then_some(&self.base),
            interrupts,
            decisions,
            audit: &self.audit,
            earlier_usage: &self.earlier_usage,
            claimed_until,
        }
    }

    /// The error of a write of this run's record that failed: one whose answer never
    /// came names the thread and the run, so that the caller can read the thread's head
    /// to know (see [`CheckpointError::OutcomeUnknown`]).
    fn unwritten(&self, error: StoreError) -> CheckpointError {
        if error.is_outcome_unknown() {
            CheckpointError::OutcomeUnknown {
                thread: self.thread.clone(),
                run: self.run_id.to_string(),
                source: error,
            }
        } else {
            error.into()
        }
    }
}

/// The history a completed run leaves to its thread: its own, without the instruction.
fn thread_history(messages: &Messages, instructed: bool) -> Messages {
    match messages.first() {
        Some(Message::System { .. }) if instructed => messages[1..].iter().cloned().collect(),
        _ => messages.clone(),
    }
}
