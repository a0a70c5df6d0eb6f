//! What the model reads of an MCP tool result and of a progress notification.

use std::fmt::Write as _;

use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ResourceContents};

use crate::content::{Part, Source};
use crate::tool::{ToolError, ToolErrorKind, ToolOutput};

/// The result as a tool output, or, if the server flagged it with `isError`, as a tool
/// error of kind [`Failed`](ToolErrorKind::Failed) carrying the server's text.
pub(crate) fn into_output(result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let text = text_of(&result);
    if result.is_error == Some(true) {
        let message = if text.is_empty() {
            "the tool reported an error without a message".to_owned()
        } else {
            text
        };
        return Err(ToolError::new(ToolErrorKind::Failed, message));
    }
    let parts = result.content.iter().filter_map(part_of);
    Ok(parts.fold(ToolOutput::new(text), ToolOutput::with_part))
}

/// An image, or a binary resource, as a part the model sees: a file named by its URI.
fn part_of(block: &ContentBlock) -> Option<Part> {
    match block {
        ContentBlock::Image(image) => Some(Part::image(Source::base64(
            image.mime_type.as_str(),
            image.data.as_str(),
        ))),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let media_type = mime_type.as_deref().unwrap_or("application/octet-stream");
                let source = Source::base64(media_type, blob.as_str());
                Some(Part::file(source, Some(uri.clone())))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The text of a result: its text blocks and text resources, one per line, with what
/// comes as a part (an image, a binary resource) or cannot be read (audio) named in
/// brackets in its place; the structured content as JSON when there are no content
/// blocks (the spec asks servers to send it as text too, so then the text is used).
fn text_of(result: &CallToolResult) -> String {
    if result.content.is_empty() {
        return match &result.structured_content {
            Some(structured) => structured.to_string(),
            None => String::new(),
        };
    }
    let mut text = String::new();
    for (i, block) in result.content.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        // Writing to a String cannot fail.
        let _ = match block {
            ContentBlock::Text(t) => write!(text, "{}", t.text),
            ContentBlock::Image(image) => write!(text, "[image: {}, below]", image.mime_type),
            ContentBlock::Audio(audio) => write!(text, "[audio: {}]", audio.mime_type),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents { text: body, .. } => {
                    write!(text, "{body}")
                }
                ResourceContents::BlobResourceContents { uri, mime_type, .. } => write!(
                    text,
                    "[resource {uri}: {}, below]",
                    mime_type.as_deref().unwrap_or("binary")
                ),
                _ => write!(text, "[resource]"),
            },
            ContentBlock::ResourceLink(link) => {
                write!(text, "[resource link: {} <{}>]", link.name, link.uri)
            }
            _ => write!(text, "[content of a kind tower-adk does not read]"),
        };
    }
    text
}

/// One progress notification as a stream chunk: its message, or else `progress N/TOTAL`,
/// on a line of its own.
pub(crate) fn progress_chunk(param: &ProgressNotificationParam) -> String {
    match (&param.message, param.total) {
        (Some(message), _) => format!("{message}\n"),
        (None, Some(total)) => format!("progress {}/{}\n", number(param.progress), number(total)),
        (None, None) => format!("progress {}\n", number(param.progress)),
    }
}

/// `3` rather than `3.0`, `2.5` as is.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{NumberOrString, ProgressToken};
    use serde_json::json;

    use super::*;

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn text_blocks_join_by_lines_and_media_are_named() {
        let output = into_output(result(json!({"content": [
            {"type": "text", "text": "before"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
        ]})));
        let output = output.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            output.content,
            "before\n[image: image/png, below]\ninside\n[resource link: b <file:///b>]"
        );
        assert_eq!(
            output.parts,
            [Part::image(Source::base64("image/png", "aGk="))]
        );
    }

    #[test]
    fn structured_content_is_used_when_there_is_no_content() {
        let output = into_output(result(
            json!({"content": [], "structuredContent": {"a": 1}}),
        ));
        assert_eq!(
            output.map(|o| o.content).ok(),
            Some(r#"{"a":1}"#.to_owned())
        );
    }

    #[test]
    fn is_error_becomes_a_failed_tool_error_with_the_servers_text() {
        let error = into_output(result(json!({
            "content": [{"type": "text", "text": "no such file"}],
            "isError": true
        })))
        .err();
        assert_eq!(
            error.as_ref().map(ToolError::kind),
            Some(ToolErrorKind::Failed)
        );
        assert_eq!(error.as_ref().map(ToolError::message), Some("no such file"));
    }

    #[test]
    fn progress_chunks_prefer_the_message() {
        let token = ProgressToken(NumberOrString::Number(1));
        let bare = ProgressNotificationParam::new(token.clone(), 2.0).with_total(5.0);
        assert_eq!(progress_chunk(&bare), "progress 2/5\n");
        assert_eq!(
            progress_chunk(&ProgressNotificationParam::new(token.clone(), 0.5)),
            "progress 0.5\n"
        );
        let with_message = bare.with_message("copying");
        assert_eq!(progress_chunk(&with_message), "copying\n");
    }
}
