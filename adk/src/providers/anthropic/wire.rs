//! The JSON of the Messages API: the request body we send (system, messages merged by
//! role, tools, thinking, cache breakpoints), and the whole reply and usage we read.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::PROVIDER;
use super::Shared;
use super::cache::CacheBreakpoints;
use super::error::AnthropicError;
use crate::content::{Content, Part, Reasoning, Source};
use crate::message::{Message, ToolCall};
use crate::model::{MessageAccumulator, ModelDelta, ModelRequest, ToolChoice, Usage};

/// The JSON body for one model request.
///
/// # Errors
///
/// [`AnthropicError::UnsupportedPart`] for a part Anthropic cannot take.
pub(super) fn request_body(
    shared: &Shared,
    request: &ModelRequest,
) -> Result<Value, AnthropicError> {
    let cache = (request.extensions().get::<CacheBreakpoints>()).or(shared.cache.as_ref());
    let cache = cache.copied().unwrap_or_default();
    let mut body = Map::new();
    body.insert("model".into(), json!(shared.endpoint.model));
    let (mut system, mut turns) = history(&request.messages)?;
    if let Some(control) = cache.control(cache.marks_system()) {
        mark_last(&mut system, control);
    }
    if let Some(control) = cache.control(cache.marks_last_message()) {
        let last = turns.last_mut().map(|turn| &mut turn.blocks);
        mark_last(last.into_iter().flatten().filter(is_cacheable), control);
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    body.insert(
        "messages".into(),
        turns.into_iter().map(Turn::into_json).collect(),
    );
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = (request.tools.iter())
            .map(|tool| {
                json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters})
            })
            .collect();
        if let Some(control) = cache.control(cache.marks_tools()) {
            mark_last(&mut tools, control);
        }
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = tool_choice(request) {
            body.insert("tool_choice".into(), choice);
        }
    }
    options(shared, request, &mut body);
    for (name, value) in &shared.extra_body {
        body.entry(name.clone()).or_insert_with(|| value.clone());
    }
    Ok(Value::Object(body))
}

/// The call's options: the most tokens, thinking, sampling, stop sequences, a response
/// format, streaming.
fn options(shared: &Shared, request: &ModelRequest, body: &mut Map<String, Value>) {
    let options = &request.options;
    let max_tokens = options.max_tokens.unwrap_or(shared.max_tokens);
    body.insert("max_tokens".into(), json!(max_tokens));
    if let Some(budget) = shared.thinking_budget {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = options.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if !options.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(options.stop));
    }
    if let Some(format) = options.response_format.as_deref() {
        body.insert(
            "output_config".into(),
            json!({"format": {"type": "json_schema", "schema": format.schema}}),
        );
    }
    body.insert("stream".into(), json!(shared.stream));
}

/// `tool_choice`: `auto` is the default (sent only to turn parallel calls off).
fn tool_choice(request: &ModelRequest) -> Option<Value> {
    let mut choice = match &request.options.tool_choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
    };
    let serial = request.options.parallel_tool_calls == Some(false);
    if serial && choice["type"] != "none" {
        choice["disable_parallel_tool_use"] = json!(true);
    }
    let default = request.options.tool_choice == ToolChoice::Auto && !serial;
    (!default).then_some(choice)
}

/// The messages of one role that follow each other, merged (the API wants user and
/// assistant turns to alternate).
struct Turn {
    role: &'static str,
    blocks: Vec<Value>,
}

impl Turn {
    /// The turn's JSON: its content a string when it is one plain text block.
    fn into_json(self) -> Value {
        if let [block] = &self.blocks[..]
            && block["type"] == "text"
            && block.get("cache_control").is_none()
        {
            return json!({"role": self.role, "content": block["text"]});
        }
        json!({"role": self.role, "content": self.blocks})
    }
}

/// The system blocks and the turns of a history.
fn history(messages: &[Message]) -> Result<(Vec<Value>, Vec<Turn>), AnthropicError> {
    let mut system = Vec::new();
    let mut turns: Vec<Turn> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            Message::System { content } => {
                system.push(json!({"type": "text", "text": content}));
                continue;
            }
            Message::User { content } => ("user", user_blocks(content)?),
            Message::Assistant {
                content,
                tool_calls,
            } => ("assistant", assistant_blocks(content, tool_calls)?),
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => ("user", vec![tool_result(call_id, content, *is_error)?]),
        };
        if blocks.is_empty() {
            // An empty turn (an assistant that said nothing) is refused by the API.
            continue;
        }
        match turns.last_mut() {
            Some(turn) if turn.role == role => turn.blocks.extend(blocks),
            _ => turns.push(Turn { role, blocks }),
        }
    }
    Ok((system, turns))
}

/// A user turn's blocks: text, images, documents. Reasoning has no place there.
fn user_blocks(content: &Content) -> Result<Vec<Value>, AnthropicError> {
    let mut blocks = Vec::new();
    for part in content.parts().iter() {
        match part {
            Part::Text { text } if text.is_empty() => {}
            Part::Reasoning(_) => {}
            part => blocks.push(media_block(part)?),
        }
    }
    Ok(blocks)
}

/// A text, image or document block.
fn media_block(part: &Part) -> Result<Value, AnthropicError> {
    match part {
        Part::Text { text } => Ok(json!({"type": "text", "text": text})),
        Part::Image(source) => Ok(json!({"type": "image", "source": source_json(source)})),
        Part::File { source, name } => {
            let pdf = source.media_type().is_none_or(|t| t == "application/pdf");
            if !pdf {
                return Err(unsupported(part, "Anthropic reads PDF documents only"));
            }
            let mut block = json!({"type": "document", "source": source_json(source)});
            if let Some(name) = name {
                block["title"] = json!(name);
            }
            Ok(block)
        }
        Part::Reasoning(_) => Err(unsupported(part, "reasoning goes in the model's turns")),
    }
}

/// A source: base64 data (also from a `data:` URL), or a URL.
fn source_json(source: &Source) -> Value {
    match source {
        Source::Base64 { media_type, data } => {
            json!({"type": "base64", "media_type": media_type, "data": data})
        }
        Source::Url { url, .. } => match data_url(url) {
            Some((media_type, data)) => {
                json!({"type": "base64", "media_type": media_type, "data": data})
            }
            None => json!({"type": "url", "url": url}),
        },
    }
}

/// The media type and base64 data of a `data:{type};base64,{data}` URL.
fn data_url(url: &str) -> Option<(&str, &str)> {
    let (head, data) = url.strip_prefix("data:")?.split_once(',')?;
    let media_type = head.strip_suffix(";base64")?;
    Some((media_type, data))
}

/// A tool result: its text, or its parts (text, images, documents) as the result's
/// content blocks.
fn tool_result(call_id: &str, content: &Content, is_error: bool) -> Result<Value, AnthropicError> {
    let content = match content {
        Content::Text(text) => json!(text),
        Content::Parts(_) => Value::Array(user_blocks(content)?),
    };
    let mut block = json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
    if is_error {
        block["is_error"] = json!(true);
    }
    Ok(block)
}

/// An assistant turn's blocks, in the order they came: Anthropic's reasoning as its
/// `thinking` and `redacted_thinking` blocks, byte for byte (a block that came after some
/// of the turn's tool calls, whose `id` names the call it follows, goes after them
/// again), text, and the tool calls. Other providers' reasoning is not sent.
fn assistant_blocks(content: &Content, calls: &[ToolCall]) -> Result<Vec<Value>, AnthropicError> {
    let mut blocks = Vec::new();
    let mut sent = 0;
    for part in content.parts().iter() {
        match part {
            Part::Text { text } if text.is_empty() => {}
            Part::Text { text } => blocks.push(json!({"type": "text", "text": text})),
            Part::Reasoning(reasoning) if reasoning.provider != PROVIDER => {}
            Part::Reasoning(reasoning) => {
                let follows = (reasoning.id.as_deref())
                    .and_then(|id| calls.iter().position(|call| call.id == id));
                if let Some(at) = follows.filter(|at| *at >= sent) {
                    blocks.extend(calls[sent..=at].iter().map(tool_use));
                    sent = at + 1;
                }
                blocks.extend(thinking_block(reasoning));
            }
            Part::Image(_) | Part::File { .. } => {
                return Err(unsupported(
                    part,
                    "Anthropic takes images and documents in user turns and tool results only",
                ));
            }
        }
    }
    blocks.extend(calls[sent..].iter().map(tool_use));
    Ok(blocks)
}

/// A `thinking` block with its signature, or a `redacted_thinking` block, as received;
/// `None` for reasoning without its signature, which the API would refuse.
fn thinking_block(reasoning: &Reasoning) -> Option<Value> {
    let data = reasoning.data.as_deref()?;
    Some(match reasoning.kind.as_deref() {
        Some("redacted_thinking") => json!({"type": "redacted_thinking", "data": data}),
        _ => json!({"type": "thinking", "thinking": reasoning.text, "signature": data}),
    })
}

/// A `tool_use` block. The API wants the input as an object: arguments that are not a
/// JSON object (the model's malformed ones, already answered as such) go as `{}`.
fn tool_use(call: &ToolCall) -> Value {
    let input = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(object @ Value::Object(_)) => object,
        _ => json!({}),
    };
    json!({"type": "tool_use", "id": call.id.as_str(), "name": call.name.as_str(), "input": input})
}

fn unsupported(part: &Part, reason: &str) -> AnthropicError {
    AnthropicError::UnsupportedPart {
        part: part.placeholder().unwrap_or_else(|| "a part".to_owned()),
        reason: reason.to_owned(),
    }
}

/// Whether a block may carry a `cache_control` (thinking blocks may not).
fn is_cacheable(block: &&mut Value) -> bool {
    !matches!(
        block["type"].as_str(),
        Some("thinking" | "redacted_thinking")
    )
}

/// Sets `cache_control` on the last of the blocks.
fn mark_last<'a>(blocks: impl IntoIterator<Item = &'a mut Value>, control: Value) {
    if let Some(Value::Object(block)) = blocks.into_iter().last() {
        block.insert("cache_control".into(), control);
    }
}

/// Token counts as Anthropic sends them: a whole reply's, or a stream's (the start's,
/// then the cumulative counts of `message_delta`, each replacing what it repeats).
#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub(super) struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    output_tokens_details: Option<OutputDetails>,
}

/// `usage.output_tokens_details`: the output tokens spent thinking.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
struct OutputDetails {
    thinking_tokens: Option<u64>,
}

impl WireUsage {
    /// Takes the counts `later` has (a stream's counts are cumulative).
    pub(super) fn update(&mut self, later: &WireUsage) {
        let take = |mine: &mut Option<u64>, theirs: Option<u64>| {
            if theirs.is_some() {
                *mine = theirs;
            }
        };
        take(&mut self.input_tokens, later.input_tokens);
        take(&mut self.output_tokens, later.output_tokens);
        take(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
        take(
            &mut self.cache_read_input_tokens,
            later.cache_read_input_tokens,
        );
        if later.output_tokens_details.is_some() {
            self.output_tokens_details = later.output_tokens_details;
        }
    }

    /// Our usage: the cache reads and writes, which Anthropic counts apart from its
    /// `input_tokens`, are added into the prompt tokens.
    pub(super) fn usage(&self) -> Usage {
        let read = self.cache_read_input_tokens.unwrap_or(0);
        let write = self.cache_creation_input_tokens.unwrap_or(0);
        let prompt = (self.input_tokens.unwrap_or(0))
            .saturating_add(read)
            .saturating_add(write);
        let completion = self.output_tokens.unwrap_or(0);
        let thinking = (self.output_tokens_details).and_then(|d| d.thinking_tokens);
        Usage::new(prompt, completion, prompt.saturating_add(completion))
            .with_cache(read, write)
            .with_reasoning(thinking.unwrap_or(0))
    }
}

/// A whole (non-streamed) reply.
#[derive(Deserialize)]
pub(super) struct Reply {
    content: Vec<ReplyBlock>,
    usage: Option<WireUsage>,
}

/// One content block of a whole reply (or the start of one in a stream).
#[derive(Debug, Deserialize)]
pub(super) struct ReplyBlock {
    #[serde(rename = "type")]
    pub(super) kind: String,
    pub(super) text: Option<String>,
    pub(super) thinking: Option<String>,
    pub(super) signature: Option<String>,
    pub(super) data: Option<String>,
    pub(super) id: Option<String>,
    pub(super) name: Option<String>,
    pub(super) input: Option<Value>,
}

impl ReplyBlock {
    /// A `tool_use` block's input as arguments text (`{}` for none).
    pub(super) fn arguments(&self) -> String {
        match &self.input {
            Some(input @ Value::Object(map)) if !map.is_empty() => input.to_string(),
            _ => "{}".to_owned(),
        }
    }
}

/// Reasoning of Anthropic's, with the id of the tool call it follows in its turn, if any.
pub(super) fn reasoning(text: impl Into<String>, after: Option<&str>) -> Reasoning {
    let reasoning = Reasoning::new(PROVIDER, text);
    match after {
        Some(id) => reasoning.with_id(id),
        None => reasoning,
    }
}

impl Reply {
    /// The reply as an assistant message (its blocks in order), and its usage.
    pub(super) fn into_message(self) -> (Message, Option<Usage>) {
        let mut reply = MessageAccumulator::default();
        let mut calls = 0;
        let mut after: Option<String> = None;
        for block in self.content {
            match block.kind.as_str() {
                "text" => reply.push_text(block.text.as_deref().unwrap_or_default()),
                "thinking" => {
                    let signature = block.signature.unwrap_or_default();
                    let text = block.thinking.unwrap_or_default();
                    let piece = reasoning(text, after.as_deref()).with_data("signature", signature);
                    reply.push(ModelDelta::Reasoning(piece));
                }
                "redacted_thinking" => {
                    let data = block.data.unwrap_or_default();
                    let part = reasoning("", after.as_deref()).with_data("redacted_thinking", data);
                    reply.push(ModelDelta::Part(Part::Reasoning(part)));
                }
                "tool_use" => {
                    let arguments = block.arguments();
                    reply.push(ModelDelta::ToolCall {
                        index: calls,
                        id: block.id.clone(),
                        name: block.name,
                        arguments,
                    });
                    calls += 1;
                    after = block.id;
                }
                // Server tools' blocks and the like: not ours to run or show.
                _ => {}
            }
        }
        (reply.finish(), self.usage.map(|usage| usage.usage()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use serde_json::json;

    use super::{Reply, request_body};
    use crate::content::{Content, Part, Reasoning, Source};
    use crate::message::{Message, ToolCall};
    use crate::model::{ModelRequest, ToolChoice};
    use crate::providers::anthropic::{AnthropicError, AnthropicModel, CacheBreakpoints};
    use crate::tool::ToolInfo;

    fn model() -> AnthropicModel {
        AnthropicModel::builder()
            .model("claude-test")
            .extra_body("top_k", 5)
            .build()
            .unwrap()
    }

    fn body(request: &ModelRequest) -> serde_json::Value {
        request_body(&model().shared, request).unwrap()
    }

    fn signed(text: &str, signature: &str) -> Part {
        Part::Reasoning(Reasoning::new("anthropic", text).with_data("signature", signature))
    }

    #[test]
    fn system_messages_go_to_system_and_tool_results_to_one_user_turn() {
        let request = ModelRequest::new(
            vec![
                Message::system("Be brief."),
                Message::user("Weather in Paris and Rome?"),
                Message::assistant_with_calls(
                    "",
                    vec![
                        ToolCall::raw("t1", "weather", r#"{"city":"Paris"}"#),
                        ToolCall::raw("t2", "weather", "not json"),
                    ],
                ),
                Message::tool("t1", "weather", "sunny"),
                Message::tool_error("t2", "weather", "invalid arguments"),
                Message::user("And tomorrow?"),
            ]
            .into(),
        );
        let body = body(&request);
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "Be brief."}])
        );
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": "Weather in Paris and Rome?"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "t2", "name": "weather", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "invalid arguments", "is_error": true},
                    {"type": "text", "text": "And tomorrow?"}
                ]}
            ])
        );
        assert_eq!(body["max_tokens"], 4096);
        assert_eq!(body["top_k"], 5);
        assert_eq!(body["stream"], true);
    }

    #[test]
    fn reasoning_goes_back_in_its_place_and_other_providers_reasoning_stays_out() {
        let content = Content::from(vec![
            signed("first", "sig-1"),
            Part::Reasoning(Reasoning::new("gemini", "theirs").with_data("thought_signature", "g")),
            Part::text("Let me look."),
            Part::Reasoning(
                Reasoning::new("anthropic", "")
                    .with_data("redacted_thinking", "cmVk")
                    .with_id("t1"),
            ),
        ]);
        let calls = vec![
            ToolCall::raw("t1", "a", "{}"),
            ToolCall::raw("t2", "b", "{}"),
        ];
        let request = ModelRequest::new(vec![Message::assistant_with_calls(content, calls)].into());
        let body = body(&request);
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "thinking", "thinking": "first", "signature": "sig-1"},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
                {"type": "redacted_thinking", "data": "cmVk"},
                {"type": "tool_use", "id": "t2", "name": "b", "input": {}}
            ])
        );
        assert!(!body.to_string().contains("theirs"));
    }

    #[test]
    fn images_and_pdfs_become_image_and_document_blocks() {
        let parts = vec![
            Part::text("What is this?"),
            Part::image(Source::base64("image/png", "iVBO")),
            Part::image(Source::url("https://example.com/cat.jpg")),
            Part::image(Source::url("data:image/gif;base64,R0lG")),
            Part::file(
                Source::base64("application/pdf", "JVBE"),
                Some("a.pdf".into()),
            ),
            Part::file(Source::url("https://example.com/b.pdf"), None),
        ];
        let request = ModelRequest::new(vec![Message::user(Content::from(parts))].into());
        assert_eq!(
            body(&request)["messages"][0]["content"],
            json!([
                {"type": "text", "text": "What is this?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "R0lG"}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}, "title": "a.pdf"},
                {"type": "document", "source": {"type": "url", "url": "https://example.com/b.pdf"}}
            ])
        );
    }

    #[test]
    fn a_file_anthropic_cannot_read_fails_the_call_naming_it() {
        let docx = Part::file(
            Source::base64("application/vnd.ms-word", "UEsD"),
            Some("a.docx".into()),
        );
        let request = ModelRequest::new(vec![Message::user(Content::from(vec![docx]))].into());
        let error = request_body(&model().shared, &request).unwrap_err();
        assert!(
            matches!(&error, AnthropicError::UnsupportedPart { part, .. } if part.contains("a.docx")),
            "{error:?}"
        );
    }

    #[test]
    fn cache_breakpoints_mark_the_system_the_tools_and_the_last_message() {
        let mut request = ModelRequest::new(
            vec![
                Message::system("Long instructions."),
                Message::user("hi"),
                Message::assistant_with_calls(
                    Content::from(vec![signed("t", "s")]),
                    vec![ToolCall::raw("t1", "weather", "{}")],
                ),
                Message::tool("t1", "weather", "sunny"),
            ]
            .into(),
        );
        request.tools = Arc::from([Arc::new(ToolInfo::new("weather", "The weather"))]);
        request
            .extensions_mut()
            .insert(CacheBreakpoints::all().one_hour());
        let body = body(&request);
        let control = json!({"type": "ephemeral", "ttl": "1h"});
        assert_eq!(body["system"][0]["cache_control"], control);
        assert_eq!(body["tools"][0]["cache_control"], control);
        assert_eq!(body["messages"][2]["content"][0]["cache_control"], control);
        assert!(
            body["messages"][1]["content"][0]
                .get("cache_control")
                .is_none()
        );
        assert!(body["tool_choice"].is_null(), "auto is the default");
    }

    #[test]
    fn tool_choice_and_parallel_calls_map_to_anthropic_names() {
        let mut request = ModelRequest::new(vec![Message::user("hi")].into());
        request.tools = Arc::from([Arc::new(ToolInfo::new("weather", "The weather"))]);
        request.options.tool_choice = ToolChoice::Required;
        request.options.parallel_tool_calls = Some(false);
        request.options.stop = vec!["END".into()];
        request.options.max_tokens = Some(64);
        let body = body(&request);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "any", "disable_parallel_tool_use": true})
        );
        assert_eq!(body["stop_sequences"], json!(["END"]));
        assert_eq!(body["max_tokens"], 64);
        request.options.tool_choice = ToolChoice::Tool("weather".into());
        request.options.parallel_tool_calls = None;
        let body = super::request_body(&model().shared, &request).unwrap();
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "weather"})
        );
    }

    #[test]
    fn a_whole_reply_keeps_its_blocks_in_order_and_adds_cache_tokens_to_the_prompt() {
        let reply = json!({
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "c2ln"},
                {"type": "tool_use", "id": "t1", "name": "a", "input": {"x": 1}},
                {"type": "redacted_thinking", "data": "cmVk"},
                {"type": "text", "text": "Done."}
            ],
            "usage": {"input_tokens": 10, "output_tokens": 5,
                      "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}
        });
        let reply: Reply = serde_json::from_value(reply).unwrap();
        let (message, usage) = reply.into_message();
        assert_eq!(
            message.tool_calls(),
            [ToolCall::raw("t1", "a", r#"{"x":1}"#)]
        );
        let parts = message.parts();
        assert_eq!(parts[0], signed("hmm", "c2ln"));
        assert_eq!(
            parts[1],
            Part::Reasoning(
                Reasoning::new("anthropic", "")
                    .with_data("redacted_thinking", "cmVk")
                    .with_id("t1")
            )
        );
        assert_eq!(parts[2], Part::text("Done."));
        let usage = usage.unwrap();
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (130, 5));
        assert_eq!(
            (usage.cache_read_tokens, usage.cache_write_tokens),
            (100, 20)
        );
        assert_eq!(usage.total_tokens, 135);
    }
}
