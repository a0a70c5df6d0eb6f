//! [`CheckpointId`]: how a checkpoint is named, in its text form `thread@version#run`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

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
/// # Ok::<_, tower_adk::checkpoint::MalformedId>(())
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
    type Err = MalformedId;

    fn from_str(text: &str) -> Result<Self, MalformedId> {
        let malformed = || MalformedId(text.to_owned());
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

/// Text that is not a checkpoint id (`thread@version#run`). As a
/// [`CheckpointError`](super::CheckpointError) it is
/// [`MalformedId`](super::CheckpointError::MalformedId).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a checkpoint id (thread@version#run)")]
pub struct MalformedId(pub String);
