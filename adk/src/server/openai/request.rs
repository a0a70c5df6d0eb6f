//! The body of `POST /v1/chat/completions`, and the agent request it asks for.

use serde::Deserialize;

use crate::agent::AgentRequest;
use crate::server::chat::{self, ChatMessage};
use crate::server::error::ApiError;
use crate::server::extract;

/// A chat completion request. Sampling options (`temperature`, `max_tokens`, ...) and
/// `tools` are read past: the agent has its own model options and tools.
#[derive(Debug, Deserialize)]
pub(crate) struct ChatRequest {
    pub(crate) model: String,
    messages: Vec<ChatMessage>,
    #[serde(default)]
    pub(crate) stream: bool,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
}

#[derive(Debug, Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: bool,
}

impl ChatRequest {
    /// Reads a body (JSON whatever its content type says).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        let what = r#"a chat completion request: {"model": "AGENT", "messages": [...]}"#;
        extract::json(bytes, what)
    }

    /// Whether a streamed answer ends with a chunk that carries `usage`.
    pub(crate) fn include_usage(&self) -> bool {
        self.stream_options
            .as_ref()
            .is_some_and(|o| o.include_usage)
    }

    /// The agent request: the messages in order, after the agent's own instruction.
    pub(crate) fn to_agent_request(&self) -> Result<AgentRequest, ApiError> {
        let invalid = |message| ApiError::bad_request("invalid_body", message);
        if self.messages.is_empty() {
            return Err(invalid("`messages` is empty".to_owned()));
        }
        let mut messages = Vec::with_capacity(self.messages.len());
        chat::append(&self.messages, &mut messages).map_err(|e| invalid(e.message()))?;
        Ok(AgentRequest::new(messages))
    }
}
