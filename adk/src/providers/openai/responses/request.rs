//! The JSON body of a Responses API request: the history as `input` items, the tools,
//! the options, and the reasoning and storage settings.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{PROVIDER, Shared};
use crate::content::{Content, Part, Reasoning, Source};
use crate::message::{Message, ToolCall};
use crate::model::{ModelRequest, ToolChoice};
use crate::tool::ToolInfo;

/// The body of a request.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<Cow<'a, str>>,
    input: Vec<Item<'a>>,
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
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Value>,
    store: bool,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    include: &'static [&'static str],
    stream: bool,
    /// The extra fields of the builder that the fields above do not set.
    #[serde(flatten)]
    extra: Extra<'a>,
}

/// Extra fields, but those named in `set`.
struct Extra<'a> {
    fields: &'a Map<String, Value>,
    set: Vec<&'static str>,
}

impl Serialize for Extra<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = (self.fields.iter()).filter(|(name, _)| !self.set.contains(&name.as_str()));
        serializer.collect_map(fields)
    }
}

impl Body<'_> {
    /// The names of the fields this body sets (those an extra field must not repeat).
    fn set(&self) -> Vec<&'static str> {
        let optional = [
            ("instructions", self.instructions.is_some()),
            ("tools", !self.tools.is_empty()),
            ("tool_choice", self.tool_choice.is_some()),
            ("parallel_tool_calls", self.parallel_tool_calls.is_some()),
            ("temperature", self.temperature.is_some()),
            ("top_p", self.top_p.is_some()),
            ("max_output_tokens", self.max_output_tokens.is_some()),
            ("text", self.text.is_some()),
            ("reasoning", self.reasoning.is_some()),
            ("include", !self.include.is_empty()),
        ];
        let present = optional.into_iter().filter(|(_, set)| *set);
        let mut names = vec!["model", "input", "store", "stream"];
        names.extend(present.map(|(name, _)| name));
        names
    }
}

/// One item of `input`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    /// A message: a string, or input parts (a user's); text (an assistant's).
    Message {
        role: &'static str,
        content: Input<'a>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: Input<'a>,
    },
    /// A reasoning item of this provider, written as the API writes it.
    #[serde(untagged)]
    Reasoning(ReasoningItem<'a>),
}

/// A reasoning item, its fields in the order the API writes them (`id`, `type`,
/// `encrypted_content`, `summary`): an item of one summary part goes back byte for byte
/// as it came.
#[derive(Serialize)]
struct ReasoningItem<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    encrypted_content: Option<&'a str>,
    summary: Vec<Summary<'a>>,
}

/// Text, or input parts.
#[derive(Serialize)]
#[serde(untagged)]
enum Input<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<InputPart<'a>>),
}

/// One part of a user message or of a tool's output.
#[derive(Serialize)]
#[serde(tag = "type")]
enum InputPart<'a> {
    #[serde(rename = "input_text")]
    Text { text: Cow<'a, str> },
    #[serde(rename = "input_image")]
    Image {
        image_url: Cow<'a, str>,
        detail: &'static str,
    },
    #[serde(rename = "input_file")]
    File {
        #[serde(skip_serializing_if = "Option::is_none")]
        file_data: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        file_url: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        filename: Option<Cow<'a, str>>,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "summary_text")]
struct Summary<'a> {
    text: &'a str,
}

/// The JSON body for one model request, written out (its items' fields in the order the
/// API writes them, which a JSON value would not keep).
pub(super) fn body(shared: &Shared, request: &ModelRequest) -> Vec<u8> {
    let options = &request.options;
    let has_tools = !request.tools.is_empty();
    let (instructions, history) = instructions(&request.messages);
    let mut body = Body {
        model: &shared.endpoint.model,
        instructions,
        input: items(history),
        tools: request.tools.iter().map(|tool| function(tool)).collect(),
        tool_choice: has_tools
            .then(|| tool_choice(&options.tool_choice))
            .flatten(),
        parallel_tool_calls: options.parallel_tool_calls.filter(|_| has_tools),
        temperature: options.temperature,
        top_p: options.top_p,
        max_output_tokens: options.max_tokens,
        text: options.response_format.as_deref().map(|format| {
            json!({"format": {"type": "json_schema", "name": format.name,
                              "schema": format.schema, "strict": format.strict}})
        }),
        reasoning: reasoning(shared),
        store: shared.store,
        include: if shared.encrypted_reasoning {
            &["reasoning.encrypted_content"]
        } else {
            &[]
        },
        stream: shared.stream,
        extra: Extra {
            fields: &shared.extra_body,
            set: Vec::new(),
        },
    };
    body.extra.set = body.set();
    // Writing out strings, numbers and JSON values cannot fail.
    serde_json::to_vec(&body).unwrap_or_default()
}

/// The system messages that open the history, joined, as `instructions`; and the rest.
fn instructions(history: &[Message]) -> (Option<Cow<'_, str>>, &[Message]) {
    let texts: Vec<&str> = history
        .iter()
        .map_while(|m| match m {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    let leading = texts.len();
    let instructions = match texts.len() {
        0 => None,
        1 => texts.first().map(|text| Cow::Borrowed(*text)),
        _ => Some(Cow::Owned(texts.join("\n\n"))),
    };
    (instructions, &history[leading..])
}

/// The history as input items.
fn items(history: &[Message]) -> Vec<Item<'_>> {
    let mut items = Vec::with_capacity(history.len() + 2);
    for message in history {
        match message {
            Message::System { content } => items.push(Item::Message {
                role: "system",
                content: Input::Text(Cow::Borrowed(content)),
            }),
            Message::User { content } => items.push(Item::Message {
                role: "user",
                content: input(content),
            }),
            Message::Assistant {
                content,
                tool_calls,
            } => assistant(content, tool_calls, &mut items),
            Message::Tool {
                call_id, content, ..
            } => items.push(Item::FunctionCallOutput {
                call_id: call_id.as_str(),
                output: input(content),
            }),
        }
    }
    items
}

/// An assistant turn: its parts in order (this provider's reasoning items as they came,
/// text as assistant messages), then its function calls.
fn assistant<'a>(content: &'a Content, calls: &'a [ToolCall], items: &mut Vec<Item<'a>>) {
    let mut text: Vec<Cow<'a, str>> = Vec::new();
    let parts: &[Part] = match content {
        Content::Text(only) if only.is_empty() => &[],
        Content::Text(only) => {
            text.push(Cow::Borrowed(only));
            &[]
        }
        Content::Parts(parts) => parts,
    };
    for part in parts {
        match part {
            Part::Text { text: piece } => text.push(Cow::Borrowed(piece)),
            Part::Reasoning(reasoning) => {
                let Some(item) = reasoning_item(reasoning) else {
                    // Another provider's reasoning is never sent.
                    continue;
                };
                flush_text(&mut text, items);
                items.push(item);
            }
            // The model's own images or files cannot go back as output text: it is told
            // what they were.
            other => text.push(Cow::Owned(other.placeholder().unwrap_or_default())),
        }
    }
    flush_text(&mut text, items);
    items.extend(calls.iter().map(|call| Item::FunctionCall {
        call_id: call.id.as_str(),
        name: call.name.as_str(),
        // The arguments go back as the model wrote them; "no arguments" as `{}`.
        arguments: if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        },
    }));
}

/// The assistant text gathered so far, as one assistant message.
fn flush_text<'a>(text: &mut Vec<Cow<'a, str>>, items: &mut Vec<Item<'a>>) {
    let content = match text.len() {
        0 => return,
        1 => text.pop().unwrap_or_default(),
        _ => Cow::Owned(std::mem::take(text).join("\n")),
    };
    text.clear();
    items.push(Item::Message {
        role: "assistant",
        content: Input::Text(content),
    });
}

/// A reasoning part as the reasoning item it came from, if it is this provider's (with
/// the id the item needs): its summary text as one summary part, its encrypted content
/// byte for byte.
fn reasoning_item(reasoning: &Reasoning) -> Option<Item<'_>> {
    if reasoning.provider != PROVIDER {
        return None;
    }
    let id = reasoning.id.as_deref()?;
    let summary = if reasoning.text.is_empty() {
        Vec::new()
    } else {
        vec![Summary {
            text: &reasoning.text,
        }]
    };
    let encrypted = reasoning.kind.as_deref() == Some("encrypted_content");
    Some(Item::Reasoning(ReasoningItem {
        id,
        kind: "reasoning",
        encrypted_content: reasoning.data.as_deref().filter(|_| encrypted),
        summary,
    }))
}

/// A user message's content, or a tool's output: text as a string, parts as input parts.
fn input(content: &Content) -> Input<'_> {
    match content {
        Content::Text(text) => Input::Text(Cow::Borrowed(text)),
        Content::Parts(parts) if parts.iter().all(|p| p.as_text().is_some()) => {
            Input::Text(content.all_text())
        }
        Content::Parts(parts) => Input::Parts(parts.iter().filter_map(input_part).collect()),
    }
}

/// One part as an input part; reasoning (of whichever provider) has no place in input.
fn input_part(part: &Part) -> Option<InputPart<'_>> {
    Some(match part {
        Part::Text { text } => InputPart::Text { text: text.into() },
        Part::Image(source) => InputPart::Image {
            image_url: url_of(source),
            detail: "auto",
        },
        Part::File {
            source: Source::Url { url, .. },
            name,
        } => InputPart::File {
            file_data: None,
            file_url: Some(url),
            filename: name.as_deref().map(Cow::Borrowed),
        },
        Part::File { source, name } => InputPart::File {
            file_data: Some(url_of(source).into_owned()),
            file_url: None,
            // Inline data needs a name: the file's, or one from its media type.
            filename: Some(match name {
                Some(name) => Cow::Borrowed(name),
                None => Cow::Owned(default_name(source.media_type())),
            }),
        },
        _ => return None,
    })
}

/// A name for an inline file that has none: `file.pdf`, `file.txt`, ... or `file`.
fn default_name(media_type: Option<&str>) -> String {
    let extension = match media_type.unwrap_or_default() {
        "application/pdf" => ".pdf",
        "text/plain" => ".txt",
        "text/markdown" => ".md",
        "text/csv" => ".csv",
        "application/json" => ".json",
        _ => "",
    };
    format!("file{extension}")
}

/// A URL for a source: its own, or a `data:` URL of its bytes.
fn url_of(source: &Source) -> Cow<'_, str> {
    match source {
        Source::Url { url, .. } => Cow::Borrowed(url),
        Source::Base64 { media_type, data } => {
            Cow::Owned(format!("data:{media_type};base64,{data}"))
        }
    }
}

/// A tool in the Responses format: the chat format's function, flattened.
fn function(tool: &ToolInfo) -> Value {
    let mut chat = tool.to_openai_function(tool.strict);
    let mut function = match chat.get_mut("function").map(Value::take) {
        Some(Value::Object(function)) => function,
        _ => Map::new(),
    };
    function.insert("type".to_owned(), json!("function"));
    Value::Object(function)
}

/// `tool_choice`: `auto` is left to the server's default.
fn tool_choice(choice: &ToolChoice) -> Option<Value> {
    match choice {
        ToolChoice::Auto => None,
        ToolChoice::None => Some(json!("none")),
        ToolChoice::Required => Some(json!("required")),
        ToolChoice::Tool(name) => Some(json!({"type": "function", "name": name})),
    }
}

/// `reasoning`: the effort and summary settings, when either is set.
fn reasoning(shared: &Shared) -> Option<Value> {
    if shared.effort.is_none() && shared.summary.is_none() {
        return None;
    }
    let mut reasoning = Map::new();
    if let Some(effort) = shared.effort {
        reasoning.insert("effort".to_owned(), json!(effort.as_str()));
    }
    if let Some(summary) = shared.summary {
        reasoning.insert("summary".to_owned(), json!(summary.as_str()));
    }
    Some(Value::Object(reasoning))
}
