//! The JSON of what the Responses API answers: a whole response ([`WholeResponse`]), its
//! output items ([`OutputItem`]: messages, reasoning, function calls) and its usage
//! ([`WireUsage`]), read into an assistant message; the stream's events read the same
//! items and usage.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::PROVIDER;
use crate::content::{Part, Reasoning};
use crate::message::Message;
use crate::model::{MessageAccumulator, ModelDelta, Usage};
use crate::providers::openai::OpenAiError;

/// A whole (non-streamed) response, or the `response` of a stream's lifecycle events
/// (whose `output` is not read).
#[derive(Deserialize)]
pub(super) struct WholeResponse {
    pub(super) status: Option<String>,
    #[serde(default)]
    pub(super) output: Vec<OutputItem>,
    pub(super) usage: Option<WireUsage>,
    pub(super) error: Option<Value>,
}

/// One output item. Only the fields of the kinds read here: `message`, `reasoning`,
/// `function_call`; items of other kinds (built-in tools) are skipped.
#[derive(Deserialize)]
pub(super) struct OutputItem {
    #[serde(rename = "type")]
    pub(super) kind: String,
    pub(super) id: Option<String>,
    // A function call's.
    pub(super) call_id: Option<String>,
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) arguments: Lenient,
    // A reasoning item's.
    pub(super) encrypted_content: Option<String>,
    #[serde(default)]
    pub(super) summary: Vec<TextPart>,
    // A message's (`output_text`, `refusal`); a reasoning item's raw text.
    #[serde(default)]
    pub(super) content: Vec<TextPart>,
}

/// A part of an item's text: `output_text`, `refusal`, `summary_text`, `reasoning_text`.
#[derive(Deserialize)]
pub(super) struct TextPart {
    text: Option<String>,
    refusal: Option<String>,
}

impl TextPart {
    fn text(&self) -> &str {
        (self.text.as_deref())
            .or(self.refusal.as_deref())
            .unwrap_or_default()
    }
}

impl OutputItem {
    /// A message's text: its output text and refusal parts, in order.
    pub(super) fn message_text(&self) -> String {
        self.content.iter().map(TextPart::text).collect()
    }

    /// A reasoning item as a reasoning part of this provider: its id, its summary as the
    /// readable text (parts joined by blank lines; the raw reasoning text when there is no
    /// summary), its encrypted content as the opaque data.
    pub(super) fn reasoning(&self) -> Reasoning {
        let texts = if self.summary.is_empty() {
            &self.content
        } else {
            &self.summary
        };
        let text: Vec<&str> = texts.iter().map(TextPart::text).collect();
        let mut reasoning = Reasoning::new(PROVIDER, text.join("\n\n"));
        if let Some(id) = &self.id {
            reasoning = reasoning.with_id(id.as_str());
        }
        match &self.encrypted_content {
            Some(data) => reasoning.with_data("encrypted_content", data.as_str()),
            None => reasoning,
        }
    }

    /// A function call's arguments, as the model wrote them.
    pub(super) fn arguments(&self) -> String {
        self.arguments.0.clone().unwrap_or_default()
    }
}

/// Token counts as the Responses API sends them; a missing count is zero, a missing total
/// the sum.
#[derive(Deserialize)]
pub(super) struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    total_tokens: Option<u64>,
    input_tokens_details: Option<InputDetails>,
    output_tokens_details: Option<OutputDetails>,
}

/// `usage.input_tokens_details`: the input tokens read from and written to the cache.
#[derive(Deserialize)]
struct InputDetails {
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
}

/// `usage.output_tokens_details`: the output tokens spent reasoning.
#[derive(Deserialize)]
struct OutputDetails {
    reasoning_tokens: Option<u64>,
}

impl WireUsage {
    pub(super) fn usage(&self) -> Usage {
        let input = self.input_tokens.unwrap_or(0);
        let output = self.output_tokens.unwrap_or(0);
        let total = (self.total_tokens).unwrap_or_else(|| input.saturating_add(output));
        let details = self.input_tokens_details.as_ref();
        let read = details.and_then(|d| d.cached_tokens).unwrap_or(0);
        let written = details.and_then(|d| d.cache_write_tokens).unwrap_or(0);
        let reasoning = (self.output_tokens_details.as_ref()).and_then(|d| d.reasoning_tokens);
        Usage::new(input, output, total)
            .with_cache(read, written)
            .with_reasoning(reasoning.unwrap_or(0))
    }
}

impl WholeResponse {
    /// The output as one assistant message (text, reasoning parts and tool calls in
    /// order), and the usage if the server gave it.
    ///
    /// # Errors
    ///
    /// [`OpenAiError::StreamError`] for a response whose status is `failed`, with the
    /// server's message.
    pub(super) fn into_message(self) -> Result<(Message, Option<Usage>), OpenAiError> {
        if self.status.as_deref() == Some("failed") {
            return Err(failed(self.error.as_ref()));
        }
        let mut reply = MessageAccumulator::default();
        let mut calls = 0;
        for item in &self.output {
            match item.kind.as_str() {
                "message" => reply.push_text(&item.message_text()),
                "reasoning" => reply.push(ModelDelta::Part(Part::Reasoning(item.reasoning()))),
                "function_call" => {
                    reply.push(ModelDelta::ToolCall {
                        index: calls,
                        id: item.call_id.clone(),
                        name: item.name.clone(),
                        arguments: item.arguments(),
                    });
                    calls += 1;
                }
                _ => {}
            }
        }
        Ok((reply.finish(), self.usage.as_ref().map(WireUsage::usage)))
    }
}

/// The error of a failed response, from its `error` object (`code`, `message`).
pub(super) fn failed(error: Option<&Value>) -> OpenAiError {
    let text = |key: &str| {
        let value = error?.get(key)?;
        Some(
            value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned),
        )
    };
    OpenAiError::StreamError {
        message: text("message").unwrap_or_else(|| "the response failed".to_owned()),
        code: text("code"),
    }
}

/// A field that is text in the events read here, and may be something else in others (a
/// shell call's output delta is an object; a tool search's arguments too): anything but a
/// string is skipped.
#[derive(Debug, Default)]
pub(super) struct Lenient(pub(super) Option<String>);

impl<'de> Deserialize<'de> for Lenient {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor)
    }
}

struct LenientVisitor;

impl<'de> Visitor<'de> for LenientVisitor {
    type Value = Lenient;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Lenient, E> {
        Ok(Lenient(Some(text.to_owned())))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Lenient, E> {
        Ok(Lenient(Some(text)))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Lenient, E> {
        Ok(Lenient(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Lenient, E> {
        Ok(Lenient(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Lenient, E> {
        Ok(Lenient(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Lenient, E> {
        Ok(Lenient(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Lenient, E> {
        Ok(Lenient(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lenient, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Lenient(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lenient, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lenient(None))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::WholeResponse;
    use crate::content::{Part, Reasoning};
    use crate::message::ToolCall;
    use crate::providers::openai::OpenAiError;

    fn read(body: serde_json::Value) -> WholeResponse {
        serde_json::from_value(body).unwrap()
    }

    #[test]
    fn reasoning_text_and_calls_come_in_order_with_the_usage() {
        let (message, usage) = read(json!({
            "status": "completed",
            "output": [
                {"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAA==",
                 "summary": [{"type": "summary_text", "text": "**Plan**\n\nLook."},
                             {"type": "summary_text", "text": "**Then**\n\nCall."}]},
                {"id": "msg_1", "type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
                {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f",
                 "arguments": "{\"x\":1}"},
                {"id": "ws_1", "type": "web_search_call", "status": "completed"}
            ],
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 64},
                      "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 30},
                      "total_tokens": 150}
        }))
        .into_message()
        .unwrap();
        let reasoning =
            Reasoning::new("openai-responses", "**Plan**\n\nLook.\n\n**Then**\n\nCall.")
                .with_id("rs_1")
                .with_data("encrypted_content", "gAAA==");
        assert_eq!(
            message.parts()[..],
            [Part::Reasoning(reasoning), Part::text("Let me look.")]
        );
        assert_eq!(
            message.tool_calls(),
            [ToolCall::raw("call_1", "f", "{\"x\":1}")]
        );
        let usage = usage.unwrap();
        assert_eq!((usage.prompt_tokens, usage.cache_read_tokens), (100, 64));
        assert_eq!((usage.completion_tokens, usage.reasoning_tokens), (50, 30));
        assert_eq!(usage.total_tokens, 150);
    }

    #[test]
    fn a_failed_response_is_an_error_with_the_servers_message() {
        let error = read(json!({
            "status": "failed", "output": [],
            "error": {"code": "server_error", "message": "The model failed to generate a response."}
        }))
        .into_message()
        .unwrap_err();
        let OpenAiError::StreamError { message, code } = &error else {
            panic!("{error:?}")
        };
        assert_eq!(message, "The model failed to generate a response.");
        assert_eq!(code.as_deref(), Some("server_error"));
        assert!(error.is_retryable());
    }
}
