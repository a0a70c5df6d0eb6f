//! The body of `POST /agents/{name}/runs`: a new run, or the resume of an interrupted one.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::error::ApiError;
use crate::agent::AgentRequest;
use crate::checkpoint::{CheckpointError, CheckpointId};
use crate::interrupt::Decision;
use crate::message::Message;

/// `{"input": "text"}` or `{"messages": [...]}`, with an optional `"thread"`; or
/// `{"resume": {"checkpoint": "...", "decisions": {"id": decision}}}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
struct ResumeBody {
    checkpoint: String,
    #[serde(default)]
    decisions: BTreeMap<String, Decision>,
}

impl RunBody {
    /// Reads a body; JSON whatever its content type says (so `curl -d` works).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        serde_json::from_slice(bytes)
            .map_err(|e| ApiError::bad_request("invalid_body", format!("invalid body: {e}")))
    }

    /// The agent request it asks for.
    pub(crate) fn into_request(self) -> Result<AgentRequest, ApiError> {
        let request = match (self.input, self.messages, self.resume) {
            (Some(input), None, None) => AgentRequest::user(input),
            (None, Some(messages), None) => AgentRequest::new(messages),
            (None, None, Some(resume)) if self.thread.is_none() => return resume.into_request(),
            (None, None, Some(_)) => return Err(invalid("a resume names its thread already")),
            _ => return Err(invalid("give one of `input`, `messages` or `resume`")),
        };
        Ok(match self.thread {
            Some(thread) => request.on_thread(thread),
            None => request,
        })
    }
}

impl ResumeBody {
    fn into_request(self) -> Result<AgentRequest, ApiError> {
        let checkpoint: CheckpointId = self.checkpoint.parse().map_err(CheckpointError::from)?;
        Ok(AgentRequest::resume(checkpoint, self.decisions))
    }
}

fn invalid(message: &str) -> ApiError {
    ApiError::bad_request("invalid_body", message)
}
