//! [`Checkpoint`]: one record of a thread, a run's state at a point with what resuming it
//! needs; and where the run stood ([`CheckpointStatus`]). Written as JSON with the
//! [format version](crate::checkpoint::FORMAT) first, into the agent's
//! [`CheckpointStore`](crate::checkpoint::CheckpointStore).

use serde::{Deserialize, Serialize};

use crate::auth::{Decided, Principal};
use crate::checkpoint::{CheckpointError, CheckpointStore, FORMAT, StoredRecord};
use crate::interrupt::{Decisions, PendingInterrupt};
use crate::message::Messages;
use crate::model::UsageTotals;

use super::run::Run;

/// Where a run stood when its checkpoint was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CheckpointStatus {
    /// Running: written when the run started or finished a turn. A new run on the
    /// thread is refused until the run's claim runs out
    /// ([`Checkpoint::claimed_until`]); resuming this checkpoint takes the run over
    /// (after a crash) at any time.
    Running,
    /// Waiting for decisions on its interrupts.
    Interrupted,
    /// Ended: the next run on the thread starts from its history.
    Completed,
    /// Failed: the next run on the thread starts from the history before it.
    Failed,
}

impl CheckpointStatus {
    /// Its name, as it is written (`running`, `interrupted`, `completed`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointStatus::Running => "running",
            CheckpointStatus::Interrupted => "interrupted",
            CheckpointStatus::Completed => "completed",
            CheckpointStatus::Failed => "failed",
        }
    }
}

/// One record of a thread: a run's state at a point, with what resuming it needs.
///
/// Written as JSON with the [format version](FORMAT) first: `{"format": 2, ...}`.
/// Records of format 1 are read too: they have no owner (see [`Checkpoint::owner`]) and
/// no audit trail. A record of format 3 holds only what changed since an earlier record
/// of its run (the turns since): [`Checkpoint::load`] reads it, with the records it
/// continues, through the store.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Checkpoint {
    /// The format version of the record.
    pub format: u32,
    /// The id of the run.
    pub run_id: String,
    /// The principal the thread belongs to: the one whose run created it. A record of
    /// format 1, written before owners were recorded, is the
    /// [anonymous](Principal::anonymous) principal's.
    #[serde(default)]
    pub owner: Principal,
    /// Where the run stood.
    pub status: CheckpointStatus,
    /// The run's state.
    pub run: Run,
    /// The thread's history for the next run: before this run while it runs, is
    /// interrupted or failed; after it once it completed. (Without the instruction:
    /// each run puts its own first.)
    #[serde(default)]
    pub base: Messages,
    /// The interrupts that wait for decisions (when interrupted), or that were answered
    /// (when the resumed run is running).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interrupts: Vec<PendingInterrupt>,
    /// The decisions the running run was resumed with, so that taking it over after a
    /// crash applies the same ones.
    #[serde(default, skip_serializing_if = "Decisions::is_empty")]
    pub decisions: Decisions,
    /// Every decision made on the thread's runs, oldest first, with who made it and when:
    /// the thread's audit trail, which each record carries on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit: Vec<Decided>,
    /// What the thread's runs before this one used (this run's own usage is in
    /// [`run`](Self::run)); see [`thread_usage`](Self::thread_usage).
    #[serde(default)]
    pub earlier_usage: UsageTotals,
    /// Until when a running record holds its thread: its run's claim, which the run
    /// renews as it goes (see [`AgentBuilder::claim_lease`](crate::AgentBuilder::claim_lease)).
    /// A new run on the thread is refused until then and goes on after it, from
    /// [`base`](Checkpoint::base), as after a failed run: the run that wrote it is
    /// taken for gone. `None` in records of other statuses, and in running records of
    /// earlier versions, which hold their thread until it is resumed or deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_until: Option<jiff::Timestamp>,
}

impl Checkpoint {
    /// What the thread's runs used, up to this record: the earlier runs' and this one's
    /// so far.
    pub fn thread_usage(&self) -> UsageTotals {
        let mut usage = self.earlier_usage.clone();
        usage.merge(self.run.usage());
        usage
    }

    /// Whether the record holds its thread at `now`: it is running, and its claim has
    /// not run out ([`Checkpoint::claimed_until`]). A new run on the thread is refused
    /// while it does.
    pub fn holds_thread(&self, now: jiff::Timestamp) -> bool {
        self.status == CheckpointStatus::Running
            && self.claimed_until.is_none_or(|until| now < until)
    }

    /// The record as bytes.
    pub fn encode(&self) -> Result<Vec<u8>, CheckpointError> {
        serde_json::to_vec(self).map_err(|e| CheckpointError::Corrupt(e.to_string()))
    }

    /// A record read back, from its bytes alone.
    ///
    /// # Errors
    ///
    /// [`CheckpointError::UnknownFormat`] for a record of a format version this version
    /// does not read (it reads 1 to [`FORMAT`]),
    /// [`CheckpointError::Continues`] for a record that holds only what changed since
    /// an earlier one (read it with [`Checkpoint::load`]),
    /// [`CheckpointError::Corrupt`] for bytes that are not a record.
    pub fn decode(bytes: &[u8]) -> Result<Self, CheckpointError> {
        match decode_part(bytes)? {
            (checkpoint, None) => Ok(checkpoint),
            (_, Some(continues)) => Err(CheckpointError::Continues {
                version: continues.version,
            }),
        }
    }

    /// A record of `thread` read back, with the earlier records it continues (read from
    /// `store`) when it holds only what changed since them.
    ///
    /// ```
    /// use tower_adk::agent::Checkpoint;
    /// use tower_adk::checkpoint::{CheckpointStore, MemoryStore};
    /// use tower_adk::testing::{ScriptedModel, Turn};
    /// use tower_adk::{Agent, AgentRequest, Message};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = MemoryStore::new();
    /// let model = ScriptedModel::new([Turn::text("hello")]);
    /// let agent = Agent::builder(model).checkpoints(store.clone()).build()?;
    /// let request = AgentRequest::new(vec![Message::user("hi")]).on_thread("t1");
    /// agent.run(request).await?;
    ///
    /// let head = store.head("t1").await?.expect("the run wrote its thread");
    /// let checkpoint = Checkpoint::load(&store, "t1", &head).await?;
    /// assert_eq!(checkpoint.base.len(), 2); // the question and the answer
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`decode`](Checkpoint::decode)'s, but for [`CheckpointError::Continues`];
    /// the store's; [`CheckpointError::Corrupt`] when a record it continues is gone
    /// (it expired) or does not fit it.
    pub async fn load<S: CheckpointStore + ?Sized>(
        store: &S,
        thread: &str,
        record: &StoredRecord,
    ) -> Result<Self, CheckpointError> {
        let (mut checkpoint, mut continues) = decode_part(&record.bytes)?;
        let mut version = record.version;
        let mut later = Vec::new();
        while let Some(link) = continues {
            if link.version >= version || later.len() >= MAX_CHAIN {
                return Err(broken(thread, version, link.version));
            }
            let earlier = store.get(thread, link.version).await?;
            let earlier = earlier.ok_or_else(|| broken(thread, version, link.version))?;
            later.push((checkpoint, link));
            (checkpoint, continues) = decode_part(&earlier.bytes)?;
            version = link.version;
        }
        while let Some((mut next, link)) = later.pop() {
            if !next
                .run
                .continue_from(checkpoint.run, link.messages, link.records)
            {
                return Err(broken(thread, version, link.version));
            }
            next.base = checkpoint.base;
            checkpoint = next;
        }
        Ok(checkpoint)
    }
}

/// How many records a record may continue, one after the other: a durable run writes a
/// whole record again after this many that continue one.
pub(crate) const MAX_CHAIN: usize = 32;

/// Where a record that holds only what changed since an earlier record of its run (format
/// 3) continues: that record's version, and how many of its messages and tool records
/// (of the turns before the one in progress) come before this record's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Continues {
    pub(crate) version: u64,
    pub(crate) messages: usize,
    pub(crate) records: usize,
}

/// A record's fields, and where it continues an earlier one if it does.
fn decode_part(bytes: &[u8]) -> Result<(Checkpoint, Option<Continues>), CheckpointError> {
    #[derive(Deserialize)]
    struct Header {
        format: u32,
        #[serde(default)]
        continues: Option<Continues>,
    }
    let corrupt = |e: serde_json::Error| CheckpointError::Corrupt(e.to_string());
    let Header { format, continues } = serde_json::from_slice(bytes).map_err(corrupt)?;
    if !(1..=FORMAT).contains(&format) {
        return Err(CheckpointError::UnknownFormat { found: format });
    }
    if (format == FORMAT) != continues.is_some() {
        return Err(CheckpointError::Corrupt(format!(
            "a record of format {format} {} continue another",
            if continues.is_some() {
                "does not"
            } else {
                "must"
            }
        )));
    }
    let checkpoint = serde_json::from_slice(bytes).map_err(corrupt)?;
    Ok((checkpoint, continues))
}

/// The error of a record at `version` that continues one at `earlier` that is gone or
/// does not fit it.
fn broken(thread: &str, version: u64, earlier: u64) -> CheckpointError {
    CheckpointError::Corrupt(format!(
        "the record at version {version} of the thread `{thread}` continues the one at \
         version {earlier}, which is gone (it expired) or does not fit it"
    ))
}
