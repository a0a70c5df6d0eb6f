//! [`CheckpointError`]: why a run could not start on its thread, or a checkpoint could
//! not be read or written.

use super::FORMAT;
use super::id::{CheckpointId, MalformedId};
use super::store::StoreError;

/// Why a run could not start on its thread, or a checkpoint could not be read or
/// written. A run refused before it started wrote nothing: the thread is as it was.
/// (Why a resume was refused is a [`ResumeError`](crate::agent::ResumeError).)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// No thread of this name that the caller may touch: it has no record, or it is
    /// another principal's (the two are told apart to no one).
    #[error("no thread `{0}`")]
    UnknownThread(String),
    /// Another run is running on the thread.
    #[error("another run is running on the thread `{0}`")]
    ThreadBusy(String),
    /// The thread's last run is interrupted: resume it (or delete the thread) first.
    #[error("the thread's last run waits for decisions: resume `{0}`")]
    ThreadInterrupted(CheckpointId),
    /// A record of a format version this version does not read.
    #[error("the record has format version {found}; this version reads 1 to {FORMAT}")]
    UnknownFormat {
        /// The record's format version.
        found: u32,
    },
    /// Bytes that are not a record.
    #[error("the record is corrupt: {0}")]
    Corrupt(String),
    /// A record that holds only what changed since an earlier record of its run (format
    /// 3, written after each turn of a durable run), given to
    /// [`Checkpoint::decode`](crate::agent::Checkpoint::decode), which has no store to
    /// read that one from: read it with [`Checkpoint::load`](crate::agent::Checkpoint::load).
    #[error(
        "the record holds what changed since version {version} of its thread: read it with `Checkpoint::load`"
    )]
    Continues {
        /// The version of the record it continues.
        version: u64,
    },
    /// A checkpoint id that is not `thread@version#run`.
    #[error("`{0}` is not a checkpoint id (thread@version#run)")]
    MalformedId(String),
    /// The store failed. When a run's checkpoint could not be written this way
    /// ([`StoreError::Backend`]), it was not: the thread is as the run's last written
    /// record left it.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A run's checkpoint was sent to the store but its answer never came
    /// ([`StoreError::OutcomeUnknown`]): it may have been written, now or later. Never
    /// retry the run on this error alone (its tools would run again); read the thread's
    /// head ([`Agent::last_checkpoint`](crate::Agent::last_checkpoint)) once the store
    /// answers again:
    ///
    /// - the head is the run's (`run`) [completed](crate::agent::CheckpointStatus::Completed)
    ///   record: the run succeeded, and its record holds the result;
    /// - the head is the run's interrupted record: the run stopped at its interrupts,
    ///   which wait there;
    /// - the head is the run's running record: the write landed but the run did not go
    ///   on; resuming that checkpoint with no decisions takes it over (or a new run on
    ///   the thread goes on once its [claim lease](crate::AgentBuilder::claim_lease)
    ///   ran out);
    /// - anything else: the write was not applied, and the thread is as it was.
    ///
    /// (Its code, `checkpoint_outcome_unknown`, says so on the wire.)
    #[error(
        "the checkpoint of run `{run}` on the thread `{thread}` may or may not have been written: {source}"
    )]
    OutcomeUnknown {
        /// The thread the run was writing to.
        thread: String,
        /// The id of the run whose record it was (the `run` of its
        /// [`CheckpointId`]).
        run: String,
        /// The store's error.
        #[source]
        source: StoreError,
    },
}

impl CheckpointError {
    /// A stable snake_case name for the kind of refusal, for logs and wire formats (see
    /// [`wire`](crate::wire)): `unknown_thread`, `thread_busy`, `thread_interrupted`,
    /// `unknown_format`, `corrupt_checkpoint`, `malformed_checkpoint_id`,
    /// `store_failed` (the store failed; a write that failed so was not applied), and
    /// `checkpoint_outcome_unknown` (a write whose answer never came: it may have been
    /// applied; see [`CheckpointError::OutcomeUnknown`]). A code never changes meaning;
    /// new variants bring new codes.
    ///
    /// ```
    /// use tower_adk::checkpoint::CheckpointError;
    ///
    /// assert_eq!(CheckpointError::ThreadBusy("t1".into()).code(), "thread_busy");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            CheckpointError::UnknownThread(_) => "unknown_thread",
            CheckpointError::ThreadBusy(_) => "thread_busy",
            CheckpointError::ThreadInterrupted(_) => "thread_interrupted",
            CheckpointError::UnknownFormat { .. } => "unknown_format",
            CheckpointError::Corrupt(_) => "corrupt_checkpoint",
            CheckpointError::Continues { .. } => "continued_checkpoint",
            CheckpointError::MalformedId(_) => "malformed_checkpoint_id",
            CheckpointError::Store(StoreError::OutcomeUnknown(_))
            | CheckpointError::OutcomeUnknown { .. } => "checkpoint_outcome_unknown",
            CheckpointError::Store(_) => "store_failed",
        }
    }

    /// Whether a write may have been applied though it failed
    /// ([`CheckpointError::OutcomeUnknown`], or a [`StoreError::OutcomeUnknown`]):
    /// read the thread's head before doing anything again.
    pub fn is_outcome_unknown(&self) -> bool {
        match self {
            CheckpointError::OutcomeUnknown { .. } => true,
            CheckpointError::Store(error) => error.is_outcome_unknown(),
            _ => false,
        }
    }
}

impl From<MalformedId> for CheckpointError {
    fn from(MalformedId(text): MalformedId) -> Self {
        CheckpointError::MalformedId(text)
    }
}
