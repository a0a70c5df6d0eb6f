//! AG-UI 1.0's content parts: read into ours from user and tool messages, and ours
//! written as AG-UI's in tool results.
//!
//! A media part (`image`, `audio`, `video`, `document`) has a `source`: `{type: "data",
//! value, mimeType}` (base64 bytes), `{type: "url", value, mimeType?}` or `{type: "file",
//! value, provider?, mimeType?}` (a provider's handle, which "a consumer MUST NOT fetch,
//! parse or read a scheme out of").

use serde::Deserialize;
use serde_json::{Value, json};

use crate::content::{Part, Source};
use crate::server::chat::{ChatError, ChatPart, source_of};
use crate::tool::ToolRecord;

/// What the refusals say is read.
const READ: &str = "`text`, `image` and `document` (with a `data` or a `url` source) are";

/// A content part of an AG-UI message.
#[derive(Debug, Deserialize)]
pub(crate) struct AgUiPart {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    source: Option<PartSource>,
    /// A document's name is read from `metadata.name`, where [`tool_content`] writes it.
    #[serde(default)]
    metadata: Option<Value>,
}

/// Where a media part's bytes are.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PartSource {
    Data {
        value: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    Url {
        value: String,
        #[serde(default, rename = "mimeType")]
        mime_type: Option<String>,
    },
    /// A provider's handle (or a kind of source AG-UI 1.0 does not have).
    #[serde(other)]
    Other,
}

impl ChatPart for AgUiPart {
    fn kind(&self) -> &str {
        &self.kind
    }

    fn text(&self) -> Option<&str> {
        (self.kind == "text").then_some(self.text.as_str())
    }

    fn read(&self) -> Result<Part, ChatError> {
        let kind = self.kind.as_str();
        let source = match kind {
            "text" => return Ok(Part::text(self.text.as_str())),
            "image" | "document" => self.source()?,
            "binary" => {
                return Err(ChatError::Part(
                    "content parts of type `binary` are AG-UI 0.x's, which 1.0 retired: send \
                     an `image` or a `document` part with a `source`"
                        .to_owned(),
                ));
            }
            _ => {
                let message = format!("content parts of type `{kind}` are not supported: {READ}");
                return Err(ChatError::Part(message));
            }
        };
        Ok(match kind {
            "image" => Part::image(source),
            _ => Part::file(source, self.name()),
        })
    }
}

impl AgUiPart {
    fn name(&self) -> Option<String> {
        let name = self.metadata.as_ref()?.get("name")?.as_str()?;
        Some(name.to_owned())
    }

    fn source(&self) -> Result<Source, ChatError> {
        let refused = |what: &str| {
            ChatError::Part(format!(
                "`{}` parts {what} are not supported: {READ}",
                self.kind
            ))
        };
        match &self.source {
            Some(PartSource::Data { value, mime_type }) => Ok(Source::base64(mime_type, value)),
            Some(PartSource::Url { value, mime_type }) => {
                let mut source = source_of(value);
                if let (Source::Url { media_type, .. }, Some(mime_type)) = (&mut source, mime_type)
                {
                    *media_type = Some(mime_type.clone());
                }
                Ok(source)
            }
            Some(PartSource::Other) => Err(refused("with a `file` source (a provider's handle)")),
            None => Err(refused("without a `source`")),
        }
    }
}

/// A tool result's `content`: its text, or, when the tool returned images or files too,
/// parts: the text, then an `image` part per image and a `document` part per file (its
/// name in the part's `metadata`, as `{"name": ...}`). A part AG-UI has no kind for (a
/// model's reasoning) is a text part that says what it was.
pub(crate) fn tool_content(record: &ToolRecord) -> Value {
    if record.parts.is_empty() {
        return Value::from(record.content.as_str());
    }
    let text = (!record.content.is_empty()).then(|| text_part(&record.content));
    let parts = record.parts.iter().map(|part| match part {
        Part::Image(source) => json!({"type": "image", "source": source_json(source)}),
        Part::File { source, name } => {
            let mut document = json!({"type": "document", "source": source_json(source)});
            if let Some(name) = name {
                document["metadata"] = json!({"name": name});
            }
            document
        }
        Part::Text { text } => text_part(text),
        other => text_part(&other.placeholder().unwrap_or_default()),
    });
    Value::Array(text.into_iter().chain(parts).collect())
}

fn text_part(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A source as AG-UI's `data` or `url` source.
fn source_json(source: &Source) -> Value {
    match source {
        Source::Base64 { media_type, data } => {
            json!({"type": "data", "value": data, "mimeType": media_type})
        }
        Source::Url { url, media_type } => {
            let mut json = json!({"type": "url", "value": url});
            if let Some(media_type) = media_type {
                json["mimeType"] = media_type.as_str().into();
            }
            json
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::ToolCall;
    use crate::server::chat::{ChatMessage, append};

    fn read(content: Value) -> Result<Vec<Part>, String> {
        let chat: Vec<ChatMessage<AgUiPart>> =
            serde_json::from_value(json!([{"id": "m1", "role": "user", "content": content}]))
                .unwrap();
        let mut messages = Vec::new();
        append(&chat, &mut messages).map_err(|e| e.message())?;
        Ok(messages[0].parts().into_owned())
    }

    #[test]
    fn image_and_document_parts_are_read_from_data_and_url_sources() {
        let parts = read(json!([
            {"type": "text", "text": "What is it?"},
            {"type": "image", "source": {"type": "data", "value": "iVBO", "mimeType": "image/png"}},
            {"type": "image", "source": {"type": "url", "value": "https://x/a.jpg", "mimeType": "image/jpeg"}},
            {"type": "document", "source": {"type": "url", "value": "data:application/pdf;base64,JVBE"},
             "metadata": {"name": "a.pdf"}},
        ]))
        .unwrap();

        assert_eq!(parts[0], Part::text("What is it?"));
        assert_eq!(parts[1], Part::image(Source::base64("image/png", "iVBO")));
        let jpeg = Source::Url {
            url: "https://x/a.jpg".into(),
            media_type: Some("image/jpeg".into()),
        };
        assert_eq!(parts[2], Part::image(jpeg));
        let pdf = Source::base64("application/pdf", "JVBE");
        assert_eq!(parts[3], Part::file(pdf, Some("a.pdf".into())));
    }

    #[test]
    fn parts_that_cannot_be_read_are_refused_by_name() {
        let refused = |part: Value| read(json!([part])).unwrap_err();

        let audio = refused(
            json!({"type": "audio", "source": {"type": "data", "value": "AA", "mimeType": "audio/wav"}}),
        );
        assert!(audio.contains("`audio`"), "{audio}");
        let video = refused(
            json!({"type": "video", "source": {"type": "url", "value": "https://x/v.mp4"}}),
        );
        assert!(video.contains("`video`"), "{video}");
        let handle = refused(
            json!({"type": "image", "source": {"type": "file", "value": "file-abc", "provider": "openai"}}),
        );
        assert!(handle.contains("`file` source"), "{handle}");
        let binary = refused(json!({"type": "binary", "mimeType": "image/png", "data": "iVBO"}));
        assert!(
            binary.contains("`binary`") && binary.contains("retired"),
            "{binary}"
        );
    }

    #[test]
    fn a_tool_result_with_an_image_is_text_then_an_image_part() {
        let call = ToolCall::new("c1", "draw", json!({}));
        let mut record = ToolRecord::success(&call, "drawn");
        assert_eq!(tool_content(&record), json!("drawn"));

        record.parts = vec![
            Part::image(Source::base64("image/png", "iVBO")),
            Part::file(Source::url("https://x/a.pdf"), Some("a.pdf".into())),
        ];
        assert_eq!(
            tool_content(&record),
            json!([
                {"type": "text", "text": "drawn"},
                {"type": "image", "source": {"type": "data", "value": "iVBO", "mimeType": "image/png"}},
                {"type": "document", "source": {"type": "url", "value": "https://x/a.pdf"}, "metadata": {"name": "a.pdf"}},
            ])
        );
    }
}
