//! Chat messages as clients send them: OpenAI's chat shape, which AG-UI's messages
//! follow too (with camelCase keys), read into the run's [`Message`]s.

use serde::Deserialize;

use crate::content::{self, Source};
use crate::message::{Message, ToolCall};

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

/// Text, or a list of parts: text, images (`image_url`, a URL or a `data:` URL) and
/// files (`file`, inline as `file_data`).
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
    #[serde(default, alias = "imageUrl")]
    image_url: Option<ImageUrl>,
    #[serde(default)]
    file: Option<File>,
}

#[derive(Debug, Deserialize)]
struct ImageUrl {
    url: String,
}

#[derive(Debug, Deserialize)]
struct File {
    #[serde(default, alias = "fileData")]
    file_data: Option<String>,
    #[serde(default)]
    filename: Option<String>,
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
            ChatError::Part(kind) => format!(
                "content parts of type `{kind}` are not supported here: `text`, `image_url` \
                 (a URL or a data: URL) and `file` (with `file_data`) are"
            ),
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
            ChatMessage::User { content } => Message::user(content.parts()?),
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
                Message::tool(tool_call_id, name, content.parts()?)
            }
            ChatMessage::Other => return Err(ChatError::Role),
        };
        messages.push(message);
    }
    Ok(())
}

impl Content {
    /// The content with its images and files, as a message's.
    fn parts(&self) -> Result<content::Content, ChatError> {
        let Content::Parts(parts) = self else {
            return self.text().map(content::Content::Text);
        };
        if parts.iter().all(|p| p.kind == "text") {
            return self.text().map(content::Content::Text);
        }
        let read = parts.iter().map(|part| match (part.kind.as_str(), part) {
            ("text", part) => Ok(content::Part::text(part.text.as_str())),
            (
                "image_url",
                Part {
                    image_url: Some(image),
                    ..
                },
            ) => Ok(content::Part::image(source_of(&image.url))),
            (
                "file",
                Part {
                    file:
                        Some(File {
                            file_data: Some(data),
                            filename,
                        }),
                    ..
                },
            ) => Ok(content::Part::file(source_of(data), filename.clone())),
            (other, _) => Err(ChatError::Part(other.to_owned())),
        });
        read.collect::<Result<Vec<_>, _>>()
            .map(content::Content::from)
    }

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

/// A URL as a source: a `data:` URL of base64 bytes inline, any other URL as it is.
fn source_of(url: &str) -> Source {
    let inline = url.strip_prefix("data:").and_then(|rest| {
        let (media_type, data) = rest.split_once(";base64,")?;
        Some(Source::base64(media_type, data))
    });
    inline.unwrap_or_else(|| Source::url(url))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn images_and_files_are_read_as_parts_and_audio_is_refused() {
        let chat: Vec<ChatMessage> = serde_json::from_value(serde_json::json!([
            {"role": "user", "content": [
                {"type": "text", "text": "What is it?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                {"type": "image_url", "image_url": {"url": "https://x/a.jpg"}},
                {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "a.pdf"}},
            ]},
        ]))
        .unwrap();
        let mut messages = Vec::new();
        append(&chat, &mut messages).unwrap();
        let parts = messages[0].parts();
        assert_eq!(messages[0].content(), "What is it?");
        assert_eq!(
            parts[1],
            content::Part::image(Source::base64("image/png", "iVBO"))
        );
        assert_eq!(
            parts[2],
            content::Part::image(Source::url("https://x/a.jpg"))
        );
        let pdf = Source::base64("application/pdf", "JVBE");
        assert_eq!(parts[3], content::Part::file(pdf, Some("a.pdf".into())));

        let audio: Vec<ChatMessage> = serde_json::from_value(serde_json::json!([
            {"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]},
        ]))
        .unwrap();
        let refused = append(&audio, &mut Vec::new()).unwrap_err();
        assert!(
            refused.message().contains("`input_audio`"),
            "{}",
            refused.message()
        );
    }
}
