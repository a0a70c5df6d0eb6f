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
    /// A checkpoint id that is not `thread@version#run`.
    #[error("`{0}` is not a checkpoint id (thread@version#run)")]
    MalformedId(String),
    /// The store failed. When a run's checkpoint could not be written this way
    /// ([`StoreError::Backend`]), it was not: the thread is as the run's last written
    /// record left it.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl CheckpointError {
    /// A stable snake_case name for the kind of refusal, for logs and wire formats (see
    /// [`wire`](crate::wire)): `unknown_thread`, `thread_busy`, `thread_interrupted`,
    /// `unknown_format`, `corrupt_checkpoint`, `malformed_checkpoint_id`,
    /// `store_failed` (the store failed; a write that failed so was not applied), and
    /// `checkpoint_outcome_unknown` (a write whose answer never came: it may have been
    /// applied; see [`StoreError::OutcomeUnknown`]). A code never changes meaning; new
    /// variants bring new codes.
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
            CheckpointError::MalformedId(_) => "malformed_checkpoint_id",
            CheckpointError::Store(StoreError::OutcomeUnknown(_)) => "checkpoint_outcome_unknown",
            CheckpointError::Store(_) => "store_failed",
        }
    }

    /// Whether a write may have been applied though it failed (a
    /// [`StoreError::OutcomeUnknown`]): read the thread's head before doing anything
    /// again.
    pub fn is_outcome_unknown(&self) -> bool {
        matches!(self, CheckpointError::Store(error) if error.is_outcome_unknown())
    }
}

impl From<MalformedId> for CheckpointError {
    fn from(MalformedId(text): MalformedId) -> Self {
        CheckpointError::MalformedId(text)
    }
}
