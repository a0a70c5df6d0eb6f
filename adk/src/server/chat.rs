//! Chat messages as clients send them: OpenAI's chat shape, which AG-UI's messages
//! follow too (with camelCase keys), read into the run's [`Message`]s. The two differ in
//! their content parts: each protocol reads its own ([`OpenAiPart`] here, AG-UI's in
//! `agui::content`), through [`ChatPart`].

use serde::Deserialize;

use crate::content::{self, Source};
use crate::message::{Message, ToolCall};

/// A message by its `role`; `developer` is read as `system`. Other roles (AG-UI's
/// activity and reasoning messages) are `Other`, for the caller to refuse or read past.
/// `P` is the protocol's content part.
#[derive(Debug, Deserialize)]
#[serde(
    tag = "role",
    rename_all = "snake_case",
    bound(deserialize = "P: Deserialize<'de>")
)]
pub(crate) enum ChatMessage<P = OpenAiPart> {
    System {
        content: Content<P>,
    },
    Developer {
        content: Content<P>,
    },
    User {
        content: Content<P>,
    },
    Assistant {
        #[serde(default)]
        content: Option<Content<P>>,
        #[serde(default, alias = "toolCalls")]
        tool_calls: Vec<ChatToolCall>,
    },
    Tool {
        #[serde(alias = "toolCallId")]
        tool_call_id: String,
        content: Content<P>,
    },
    #[serde(other)]
    Other,
}

/// Text, or a list of parts.
#[derive(Debug, Deserialize)]
#[serde(untagged, bound(deserialize = "P: Deserialize<'de>"))]
pub(crate) enum Content<P> {
    Text(String),
    Parts(Vec<P>),
}

/// A content part of one protocol.
pub(crate) trait ChatPart {
    /// Its `type`, as the client wrote it.
    fn kind(&self) -> &str;

    /// Its text, when it is a text part.
    fn text(&self) -> Option<&str>;

    /// The part as one of a message's, or why it cannot be read (naming it).
    fn read(&self) -> Result<content::Part, ChatError>;
}

/// An OpenAI content part: `text`, an image (`image_url`, a URL or a `data:` URL) or a
/// file (`file`, inline as `file_data`).
#[derive(Debug, Deserialize)]
pub(crate) struct OpenAiPart {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
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
    #[serde(default)]
    file_data: Option<String>,
    #[serde(default)]
    filename: Option<String>,
}

impl ChatPart for OpenAiPart {
    fn kind(&self) -> &str {
        &self.kind
    }

    fn text(&self) -> Option<&str> {
        (self.kind == "text").then_some(self.text.as_str())
    }

    fn read(&self) -> Result<content::Part, ChatError> {
        match (self.kind.as_str(), &self.image_url, &self.file) {
            ("text", _, _) => Ok(content::Part::text(self.text.as_str())),
            ("image_url", Some(image), _) => Ok(content::Part::image(source_of(&image.url))),
            (
                "file",
                _,
                Some(File {
                    file_data: Some(data),
                    filename,
                }),
            ) => Ok(content::Part::file(source_of(data), filename.clone())),
            (kind, _, _) => Err(ChatError::Part(format!(
                "content parts of type `{kind}` are not supported here: `text`, `image_url` \
                 (a URL or a data: URL) and `file` (with `file_data`) are"
            ))),
        }
    }
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
    /// A content part that cannot be read: what it is, and why.
    Part(String),
    /// A message of a role that is not read.
    Role,
}

impl ChatError {
    pub(crate) fn message(&self) -> String {
        match self {
            ChatError::Part(message) => message.clone(),
            ChatError::Role => {
                "messages of this role are not supported: system, developer, user, assistant, tool"
                    .to_owned()
            }
        }
    }
}

/// Appends `chat` to `messages`, in order. A tool message carries only its call's id:
/// its tool's name is read from the assistant message before it that made the call.
pub(crate) fn append<'a, P: ChatPart + 'a>(
    chat: impl IntoIterator<Item = &'a ChatMessage<P>>,
    messages: &mut Vec<Message>,
) -> Result<(), ChatError> {
    for message in chat {
        let message = match message {
            ChatMessage::System { content } | ChatMessage::Developer { content } => {
                Message::system(content.text("system")?)
            }
            ChatMessage::User { content } => Message::user(content.parts()?),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                let text = content.as_ref().map(|c| c.text("assistant")).transpose()?;
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

impl<P: ChatPart> Content<P> {
    /// The content with its images and files, as a message's.
    fn parts(&self) -> Result<content::Content, ChatError> {
        let Content::Parts(parts) = self else {
            return self.text("user").map(content::Content::Text);
        };
        if parts.iter().all(|p| p.text().is_some()) {
            return self.text("user").map(content::Content::Text);
        }
        let read = parts.iter().map(ChatPart::read);
        read.collect::<Result<Vec<_>, _>>()
            .map(content::Content::from)
    }

    /// The text of a message whose content is text only (of this `role`).
    fn text(&self, role: &str) -> Result<String, ChatError> {
        match self {
            Content::Text(text) => Ok(text.clone()),
            Content::Parts(parts) => parts
                .iter()
                .map(|part| {
                    part.text().ok_or_else(|| {
                        ChatError::Part(format!(
                            "content parts of type `{}` are not supported in {role} messages: \
                             only `text` is",
                            part.kind()
                        ))
                    })
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
pub(crate) fn source_of(url: &str) -> Source {
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
