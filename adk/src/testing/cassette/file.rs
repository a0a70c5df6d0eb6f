//! The cassette file: its serde form, read with typed errors and written atomically.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::CassetteError;
use super::scrub::Scrubber;
use crate::content::{Part, Reasoning};
use crate::model::Usage;

/// The version of the format written, and the only one read.
pub(crate) const VERSION: u32 = 1;

/// A whole cassette: the calls in the order they were made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CassetteFile {
    pub(crate) version: u32,
    pub(crate) interactions: Vec<Interaction>,
}

/// One model call: its canonical request and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Interaction {
    pub(crate) request: Value,
    #[serde(flatten)]
    pub(crate) outcome: Outcome,
}

/// What a call gave: an answer, or an error before any answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    Response(Answer),
    Error(String),
}

/// An answer's pieces, in the order they came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Answer {
    /// Whether it streamed; a whole answer is replayed whole.
    pub(crate) streamed: bool,
    pub(crate) pieces: Vec<Piece>,
    pub(crate) end: End,
}

/// How an answer's stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum End {
    /// It ran to its end.
    Done,
    /// Its last piece is the error it failed with.
    Error,
    /// The caller dropped it before its end.
    Dropped,
}

/// One piece of a streamed answer: a [`ModelDelta`](crate::model::ModelDelta), or the
/// error the stream failed with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Piece {
    Text {
        text: String,
    },
    Reasoning(Reasoning),
    ToolCall {
        index: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        arguments: String,
    },
    Part {
        part: Part,
    },
    Usage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        usage: Usage,
    },
    Error {
        message: String,
    },
}

impl CassetteFile {
    /// Reads a cassette.
    pub(crate) fn load(path: &Path) -> Result<CassetteFile, CassetteError> {
        let text = std::fs::read_to_string(path).map_err(|source| CassetteError::Io {
            path: path.to_owned(),
            source,
        })?;
        let file: CassetteFile =
            serde_json::from_str(&text).map_err(|source| CassetteError::Corrupt {
                path: path.to_owned(),
                source,
            })?;
        if file.version != VERSION {
            return Err(CassetteError::UnsupportedVersion {
                path: path.to_owned(),
                found: file.version,
                reads: VERSION,
            });
        }
        Ok(file)
    }

    /// Writes the cassette, scrubbed, whole or not at all: to a temporary file in the
    /// same folder, synced, then renamed over `path`.
    pub(crate) fn save(&self, path: &Path, scrubber: &Scrubber) -> Result<(), CassetteError> {
        let mut value = serde_json::to_value(self).map_err(CassetteError::Json)?;
        scrubber.scrub_value(&mut value);
        let mut text = serde_json::to_string_pretty(&value).map_err(CassetteError::Json)?;
        text.push('\n');
        let io = |source| CassetteError::Io {
            path: path.to_owned(),
            source,
        };
        let folder = match path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder.to_owned(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&folder).map_err(io)?;
        let mut temporary = tempfile::NamedTempFile::new_in(&folder).map_err(io)?;
        temporary.write_all(text.as_bytes()).map_err(io)?;
        // A temporary file is private to its owner; a cassette is read like any file.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let readable = std::fs::Permissions::from_mode(0o644);
            temporary.as_file().set_permissions(readable).map_err(io)?;
        }
        temporary.as_file().sync_all().map_err(io)?;
        temporary.persist(path).map_err(|e| io(e.error))?;
        Ok(())
    }
}
