//! [`CassetteError`]: a cassette could not be read, written or matched; and
//! [`RecordedError`], a recorded failure served again.

use std::path::PathBuf;

/// A cassette could not be read, written or matched, or its mode could not be told.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// The file could not be read or written.
    #[error("cassette {}: {source}", path.display())]
    Io {
        /// The cassette's file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a cassette: cut short, not JSON, or not of this shape.
    #[error("cassette {} is corrupt: {source}", path.display())]
    Corrupt {
        /// The cassette's file.
        path: PathBuf,
        /// Where and why it does not parse (with its line and column).
        #[source]
        source: serde_json::Error,
    },
    /// The file was written by a version of the format this one does not read.
    #[error("cassette {} has version {found}; this version of tower-adk reads version {reads}", path.display())]
    UnsupportedVersion {
        /// The cassette's file.
        path: PathBuf,
        /// The version the file says.
        found: u32,
        /// The version this one reads.
        reads: u32,
    },
    /// A request differs from every recorded one that is left; `diff` is a unified diff
    /// of the recorded request (`-`) and this one (`+`), in their canonical JSON.
    #[error(
        "model call #{call} does not match the cassette {} (first difference at `{path}`):\n{diff}",
        cassette.display()
    )]
    Drift {
        /// The cassette's file.
        cassette: PathBuf,
        /// The call, counted from 1 on this replaying model.
        call: usize,
        /// The first field that differs, as a path (`messages[1].content`).
        path: String,
        /// The unified diff of the recorded request and this one.
        diff: String,
    },
    /// A call came after every recorded one had been served.
    #[error("model call #{call} has no recorded answer: the cassette {} holds {recorded} call(s)", cassette.display())]
    Exhausted {
        /// The cassette's file.
        cassette: PathBuf,
        /// The call, counted from 1 on this replaying model.
        call: usize,
        /// How many calls the cassette holds.
        recorded: usize,
    },
    /// `ADK_CASSETTE_MODE` holds something other than `record`, `replay` or `auto`.
    #[error("ADK_CASSETTE_MODE is {0:?}; expected `record`, `replay` or `auto`")]
    Mode(String),
    /// A pattern given to a [`Scrubber`](super::Scrubber) is not a valid regex.
    #[error("secret pattern {pattern:?} is not a valid regex: {reason}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// Why it does not compile.
        reason: String,
    },
    /// A request or an answer could not be put in JSON.
    #[error("a model call could not be recorded as JSON: {0}")]
    Json(#[source] serde_json::Error),
}

impl CassetteError {
    /// Whether a request drifted from the recorded one ([`CassetteError::Drift`]).
    pub fn is_drift(&self) -> bool {
        matches!(self, CassetteError::Drift { .. })
    }

    /// The `CassetteError` somewhere in an error's chain (a run's error wraps the model's).
    pub fn find<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a CassetteError> {
        let mut next = Some(error);
        while let Some(error) = next {
            if let Some(found) = error.downcast_ref::<CassetteError>() {
                return Some(found);
            }
            next = error.source();
        }
        None
    }
}

/// A failure that was recorded (the call failed, or its stream did) and is served again
/// by a replaying model: the original error's message, scrubbed. The original error's
/// type is not kept, so code that downcasts a provider's error sees this one instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RecordedError(pub String);
