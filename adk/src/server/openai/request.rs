//! The body of `POST /v1/chat/completions`, and the agent request it asks for.

use serde::Deserialize;

use super::error::OpenAiError;
use crate::server::body::tool_name;
use crate::{AgentRequest, Message, ToolCall};

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

/// A message by its `role`; `developer` is read as `system`.
#[derive(Debug, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum ChatMessage {
    System {
        content: Content,
    },
    Developer {
        content: Content,
    },
    User {
        content: Content,
    },
    Assistant {
        #[serde(default)]
        content: Option<Content>,
        #[serde(default)]
        tool_calls: Vec<ChatToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: Content,
    },
}

/// Text, or a list of parts of which only text parts are read.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: String,
}

#[derive(Debug, Deserialize)]
struct ChatToolCall {
    id: String,
    function: Function,
}

#[derive(Debug, Deserialize)]
struct Function {
    name: String,
    #[serde(default)]
    arguments: String,
}

impl ChatRequest {
    /// Reads a body; JSON whatever its content type says.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, OpenAiError> {
        serde_json::from_slice(bytes)
            .map_err(|e| OpenAiError::invalid(format!("invalid body: {e}")))
    }

    /// Whether a streamed answer ends with a chunk that carries `usage`.
    pub(crate) fn include_usage(&self) -> bool {
        self.stream_options
            .as_ref()
            .is_some_and(|o| o.include_usage)
    }

    /// The agent request: the messages in order, after the agent's own instruction.
    pub(crate) fn to_agent_request(&self) -> Result<AgentRequest, OpenAiError> {
        if self.messages.is_empty() {
            return Err(OpenAiError::invalid("`messages` is empty"));
        }
        let mut messages: Vec<Message> = Vec::with_capacity(self.messages.len());
        for message in &self.messages {
            let message = match message {
                ChatMessage::System { content } | ChatMessage::Developer { content } => {
                    Message::system(content.text()?)
                }
                ChatMessage::User { content } => Message::user(content.text()?),
                ChatMessage::Assistant {
                    content,
                    tool_calls,
                } => {
                    let text = content.as_ref().map(Content::text).transpose()?;
                    let calls = tool_calls.iter().map(|call| {
                        ToolCall::raw(&call.id, &call.function.name, &call.function.arguments)
                    });
                    Message::assistant_with_calls(text.unwrap_or_default(), calls.collect())
                }
                ChatMessage::Tool {
                    tool_call_id,
                    content,
                } => {
                    let name = tool_name(&messages, tool_call_id);
                    Message::tool(tool_call_id, name, content.text()?)
                }
            };
            messages.push(message);
        }
        Ok(AgentRequest::new(messages))
    }
}

impl Content {
    fn text(&self) -> Result<String, OpenAiError> {
        match self {
            Content::Text(text) => Ok(text.clone()),
            Content::Parts(parts) => parts
                .iter()
                .map(|part| match part.kind.as_str() {
                    "text" => Ok(part.text.as_str()),
                    other => Err(OpenAiError::invalid(format!(
                        "content parts of type `{other}` are not supported, only `text`"
                    ))),
                })
                .collect(),
        }
    }
}
