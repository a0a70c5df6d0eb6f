//! Chat messages as clients send them: OpenAI's chat shape, which AG-UI's messages
//! follow too (with camelCase keys), read into the run's [`Message`]s.

use serde::Deserialize;

use crate::message::Message;
use crate::message::ToolCall;

/// A message by its `role`; `developer` is read as `system`. Other roles (AG-UI's
/// activity and reasoning messages) are `Other`, for the caller to refuse or read past.
#[derive(Debug, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub(crate) enum ChatMessage {
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
        #[serde(default, alias = "toolCalls")]
        tool_calls: Vec<ChatToolCall>,
    },
    Tool {
        #[serde(alias = "toolCallId")]
        tool_call_id: String,
        content: Content,
    },
    #[serde(other)]
    Other,
}

/// Text, or a list of parts of which only text parts are read.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
pub(crate) struct Part {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ChatToolCall {
    id: String,
    function: Function,
}

#[derive(Debug, Deserialize)]
struct Function {
    name: String,
    #[serde(default)]
    arguments: String,
}

/// Why chat messages could not be read; each protocol words it its own way.
#[derive(Debug)]
pub(crate) enum ChatError {
    /// A content part of this type (only `text` is read).
    Part(String),
    /// A message of a role that is not read.
    Role,
}

impl ChatError {
    pub(crate) fn message(&self) -> String {
        match self {
            ChatError::Part(kind) => {
                format!("content parts of type `{kind}` are not supported, only `text`")
            }
            ChatError::Role => {
                "messages of this role are not supported: system, developer, user, assistant, tool"
                    .to_owned()
            }
        }
    }
}

/// Appends `chat` to `messages`, in order. A tool message carries only its call's id:
/// its tool's name is read from the assistant message before it that made the call.
pub(crate) fn append<'a>(
    chat: impl IntoIterator<Item = &'a ChatMessage>,
    messages: &mut Vec<Message>,
) -> Result<(), ChatError> {
    for message in chat {
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
                let name = tool_name(messages, tool_call_id);
                Message::tool(tool_call_id, name, content.text()?)
            }
            ChatMessage::Other => return Err(ChatError::Role),
        };
        messages.push(message);
    }
    Ok(())
}

impl Content {
    fn text(&self) -> Result<String, ChatError> {
        match self {
            Content::Text(text) => Ok(text.clone()),
            Content::Parts(parts) => parts
                .iter()
                .map(|part| match part.kind.as_str() {
                    "text" => Ok(part.text.as_str()),
                    other => Err(ChatError::Part(other.to_owned())),
                })
                .collect(),
        }
    }
}

/// The name of the tool an earlier assistant message called with `call_id`.
fn tool_name(messages: &[Message], call_id: &str) -> String {
    let mut calls = messages.iter().rev().flat_map(Message::tool_calls);
    let call = calls.find(|call| call.id == call_id);
    call.map(|call| call.name.to_string()).unwrap_or_default()
}
