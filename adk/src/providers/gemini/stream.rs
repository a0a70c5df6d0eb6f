//! Reading Gemini's replies into [`ModelDelta`]s ([`ReplyDecoder`]): each streamed chunk
//! (and a whole reply, which is one chunk) is a `GenerateContentResponse`, whose first
//! candidate's parts become text, reasoning, image, file and tool-call deltas, in order.

use std::borrow::Cow;
use std::collections::VecDeque;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::error::GeminiError;
use super::{MADE_ID, PROVIDER, THOUGHT_SIGNATURE};
use crate::content::{Part, Reasoning, Source};
use crate::model::ModelDelta;
use crate::model::Usage;
use crate::providers::sse::{Decode, Flow, SseEvent};

/// Finish reasons of a reply that ended as the model meant it to.
const NORMAL_FINISH: [&str; 3] = ["STOP", "MAX_TOKENS", "FINISH_REASON_UNSPECIFIED"];

/// One `GenerateContentResponse`: a streamed chunk, or a whole reply.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Chunk<'a> {
    #[serde(default)]
    candidates: Vec<Candidate>,
    prompt_feedback: Option<PromptFeedback>,
    usage_metadata: Option<UsageMetadata>,
    /// Borrowed: every chunk repeats it, and only the first is kept.
    #[serde(borrow)]
    response_id: Option<Borrowed<'a>>,
    error: Option<IgnoredAny>,
}

/// A string borrowed from the chunk's text when it has no escapes. (serde borrows a
/// `Cow<str>` field, but not one inside an `Option`: that one is always copied.)
#[derive(Deserialize)]
struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<CandidateContent>,
    finish_reason: Option<String>,
    finish_message: Option<String>,
    index: Option<u32>,
}

#[derive(Deserialize)]
struct CandidateContent {
    #[serde(default)]
    parts: Vec<WirePart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
    block_reason_message: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePart {
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    thought_signature: Option<String>,
    inline_data: Option<WireBlob>,
    file_data: Option<WireFileData>,
    function_call: Option<WireCall>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireBlob {
    mime_type: String,
    data: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFileData {
    mime_type: Option<String>,
    file_uri: String,
}

#[derive(Deserialize)]
struct WireCall {
    id: Option<String>,
    name: String,
    #[serde(default)]
    args: Option<Value>,
}

/// `usageMetadata`. Every streamed chunk carries the counts so far; the last is the
/// call's.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    thoughts_token_count: u64,
    #[serde(default)]
    tool_use_prompt_token_count: u64,
    #[serde(default)]
    cached_content_token_count: u64,
    total_token_count: Option<u64>,
}

impl UsageMetadata {
    /// Gemini's counts in ours. `promptTokenCount` includes the cached tokens
    /// (`cachedContentTokenCount`, our `cache_read_tokens`); the prompt that tools such
    /// as search added (`toolUsePromptTokenCount`) is input too. The thinking tokens
    /// (`thoughtsTokenCount`) are not in `candidatesTokenCount` but are billed at the
    /// output price: they are our `reasoning_tokens` and part of `completion_tokens`,
    /// so the total is Gemini's `totalTokenCount`.
    fn usage(&self) -> Usage {
        let prompt = self
            .prompt_token_count
            .saturating_add(self.tool_use_prompt_token_count);
        let completion = self
            .candidates_token_count
            .saturating_add(self.thoughts_token_count);
        let total = self
            .total_token_count
            .unwrap_or_else(|| prompt.saturating_add(completion));
        Usage::new(prompt, completion, total)
            .with_cache(self.cached_content_token_count, 0)
            .with_reasoning(self.thoughts_token_count)
    }
}

/// Reads Gemini's reply chunks into [`ModelDelta`]s.
///
/// One decoder reads one reply. Per part of the first candidate, in order:
///
/// - text: [`ModelDelta::Text`]; a thought summary (`"thought": true`):
///   [`ModelDelta::Reasoning`] pieces of provider `gemini`;
/// - an image (`inlineData` or `fileData` with an `image/*` type): [`Part::Image`]; other
///   media: [`Part::File`], both as [`ModelDelta::Part`];
/// - a `functionCall`: one whole [`ModelDelta::ToolCall`], with Gemini's id when it gives
///   one, else an id made from the reply's `responseId` and the call's position
///   (`gemini-{responseId}-{n}`), which is not sent back to Gemini;
/// - a `thoughtSignature`: a [`Reasoning`] of provider `gemini`, kind
///   `thought_signature`, with the signature as its data, as it came. On a function call
///   its `id` is the call's id; on a thought summary it is that summary's data; on any
///   other part it is a part of its own just before the part it was on (alone, for a
///   part of empty text). [`GeminiModel`](super::GeminiModel) sends each back in its
///   place.
///
/// The reply is complete when the body ends after a chunk with a `finishReason`: `STOP`
/// or `MAX_TOKENS` end it normally; any other reason (`SAFETY`, `RECITATION`,
/// `MALFORMED_FUNCTION_CALL`, ...) or a blocked prompt ends it with
/// [`GeminiError::Finished`].
#[derive(Debug, Default)]
pub struct ReplyDecoder {
    calls: usize,
    response_id: Option<String>,
    usage: Option<Usage>,
    finish: Option<(String, Option<String>)>,
}

impl ReplyDecoder {
    /// A decoder at the start of a reply.
    pub fn new() -> Self {
        ReplyDecoder::default()
    }

    /// Reads one event's chunk, adding its deltas to `out`. Gemini's streams have no
    /// terminator: the reply is complete when the body ends, which
    /// [`finish`](Self::finish) tells; this returns [`Flow::More`].
    ///
    /// # Errors
    ///
    /// [`GeminiError::MalformedChunk`] for data that is not a `GenerateContentResponse`,
    /// [`GeminiError::StreamError`] for an `{"error": ...}` chunk.
    pub fn decode(
        &mut self,
        event: &SseEvent<'_>,
        out: &mut impl Extend<ModelDelta>,
    ) -> Result<Flow, GeminiError> {
        let data = event.data();
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|e| GeminiError::malformed_chunk(data, e))?;
        if chunk.error.is_some() {
            return Err(GeminiError::from_error_chunk(data));
        }
        self.read(chunk, out);
        Ok(Flow::More)
    }

    /// Reads a parsed chunk.
    pub(super) fn read(&mut self, chunk: Chunk<'_>, out: &mut impl Extend<ModelDelta>) {
        if let Some(usage) = &chunk.usage_metadata {
            self.usage = Some(usage.usage());
        }
        if self.response_id.is_none() {
            self.response_id = chunk.response_id.map(|id| id.0.into_owned());
        }
        if let Some(PromptFeedback {
            block_reason: Some(reason),
            block_reason_message,
        }) = chunk.prompt_feedback
        {
            self.finish = Some((format!("prompt blocked: {reason}"), block_reason_message));
        }
        let Some(candidate) = (chunk.candidates.into_iter()).find(|c| c.index.unwrap_or(0) == 0)
        else {
            return;
        };
        if let Some(reason) = candidate.finish_reason {
            self.finish = Some((reason, candidate.finish_message));
        }
        for part in candidate.content.into_iter().flat_map(|c| c.parts) {
            self.part(part, out);
        }
    }

    /// One part's deltas.
    fn part(&mut self, part: WirePart, out: &mut impl Extend<ModelDelta>) {
        let signature =
            |data: String| Reasoning::new(PROVIDER, "").with_data(THOUGHT_SIGNATURE, data);
        if let Some(call) = part.function_call {
            let id = call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| self.made_id());
            if let Some(data) = part.thought_signature {
                let reasoning = signature(data).with_id(id.clone());
                out.extend(Some(ModelDelta::Part(Part::Reasoning(reasoning))));
            }
            let arguments = match call.args {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(args) => args.to_string(),
            };
            let index = self.calls;
            self.calls += 1;
            out.extend(Some(ModelDelta::ToolCall {
                index,
                id: Some(id),
                name: Some(call.name),
                arguments,
            }));
            return;
        }
        if part.thought {
            let text = part.text.unwrap_or_default();
            let mut piece = Reasoning::new(PROVIDER, text);
            if let Some(data) = part.thought_signature {
                piece = piece.with_data(THOUGHT_SIGNATURE, data);
            }
            out.extend(Some(ModelDelta::Reasoning(piece)));
            return;
        }
        if let Some(data) = part.thought_signature {
            out.extend(Some(ModelDelta::Part(Part::Reasoning(signature(data)))));
        }
        if let Some(blob) = part.inline_data {
            out.extend(Some(ModelDelta::Part(media(Source::base64(
                blob.mime_type,
                blob.data,
            )))));
        } else if let Some(file) = part.file_data {
            let source = Source::Url {
                url: file.file_uri,
                media_type: file.mime_type,
            };
            out.extend(Some(ModelDelta::Part(media(source))));
        } else if let Some(text) = part.text.filter(|t| !t.is_empty()) {
            out.extend(Some(ModelDelta::Text(text)));
        }
    }

    /// An id for a call that came without one.
    fn made_id(&mut self) -> String {
        let reply = self.response_id.get_or_insert_with(|| {
            let random = uuid::Uuid::new_v4().simple().to_string();
            random[..12].to_owned()
        });
        format!("{MADE_ID}{reply}-{}", self.calls)
    }

    /// The usage the reply reported (the last counts it sent), if it did.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// Whether the reply is complete, once its body has ended: `Done` after a chunk with
    /// a normal finish reason, `More` (cut short) without one.
    ///
    /// # Errors
    ///
    /// [`GeminiError::Finished`] when the reply ended for another reason, or its prompt
    /// was blocked.
    pub fn finish(&mut self) -> Result<Flow, GeminiError> {
        match self.finish.take() {
            None => Ok(Flow::More),
            Some((reason, _)) if NORMAL_FINISH.contains(&reason.as_str()) => Ok(Flow::Done),
            Some((reason, message)) => Err(GeminiError::Finished { reason, message }),
        }
    }
}

/// An image for an `image/*` media type, else a file.
fn media(source: Source) -> Part {
    match source.media_type() {
        Some(kind) if kind.starts_with("image/") => Part::Image(source),
        _ => Part::File { source, name: None },
    }
}

impl Decode for ReplyDecoder {
    type Error = GeminiError;

    fn decode(
        &mut self,
        event: &SseEvent<'_>,
        out: &mut VecDeque<ModelDelta>,
    ) -> Result<Flow, GeminiError> {
        ReplyDecoder::decode(self, event, out)
    }

    fn usage(&self) -> Option<Usage> {
        ReplyDecoder::usage(self)
    }

    fn end(&mut self) -> Result<Flow, GeminiError> {
        self.finish()
    }
}
