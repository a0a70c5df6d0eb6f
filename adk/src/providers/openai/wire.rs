//! The JSON of chat completions: the request body we send, the reply and stream chunks
//! we read.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::Shared;
use super::error::OpenAiError;
use crate::content::{Content, Part, Source};
use crate::message::Message;
use crate::model::MessageAccumulator;
use crate::model::ModelDelta;
use crate::model::ModelRequest;
use crate::model::{ToolChoice, Usage};
use crate::providers::http::ProviderError;

/// The body of a chat completion request.
#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
}

/// One message of the request, in OpenAI's shape.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: WireContent<'a>,
    },
    /// `content` is always a string, `""` when the model only called tools: some servers
    /// (llama.cpp's) reject `null`.
    Assistant {
        content: Cow<'a, str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

/// A user message's content: a string, or parts (text, images, files).
#[derive(Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<WirePart<'a>>),
}

/// One part of a user message, in OpenAI's shape.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: WireUrl },
    File { file: WireFile<'a> },
}

#[derive(Serialize)]
struct WireUrl {
    url: String,
}

#[derive(Serialize)]
struct WireFile<'a> {
    file_data: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    filename: Option<&'a str>,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

impl<'a> WireMessage<'a> {
    fn new(message: &'a Message) -> Self {
        match message {
            Message::System { content } => WireMessage::System { content },
            Message::User { content } => WireMessage::User {
                content: match content {
                    Content::Text(text) => WireContent::Text(text),
                    Content::Parts(parts) => WireContent::Parts(parts.iter().map(part).collect()),
                },
            },
            Message::Assistant {
                content,
                tool_calls,
            } => WireMessage::Assistant {
                // The chat format carries an assistant's text only: its reasoning (of
                // whichever provider) stays out, what else it made is named.
                content: text_with_placeholders(content, |p| matches!(p, Part::Reasoning(_))),
                tool_calls: tool_calls
                    .iter()
                    .map(|call| WireCall {
                        id: &call.id,
                        kind: "function",
                        function: WireFunction {
                            name: &call.name,
                            // The arguments go back as the model wrote them; "no arguments"
                            // as `{}`, which every server parses.
                            arguments: if call.arguments.trim().is_empty() {
                                "{}"
                            } else {
                                &call.arguments
                            },
                        },
                    })
                    .collect(),
            },
            Message::Tool {
                call_id, content, ..
            } => WireMessage::Tool {
                tool_call_id: call_id,
                // A tool result carries text only; its images and files follow in a user
                // message (see `messages`), and the text says so.
                content: text_with_placeholders(content, |_| false),
            },
        }
    }
}

/// The messages of a request: each in OpenAI's shape, and after the tool results of a
/// turn that returned images or files, one user message that shows them to the model.
fn messages(history: &[Message]) -> Vec<WireMessage<'_>> {
    let mut out = Vec::with_capacity(history.len());
    let mut media: Vec<WirePart<'_>> = Vec::new();
    for (at, message) in history.iter().enumerate() {
        out.push(WireMessage::new(message));
        if let Message::Tool { content, .. } = message {
            let parts = content.parts();
            let shown = parts
                .iter()
                .filter(|p| matches!(p, Part::Image(_) | Part::File { .. }));
            media.extend(shown.map(owned_part));
            let last_result = !matches!(history.get(at + 1), Some(Message::Tool { .. }));
            if last_result && !media.is_empty() {
                let intro = "The images and files the tool results above returned:";
                let mut content = vec![WirePart::Text { text: intro.into() }];
                content.append(&mut media);
                out.push(WireMessage::User {
                    content: WireContent::Parts(content),
                });
            }
        }
    }
    out
}

/// A part of a user message.
fn part(part: &Part) -> WirePart<'_> {
    match part {
        Part::Text { text } => WirePart::Text { text: text.into() },
        Part::Image(source) => WirePart::ImageUrl {
            image_url: WireUrl {
                url: url_of(source),
            },
        },
        Part::File { source, name } => match source {
            Source::Base64 { .. } => WirePart::File {
                file: WireFile {
                    file_data: url_of(source),
                    filename: name.as_deref(),
                },
            },
            // The chat format takes files inline only: the model is told where it is.
            Source::Url { url, .. } => WirePart::Text {
                text: format!("[a file at {url}]").into(),
            },
        },
        other => WirePart::Text {
            text: other.placeholder().unwrap_or_default().into(),
        },
    }
}

/// A part of a user message, owning what it borrowed (for a message made here).
fn owned_part(part: &Part) -> WirePart<'static> {
    match self::part(part) {
        WirePart::Text { text } => WirePart::Text {
            text: Cow::Owned(text.into_owned()),
        },
        WirePart::ImageUrl { image_url } => WirePart::ImageUrl { image_url },
        WirePart::File { file } => WirePart::File {
            file: WireFile {
                file_data: file.file_data,
                filename: None,
            },
        },
    }
}

/// A URL for a source: its own, or a `data:` URL of its bytes.
fn url_of(source: &Source) -> String {
    match source {
        Source::Url { url, .. } => url.clone(),
        Source::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
    }
}

/// The text of a content, with a placeholder for each part the text cannot carry (but
/// those `skip` leaves out).
fn text_with_placeholders(content: &Content, skip: impl Fn(&Part) -> bool) -> Cow<'_, str> {
    match content {
        Content::Text(text) => Cow::Borrowed(text),
        Content::Parts(parts) => {
            let pieces: Vec<Cow<'_, str>> = (parts.iter().filter(|p| !skip(p)))
                .map(|p| match p {
                    Part::Text { text } => Cow::Borrowed(text.as_str()),
                    other => Cow::Owned(other.placeholder().unwrap_or_default()),
                })
                .collect();
            match pieces.len() {
                0 => Cow::Borrowed(""),
                1 => pieces.into_iter().next().unwrap_or_default(),
                _ => Cow::Owned(pieces.join("\n")),
            }
        }
    }
}

/// The JSON body for one model request.
pub(super) fn request_body(shared: &Shared, request: &ModelRequest) -> Value {
    let options = &request.options;
    let has_tools = !request.tools.is_empty();
    let tool_choice = match &options.tool_choice {
        _ if !has_tools => None,
        ToolChoice::Auto => None,
        ToolChoice::None => Some(json!("none")),
        ToolChoice::Required => Some(json!("required")),
        ToolChoice::Tool(name) => Some(json!({"type": "function", "function": {"name": name}})),
    };
    let (max_tokens, max_completion_tokens) = if shared.max_completion_tokens {
        (None, options.max_tokens)
    } else {
        (options.max_tokens, None)
    };
    let body = ChatRequest {
        model: &shared.endpoint.model,
        messages: messages(&request.messages),
        tools: request
            .tools
            .iter()
            .map(|tool| tool.to_openai_function(tool.strict))
            .collect(),
        tool_choice,
        parallel_tool_calls: options.parallel_tool_calls.filter(|_| has_tools),
        temperature: options.temperature,
        top_p: options.top_p,
        max_tokens,
        max_completion_tokens,
        stop: &options.stop,
        seed: options.seed,
        response_format: options.response_format.as_deref().map(|format| {
            json!({"type": "json_schema", "json_schema": {
                "name": format.name, "schema": format.schema, "strict": format.strict
            }})
        }),
        stream: shared.stream,
        stream_options: (shared.stream && shared.stream_usage)
            .then(|| json!({"include_usage": true})),
    };
    let mut body = match serde_json::to_value(body) {
        Ok(Value::Object(map)) => map,
        // Serializing plain strings and numbers cannot fail.
        _ => Map::new(),
    };
    for (name, value) in &shared.extra_body {
        body.entry(name.clone()).or_insert_with(|| value.clone());
    }
    Value::Object(body)
}

/// A whole (non-streamed) chat completion.
#[derive(Deserialize)]
pub(super) struct ChatCompletion {
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    index: Option<u32>,
    message: Option<ReplyMessage>,
}

#[derive(Deserialize)]
struct ReplyMessage {
    content: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<WireCallIn>>,
}

/// A tool call, or a piece of one in a stream.
#[derive(Deserialize)]
pub(super) struct WireCallIn {
    pub(super) index: Option<usize>,
    pub(super) id: Option<String>,
    pub(super) function: Option<WireFunctionIn>,
}

#[derive(Deserialize)]
pub(super) struct WireFunctionIn {
    pub(super) name: Option<String>,
    /// A string, as OpenAI sends it; some servers send an object.
    pub(super) arguments: Option<Value>,
}

impl WireFunctionIn {
    /// The arguments as text: a string as it is, any other JSON written out, `null` empty.
    pub(super) fn arguments_text(&self) -> String {
        match &self.arguments {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        }
    }
}

/// Token counts as servers send them; a missing count is zero, a missing total the sum.
#[derive(Deserialize)]
pub(super) struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    total_tokens: Option<u64>,
    prompt_tokens_details: Option<WirePromptDetails>,
    completion_tokens_details: Option<WireCompletionDetails>,
}

/// `usage.prompt_tokens_details`: the prompt tokens read from the cache.
#[derive(Deserialize)]
struct WirePromptDetails {
    cached_tokens: Option<u64>,
}

/// `usage.completion_tokens_details`: the completion tokens spent reasoning.
#[derive(Deserialize)]
struct WireCompletionDetails {
    reasoning_tokens: Option<u64>,
}

impl WireUsage {
    pub(super) fn usage(&self) -> Usage {
        let prompt = self.prompt_tokens.unwrap_or(0);
        let completion = self.completion_tokens.unwrap_or(0);
        let total = self
            .total_tokens
            .unwrap_or_else(|| prompt.saturating_add(completion));
        let cached = (self.prompt_tokens_details.as_ref()).and_then(|d| d.cached_tokens);
        let reasoning = (self.completion_tokens_details.as_ref()).and_then(|d| d.reasoning_tokens);
        Usage::new(prompt, completion, total)
            .with_cache(cached.unwrap_or(0), 0)
            .with_reasoning(reasoning.unwrap_or(0))
    }
}

impl ChatCompletion {
    /// The first choice as an assistant message, and the usage if the server gave it.
    pub(super) fn into_message(self, body: &[u8]) -> Result<(Message, Option<Usage>), OpenAiError> {
        let usage = self.usage.as_ref().map(WireUsage::usage);
        let choice = self
            .choices
            .unwrap_or_default()
            .into_iter()
            .find(|choice| choice.index.unwrap_or(0) == 0)
            .and_then(|choice| choice.message)
            .ok_or_else(|| OpenAiError::malformed_response("no choice with a message", body))?;
        let mut reply = MessageAccumulator::default();
        reply.push_text(choice.content.as_deref().unwrap_or_default());
        reply.push_text(choice.refusal.as_deref().unwrap_or_default());
        for (index, call) in choice
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let function = call.function.as_ref();
            reply.push(ModelDelta::ToolCall {
                index,
                id: call.id,
                name: function.and_then(|f| f.name.clone()),
                arguments: function
                    .map(WireFunctionIn::arguments_text)
                    .unwrap_or_default(),
            });
        }
        Ok((reply.finish(), usage))
    }
}

/// One chunk of a streamed chat completion.
#[derive(Deserialize)]
pub(super) struct ChatChunk {
    pub(super) choices: Option<Vec<ChunkChoice>>,
    pub(super) usage: Option<WireUsage>,
    pub(super) error: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct ChunkChoice {
    pub(super) index: Option<u32>,
    pub(super) delta: Option<ChunkDelta>,
}

#[derive(Deserialize)]
pub(super) struct ChunkDelta {
    pub(super) content: Option<String>,
    pub(super) refusal: Option<String>,
    pub(super) tool_calls: Option<Vec<WireCallIn>>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use serde_json::json;

    use super::{ChatCompletion, request_body};
    use crate::message::{Message, ToolCall};
    use crate::model::ModelRequest;
    use crate::model::ToolChoice;
    use crate::providers::openai::OpenAiModel;
    use crate::tool::ToolInfo;

    fn model() -> OpenAiModel {
        OpenAiModel::builder()
            .base_url("http://127.0.0.1:9/v1")
            .model("m")
            .extra_body("top_k", 20)
            .extra_body("temperature", 1.5)
            .build()
            .unwrap()
    }

    fn history() -> ModelRequest {
        let mut request = ModelRequest::new(
            vec![
                Message::system("Be brief."),
                Message::user("Weather in Paris?"),
                Message::assistant_with_calls("", vec![ToolCall::raw("c1", "weather", "")]),
                Message::tool_error("c1", "weather", "invalid arguments"),
            ]
            .into(),
        );
        request.tools = Arc::from([Arc::new(ToolInfo::new("weather", "The weather"))]);
        request
    }

    #[test]
    fn images_and_files_go_in_openai_parts_and_other_providers_reasoning_stays_out() {
        use crate::content::{Content, Part, Reasoning, Source};
        let photo = Part::image(Source::base64("image/png", "iVBO"));
        let pdf = Part::file(
            Source::base64("application/pdf", "JVBE"),
            Some("a.pdf".into()),
        );
        let question = Content::from(vec![Part::text("What is this?"), photo.clone(), pdf]);
        let thinking =
            Part::Reasoning(Reasoning::new("anthropic", "hmm").with_data("signature", "c2ln"));
        let reply = Content::from(vec![thinking, Part::text("Let me chart it.")]);
        let chart = Content::from(vec![Part::text("the chart:"), photo]);
        let request = ModelRequest::new(
            vec![
                Message::user(question),
                Message::assistant_with_calls(reply, vec![ToolCall::raw("c1", "chart", "{}")]),
                Message::tool("c1", "chart", chart),
            ]
            .into(),
        );
        let body = request_body(&model().shared, &request);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(
            messages[0]["content"],
            json!([
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "a.pdf"}},
            ])
        );
        // The reasoning of another provider is not sent; no signature leaves.
        assert_eq!(messages[1]["content"], "Let me chart it.");
        assert!(!body.to_string().contains("c2ln"));
        // The tool's image reaches the model in a user message after the results.
        assert_eq!(
            messages[2]["content"],
            "the chart:\n[an image: image/png, 4 base64 bytes]"
        );
        assert_eq!(messages[3]["role"], "user");
        assert_eq!(
            messages[3]["content"][1],
            json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}})
        );
        assert_eq!(messages.len(), 4);
    }

    #[test]
    fn the_history_is_sent_with_empty_content_for_tool_only_turns() {
        let body = request_body(&model().shared, &history());
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "invalid arguments"}
            ])
        );
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert!(body.get("tool_choice").is_none(), "auto is the default");
    }

    #[test]
    fn options_are_sent_and_win_over_extra_fields() {
        let mut request = history();
        request.options.temperature = Some(0.25);
        request.options.max_tokens = Some(64);
        request.options.tool_choice = ToolChoice::Tool("weather".into());
        request.options.parallel_tool_calls = Some(false);
        request.options.stop = vec!["END".into()];
        request.options.seed = Some(7);
        let body = request_body(&model().shared, &request);
        assert_eq!(body["temperature"], 0.25);
        assert_eq!(body["top_k"], 20);
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "function": {"name": "weather"}})
        );
        assert_eq!(body["parallel_tool_calls"], false);
        assert_eq!(body["stop"], json!(["END"]));
        assert_eq!(body["seed"], 7);
        assert_eq!(body["tools"][0]["function"]["name"], "weather");
        assert_eq!(body["tools"][0]["function"]["strict"], false);
    }

    #[test]
    fn a_response_format_is_sent_as_a_json_schema() {
        let mut request = ModelRequest::new(vec![Message::user("hi")].into());
        let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
        let format = crate::model::ResponseFormat::json_schema("answer", schema.clone());
        request.options.response_format = Some(Arc::new(format.strict(true)));
        let body = request_body(&model().shared, &request);
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": true}})
        );
        let body = request_body(&model().shared, &ModelRequest::new(vec![].into()));
        assert!(body.get("response_format").is_none());
    }

    #[test]
    fn without_tools_no_tool_choice_is_sent() {
        let mut request = ModelRequest::new(vec![Message::user("hi")].into());
        request.options.tool_choice = ToolChoice::Required;
        request.options.parallel_tool_calls = Some(true);
        let body = request_body(&model().shared, &request);
        assert!(body.get("tools").is_none());
        assert!(body.get("tool_choice").is_none());
        assert!(body.get("parallel_tool_calls").is_none());
    }

    #[test]
    fn a_completion_with_null_content_and_object_arguments_becomes_a_message() {
        let body = json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
                {"type": "function", "function": {"name": "g", "arguments": {"y": 2}}}
            ]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}
        });
        let bytes = body.to_string();
        let completion: ChatCompletion = serde_json::from_str(&bytes).unwrap();
        let (message, usage) = completion.into_message(bytes.as_bytes()).unwrap();
        assert_eq!(message.content(), "");
        assert_eq!(
            message.tool_calls(),
            [
                ToolCall::raw("a", "f", "{\"x\":1}"),
                ToolCall::raw("call_1", "g", "{\"y\":2}")
            ]
        );
        let usage = usage.unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.total_tokens
            ),
            (10, 5, 15)
        );
    }

    #[test]
    fn a_completion_without_choices_is_malformed() {
        let completion: ChatCompletion = serde_json::from_str(r#"{"choices": []}"#).unwrap();
        let error = completion.into_message(b"{}").unwrap_err();
        assert!(error.to_string().contains("no choice"), "{error}");
    }
}
