//! What a checkpoint holds ([`Checkpoint`]), how it is written and read (JSON with a
//! format version), and how it is named ([`CheckpointId`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::CheckpointError;
use crate::interrupt::{Decisions, PendingInterrupt};
use crate::{Messages, Run};

/// The format of the records this version writes; [`Checkpoint::decode`] refuses others.
pub const FORMAT: u32 = 1;

/// The name of one checkpoint: its thread, its version there, and the run that wrote it.
///
/// Its text form, `thread@version#run` (what [`Display`](fmt::Display) writes and
/// [`FromStr`] reads), is what a person or another process passes around.
///
/// ```
/// use tower_adk::checkpoint::CheckpointId;
///
/// let id: CheckpointId = "support/42@3#2f1c".parse()?;
/// assert_eq!((id.thread.as_str(), id.version, id.run.as_str()), ("support/42", 3, "2f1c"));
/// assert_eq!(id.to_string(), "support/42@3#2f1c");
/// # Ok::<_, tower_adk::checkpoint::CheckpointError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckpointId {
    /// The thread the checkpoint is on.
    pub thread: String,
    /// Its version in the thread.
    pub version: u64,
    /// The id of the run that wrote it (so a checkpoint of a deleted thread never names
    /// a record of a new one).
    pub run: String,
}

impl fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}#{}", self.thread, self.version, self.run)
    }
}

impl FromStr for CheckpointId {
    type Err = CheckpointError;

    fn from_str(text: &str) -> Result<Self, CheckpointError> {
        let malformed = || CheckpointError::MalformedId(text.to_owned());
        let (rest, run) = text.rsplit_once('#').ok_or_else(malformed)?;
        let (thread, version) = rest.rsplit_once('@').ok_or_else(malformed)?;
        let version = version.parse().map_err(|_| malformed())?;
        Ok(CheckpointId {
            thread: thread.to_owned(),
            version,
            run: run.to_owned(),
        })
    }
}

/// Where a run stood when its checkpoint was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CheckpointStatus {
    /// Running: written when the run started or finished a turn. A new run on the
    /// thread is refused; resuming this checkpoint takes the run over (after a crash).
    Running,
    /// Waiting for decisions on its interrupts.
    Interrupted,
    /// Ended: the next run on the thread starts from its history.
    Completed,
    /// Failed: the next run on the thread starts from the history before it.
    Failed,
}

/// One record of a thread: a run's state at a point, with what resuming it needs.
///
/// Written as JSON with the [format version](FORMAT) first: `{"format": 1, ...}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Checkpoint {
    /// The format version of the record.
    pub format: u32,
    /// The id of the run.
    pub run_id: String,
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
}

impl Checkpoint {
    /// The record as bytes.
    pub fn encode(&self) -> Result<Vec<u8>, CheckpointError> {
        serde_json::to_vec(self).map_err(|e| CheckpointError::Corrupt(e.to_string()))
    }

    /// A record read back.
    ///
    /// # Errors
    ///
    /// [`CheckpointError::UnknownFormat`] for a record of another format version,
    /// [`CheckpointError::Corrupt`] for bytes that are not a record.
    pub fn decode(bytes: &[u8]) -> Result<Self, CheckpointError> {
        #[derive(Deserialize)]
        struct Format {
            format: u32,
        }
        let corrupt = |e: serde_json::Error| CheckpointError::Corrupt(e.to_string());
        let Format { format } = serde_json::from_slice(bytes).map_err(corrupt)?;
        if format != FORMAT {
            return Err(CheckpointError::UnknownFormat { found: format });
        }
        serde_json::from_slice(bytes).map_err(corrupt)
    }
}
