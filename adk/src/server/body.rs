//! The body of `POST /agents/{name}/runs`: a new run, or the resume of an interrupted one.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::error::ApiError;
use super::extract;
use crate::agent::{AgentRequest, check_thread};
use crate::checkpoint::{CheckpointError, CheckpointId};
use crate::interrupt::Decision;
use crate::message::Message;

/// What a body should be, for the messages of those that are not.
const EXPECTED: &str = r#"{"input": "text"}, {"messages": [...]} or {"resume": {...}}"#;

/// `{"input": "text"}` or `{"messages": [...]}`, with an optional `"thread"`; or
/// `{"resume": {"checkpoint": "...", "decisions": {"id": decision}}}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a run")]
pub(crate) struct RunBody {
    #[serde(default)]
    input: Option<String>,
    #[serde(default)]
    messages: Option<Vec<Message>>,
    #[serde(default)]
    thread: Option<String>,
    #[serde(default)]
    resume: Option<ResumeBody>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = r#"a resume: {"checkpoint", "decisions"}"#
)]
struct ResumeBody {
    checkpoint: String,
    #[serde(default)]
    decisions: BTreeMap<String, Decision>,
}

impl RunBody {
    /// Reads a body (JSON whatever its content type says, so that `curl -d` works).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        extract::json(bytes, EXPECTED)
    }

    /// The agent request it asks for: a run needs a message, its thread a name a thread
    /// may have (400 `invalid_thread`).
    pub(crate) fn into_request(self) -> Result<AgentRequest, ApiError> {
        let request = match (self.input, self.messages, self.resume) {
            (Some(input), None, None) => AgentRequest::user(input),
            (None, Some(messages), None) if messages.is_empty() => {
                return Err(invalid("`messages` is empty: give at least one message"));
            }
            (None, Some(messages), None) => AgentRequest::new(messages),
            (None, None, Some(resume)) if self.thread.is_none() => return resume.into_request(),
            (None, None, Some(_)) => return Err(invalid("a resume names its thread already")),
            _ => return Err(invalid("give one of `input`, `messages` or `resume`")),
        };
        let Some(thread) = self.thread else {
            return Ok(request);
        };
        check_thread(&thread)?;
        Ok(request.on_thread(thread))
    }
}

impl ResumeBody {
    fn into_request(self) -> Result<AgentRequest, ApiError> {
        let checkpoint: CheckpointId = self.checkpoint.parse().map_err(CheckpointError::from)?;
        check_thread(&checkpoint.thread)?;
        Ok(AgentRequest::resume(checkpoint, self.decisions))
    }
}

fn invalid(message: &str) -> ApiError {
    ApiError::bad_request("invalid_body", message)
}
