//! [`Checkpoint`]: one record of a thread, a run's state at a point with what resuming it
//! needs; and where the run stood ([`CheckpointStatus`]). Written as JSON with the
//! [format version](crate::checkpoint::FORMAT) first, into the agent's
//! [`CheckpointStore`](crate::checkpoint::CheckpointStore).

use serde::{Deserialize, Serialize};

use crate::auth::{Decided, Principal};
use crate::checkpoint::{CheckpointError, FORMAT};
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
/// no audit trail.
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

    /// A record read back.
    ///
    /// # Errors
    ///
    /// [`CheckpointError::UnknownFormat`] for a record of a format version this version
    /// does not read (it reads 1 and [`FORMAT`]),
    /// [`CheckpointError::Corrupt`] for bytes that are not a record.
    pub fn decode(bytes: &[u8]) -> Result<Self, CheckpointError> {
        #[derive(Deserialize)]
        struct Format {
            format: u32,
        }
        let corrupt = |e: serde_json::Error| CheckpointError::Corrupt(e.to_string());
        let Format { format } = serde_json::from_slice(bytes).map_err(corrupt)?;
        if !(1..=FORMAT).contains(&format) {
            return Err(CheckpointError::UnknownFormat { found: format });
        }
        serde_json::from_slice(bytes).map_err(corrupt)
    }
}
