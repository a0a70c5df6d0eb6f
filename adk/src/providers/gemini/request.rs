//! The body of a `generateContent` request: the history as `contents` (roles `user` and
//! `model`), the system messages as `systemInstruction`, the tools as
//! `functionDeclarations`, the options as `generationConfig` and `toolConfig`.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::Shared;
use super::error::GeminiError;
use super::schema;
use super::{MADE_ID, PROVIDER, THOUGHT_SIGNATURE};
use crate::content::{Content, Part, Reasoning, Source};
use crate::message::{Message, ToolCall};
use crate::model::{ModelRequest, ToolChoice};

/// Where a tool result's images and files go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolMedia {
    /// Inside the `functionResponse`, as its `parts` (`inlineData` / `fileData`): the
    /// current API's multimodal function responses (Gemini 3 models).
    #[default]
    InFunctionResponse,
    /// As `inlineData` / `fileData` parts of the same user turn, after the
    /// `functionResponse` parts: for models before Gemini 3, which read no media inside a
    /// function response.
    BesideFunctionResponse,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireContent<'a> {
    role: &'static str,
    parts: Vec<WirePart<'a>>,
}

/// One part of a content: exactly one of its data fields, and a thought signature when the
/// model gave it one.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct WirePart<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thought: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inline_data: Option<Blob<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file_data: Option<FileData<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    function_call: Option<FunctionCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    function_response: Option<FunctionResponse<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thought_signature: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Blob<'a> {
    mime_type: &'a str,
    data: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FileData<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    mime_type: Option<&'a str>,
    file_uri: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<&'a str>,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    name: &'a str,
    args: Value,
}

#[derive(Serialize)]
struct FunctionResponse<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    name: &'a str,
    response: Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parts: Vec<MediaPart<'a>>,
}

/// A part inside a `functionResponse` (`FunctionResponsePart`): media only.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MediaPart<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    inline_data: Option<Blob<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file_data: Option<FileData<'a>>,
}

/// The JSON body for one model request.
///
/// # Errors
///
/// [`GeminiError::UnsupportedPart`] for a part Gemini cannot take: a `data:` URL that is
/// not base64, an image or file at a URL without a media type.
pub(super) fn request_body(shared: &Shared, request: &ModelRequest) -> Result<Value, GeminiError> {
    let mut body = Map::new();
    let history: &[Message] = &request.messages;
    body.insert(
        "contents".into(),
        to_value(contents(history, shared.tool_media)?),
    );
    let system: Vec<Value> = (history.iter())
        .filter_map(|m| match m {
            Message::System { content } => Some(json!({"text": content})),
            _ => None,
        })
        .collect();
    if !system.is_empty() {
        body.insert("systemInstruction".into(), json!({"parts": system}));
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = (request.tools.iter())
            .map(|tool| {
                let mut declaration = json!({"name": tool.name, "description": tool.description});
                if has_properties(&tool.parameters) {
                    declaration["parameters"] = schema::to_gemini(&tool.parameters);
                }
                declaration
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
        if let Some(config) = tool_config(&request.options.tool_choice) {
            body.insert("toolConfig".into(), config);
        }
    }
    let generation = generation_config(shared, request);
    if !generation.is_empty() {
        body.insert("generationConfig".into(), generation.into());
    }
    for (name, value) in &shared.extra_body {
        body.entry(name.clone()).or_insert_with(|| value.clone());
    }
    Ok(Value::Object(body))
}

/// Whether a tool's schema declares any parameter (an empty object schema is left out:
/// a declaration without `parameters` is a function of no arguments).
fn has_properties(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
}

fn tool_config(choice: &ToolChoice) -> Option<Value> {
    let config = match choice {
        ToolChoice::Auto => return None,
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
    };
    Some(json!({"functionCallingConfig": config}))
}

fn generation_config(shared: &Shared, request: &ModelRequest) -> Map<String, Value> {
    let options = &request.options;
    let mut config = shared.generation_config.clone();
    let mut set = |name: &str, value: Value| {
        config.insert(name.into(), value);
    };
    if let Some(temperature) = options.temperature {
        set("temperature", json!(temperature));
    }
    if let Some(top_p) = options.top_p {
        set("topP", json!(top_p));
    }
    if let Some(max) = options.max_tokens {
        set("maxOutputTokens", json!(max));
    }
    if !options.stop.is_empty() {
        set("stopSequences", json!(options.stop));
    }
    if let Some(seed) = options.seed {
        // The API's seed is an int32.
        set("seed", json!(seed as i64 as i32));
    }
    if let Some(format) = options.response_format.as_deref() {
        set("responseMimeType", json!("application/json"));
        set("responseJsonSchema", format.schema.clone());
    }
    if let Some(thinking) = shared.thinking.to_json() {
        set("thinkingConfig", thinking);
    }
    config
}

fn to_value(contents: Vec<WireContent<'_>>) -> Value {
    // Serializing strings, numbers and JSON values cannot fail.
    serde_json::to_value(contents).unwrap_or(Value::Null)
}

/// The history (system messages aside) as Gemini's contents: users' and tool results'
/// turns as `user`, the assistant's as `model`; the results of one turn's calls in one
/// `user` content, in the calls' order.
fn contents(history: &[Message], media: ToolMedia) -> Result<Vec<WireContent<'_>>, GeminiError> {
    let mut out: Vec<WireContent<'_>> = Vec::with_capacity(history.len());
    let mut results_open = false;
    for (at, message) in history.iter().enumerate() {
        let is_result = matches!(message, Message::Tool { .. });
        let parts = match message {
            Message::System { .. } => continue,
            Message::User { content } => user_parts(content, at)?,
            Message::Assistant {
                content,
                tool_calls,
            } => model_parts(content, tool_calls, at)?,
            Message::Tool {
                call_id,
                name,
                content,
                is_error,
            } => result_parts(call_id, name, content, *is_error, media, at)?,
        };
        if parts.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if is_result && results_open => last.parts.extend(parts),
            _ => out.push(WireContent {
                role: if matches!(message, Message::Assistant { .. }) {
                    "model"
                } else {
                    "user"
                },
                parts,
            }),
        }
        results_open = is_result;
    }
    // A tool result's media beside the responses go after all of them.
    if media == ToolMedia::BesideFunctionResponse {
        for content in &mut out {
            content
                .parts
                .sort_by_key(|part| part.function_response.is_none());
        }
    }
    Ok(out)
}

/// A user's parts: text, images and files; reasoning (a user has none) stays out.
fn user_parts(content: &Content, at: usize) -> Result<Vec<WirePart<'_>>, GeminiError> {
    match content {
        Content::Text(text) if text.is_empty() => Ok(Vec::new()),
        Content::Text(text) => Ok(vec![text_part(text)]),
        Content::Parts(parts) => {
            let sendable = parts.iter().filter(|p| !matches!(p, Part::Reasoning(_)));
            sendable.map(|part| media_or_text(part, at)).collect()
        }
    }
}

fn text_part(text: &str) -> WirePart<'_> {
    WirePart {
        text: Some(text),
        ..WirePart::default()
    }
}

/// A text, image or file part in Gemini's form.
fn media_or_text(part: &Part, at: usize) -> Result<WirePart<'_>, GeminiError> {
    Ok(match part {
        Part::Text { text } => text_part(text),
        Part::Image(source) => media_part(source, "image", at)?,
        Part::File { source, .. } => media_part(source, "file", at)?,
        // Callers pass no reasoning here.
        Part::Reasoning(_) => WirePart::default(),
    })
}

/// An image or file: inline data (`inlineData`, also for a `data:` URL), or a URL
/// (`fileData`: a Files API URI, or an `https` URL the API fetches). A file's name is not
/// sent: the Gemini API's parts have no field for it (only media inside a function
/// response carry a `displayName`).
fn media_part<'a>(source: &'a Source, what: &str, at: usize) -> Result<WirePart<'a>, GeminiError> {
    let (inline_data, file_data) = media(source, None, what, at)?;
    Ok(WirePart {
        inline_data,
        file_data,
        ..WirePart::default()
    })
}

type Media<'a> = (Option<Blob<'a>>, Option<FileData<'a>>);

fn media<'a>(
    source: &'a Source,
    name: Option<&'a str>,
    what: &str,
    at: usize,
) -> Result<Media<'a>, GeminiError> {
    let refuse = |reason: &str| GeminiError::UnsupportedPart {
        part: format!("{what} of message {at}"),
        reason: reason.to_owned(),
    };
    match source {
        Source::Base64 { media_type, data } => Ok((
            Some(Blob {
                mime_type: media_type,
                data,
                display_name: name,
            }),
            None,
        )),
        Source::Url { url, media_type } => match url.strip_prefix("data:") {
            Some(rest) => {
                let (mime_type, data) = rest
                    .split_once(";base64,")
                    .ok_or_else(|| refuse("a data: URL that is not base64"))?;
                Ok((
                    Some(Blob {
                        mime_type,
                        data,
                        display_name: name,
                    }),
                    None,
                ))
            }
            None => {
                let mime_type = media_type.as_deref();
                if mime_type.is_none() {
                    return Err(refuse("a URL without a media type (fileData needs one)"));
                }
                Ok((
                    None,
                    Some(FileData {
                        mime_type,
                        file_uri: url,
                        display_name: name,
                    }),
                ))
            }
        },
    }
}

/// The model's turn: its parts in order (text, images, its signed reasoning), then its
/// function calls, each with the thought signature it came with.
///
/// A Gemini reasoning part goes back as it came: one that belongs to a call (its `id` is
/// the call's) on that `functionCall` part; a signed thought summary as a `thought` part;
/// a bare signature on the part after it (text, image or file), or as a part of empty
/// text when none follows (as the API streams it). Unsigned summaries and the reasoning
/// of other providers are not sent.
fn model_parts<'a>(
    content: &'a Content,
    calls: &'a [ToolCall],
    at: usize,
) -> Result<Vec<WirePart<'a>>, GeminiError> {
    let parts: &'a [Part] = match content {
        Content::Text(text) => {
            let text = (!text.is_empty()).then(|| text_part(text));
            let calls = calls.iter().map(|call| call_part(call, None));
            return Ok(text.into_iter().chain(calls).collect());
        }
        Content::Parts(parts) => parts.as_slice(),
    };
    let mut out = Vec::with_capacity(parts.len() + calls.len());
    let mut signature: Option<&'a str> = None;
    for part in parts {
        match part {
            Part::Reasoning(reasoning) => {
                let Some(data) = own_signature(reasoning) else {
                    continue;
                };
                if reasoning.id.is_some() {
                    // The signature of a call: it goes on the call's part below.
                    continue;
                }
                if let Some(earlier) = signature.take() {
                    out.push(signed_empty_text(earlier));
                }
                if reasoning.text.is_empty() {
                    signature = Some(data);
                } else {
                    out.push(WirePart {
                        text: Some(&reasoning.text),
                        thought: Some(true),
                        thought_signature: Some(data),
                        ..WirePart::default()
                    });
                }
            }
            other => {
                let mut wire = media_or_text(other, at)?;
                wire.thought_signature = signature.take();
                out.push(wire);
            }
        }
    }
    if let Some(last) = signature {
        out.push(signed_empty_text(last));
    }
    for call in calls {
        let signature = parts.iter().find_map(|part| match part {
            Part::Reasoning(r) if r.id.as_deref() == Some(call.id.as_str()) => own_signature(r),
            _ => None,
        });
        out.push(call_part(call, signature));
    }
    Ok(out)
}

/// The signature of a Gemini reasoning part, if it is one.
fn own_signature(reasoning: &Reasoning) -> Option<&str> {
    let ours =
        reasoning.provider == PROVIDER && reasoning.kind.as_deref() == Some(THOUGHT_SIGNATURE);
    ours.then_some(reasoning.data.as_deref()).flatten()
}

fn signed_empty_text(signature: &str) -> WirePart<'_> {
    WirePart {
        text: Some(""),
        thought_signature: Some(signature),
        ..WirePart::default()
    }
}

fn call_part<'a>(call: &'a ToolCall, signature: Option<&'a str>) -> WirePart<'a> {
    let args = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(args)) => Value::Object(args),
        // Arguments that are no JSON object (the model's malformed ones) go back as the
        // model wrote them, under a name it will recognise.
        _ if call.arguments.trim().is_empty() => json!({}),
        _ => json!({"arguments": call.arguments.as_str()}),
    };
    WirePart {
        function_call: Some(FunctionCall {
            id: gemini_id(&call.id),
            name: &call.name,
            args,
        }),
        thought_signature: signature,
        ..WirePart::default()
    }
}

/// A call id to send back as `id`: one Gemini gave (or another provider), not one we made.
fn gemini_id(id: &str) -> Option<&str> {
    (!id.is_empty() && !id.starts_with(MADE_ID)).then_some(id)
}

/// A tool result: a `functionResponse` (name, the call's id when Gemini gave one, the
/// output as a JSON object: the output itself when it is one, else `{"result": ...}`, or
/// `{"error": ...}` for a failure), with the result's images and files where `place` says.
fn result_parts<'a>(
    call_id: &'a str,
    name: &'a str,
    content: &'a Content,
    is_error: bool,
    place: ToolMedia,
    at: usize,
) -> Result<Vec<WirePart<'a>>, GeminiError> {
    let text = content.all_text();
    let response = if is_error {
        json!({"error": text})
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(output)) => Value::Object(output),
            Ok(other) if !text.trim().is_empty() => json!({"result": other}),
            _ => json!({"result": text}),
        }
    };
    let mut attached = Vec::new();
    if let Content::Parts(parts) = content {
        for part in parts.iter() {
            let (source, name, what) = match part {
                Part::Image(source) => (source, None, "image"),
                Part::File { source, name } => (source, name.as_deref(), "file"),
                _ => continue,
            };
            attached.push(media(source, name, what, at)?);
        }
    }
    let mut out = Vec::with_capacity(1 + attached.len());
    let (nested, beside) = match place {
        ToolMedia::InFunctionResponse => (attached, Vec::new()),
        ToolMedia::BesideFunctionResponse => (Vec::new(), attached),
    };
    out.push(WirePart {
        function_response: Some(FunctionResponse {
            id: gemini_id(call_id),
            name,
            response,
            parts: (nested.into_iter())
                .map(|(inline_data, file_data)| MediaPart {
                    inline_data,
                    file_data,
                })
                .collect(),
        }),
        ..WirePart::default()
    });
    out.extend(beside.into_iter().map(|(inline_data, file_data)| WirePart {
        inline_data,
        file_data,
        ..WirePart::default()
    }));
    Ok(out)
}
