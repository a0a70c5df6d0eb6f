//! What `POST /v1/chat/completions` answers: a `chat.completion`, or a stream of
//! `chat.completion.chunk`s.

use serde_json::{Value, json};

use crate::agent::AgentEvent;
use crate::agent::AgentResult;
use crate::agent::RunStatus;
use crate::content::Part;
use crate::interrupt::PendingInterrupt;
use crate::message::Message;
use crate::model::Usage;
use crate::server::shown;

/// What every completion and chunk of one request shares.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    pub(crate) id: String,
    pub(crate) created: u64,
    pub(crate) model: String,
}

impl Envelope {
    pub(crate) fn new(model: &str) -> Self {
        Envelope {
            id: format!("chatcmpl-{}", uuid::Uuid::new_v4().simple()),
            created: super::unix_now(),
            model: model.to_owned(),
        }
    }

    /// The `chat.completion` of a finished (or interrupted) run.
    pub(crate) fn completion(&self, result: &AgentResult) -> Value {
        let (content, interrupt) = answer(&self.model, result);
        let mut message = json!({"role": "assistant", "content": content});
        if let Some(reasoning) = reasoning(&result.final_message) {
            message["reasoning_content"] = reasoning.into();
        }
        let mut completion = json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage(&result.usage.total),
        });
        if let Some(interrupt) = interrupt {
            completion["adk_interrupt"] = interrupt;
        }
        completion
    }

    /// A `chat.completion.chunk` with one choice.
    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        })
    }

    /// The chunk that carries `usage` (asked for with `stream_options.include_usage`).
    fn usage_chunk(&self, used: &Usage) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": usage(used),
        })
    }
}

/// The run's token counts, in OpenAI's shape: the sum of its model calls' usage as
/// they reported it (zeros from models that report none).
fn usage(usage: &Usage) -> Value {
    json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    })
}

/// The readable text of a reply's reasoning parts, apart by blank lines; `None` when
/// it has none (its opaque data is never sent).
fn reasoning(message: &Message) -> Option<String> {
    let parts = message.parts();
    let texts = parts.iter().filter_map(|part| match part {
        Part::Reasoning(reasoning) if !reasoning.text.is_empty() => Some(reasoning.text.as_str()),
        _ => None,
    });
    let joined = texts.collect::<Vec<_>>().join("\n\n");
    (!joined.is_empty()).then_some(joined)
}

/// The answer's text (its images and files as placeholders) and, for an interrupted
/// run, the `adk_interrupt` extension.
fn answer(model: &str, result: &AgentResult) -> (String, Option<Value>) {
    if result.status != RunStatus::Interrupted {
        return (shown::text(&result.final_message).into_owned(), None);
    }
    let checkpoint = result.checkpoint.as_ref().map(ToString::to_string);
    let ids: Vec<&str> = result.interrupts.iter().map(|i| i.id.as_str()).collect();
    let content = format!(
        "The run is waiting for a decision on {}. Resume it with POST /agents/{model}/runs \
         and {{\"resume\": {{\"checkpoint\": \"{}\", \"decisions\": {{...}}}}}}.",
        ids.join(", "),
        checkpoint.as_deref().unwrap_or_default(),
    );
    let extension = json!({
        "checkpoint": checkpoint,
        "interrupts": result.interrupts.iter().collect::<Vec<&PendingInterrupt>>(),
    });
    (content, Some(extension))
}

/// Turns a run's events into chunks: the model's text as it streams (each turn's text,
/// turns apart by a blank line), then a last chunk with `finish_reason: "stop"`.
#[derive(Debug)]
pub(crate) struct Chunks {
    envelope: Envelope,
    /// Whether the first chunk, with the role, is sent.
    started: bool,
    /// Whether any text is sent (the next turn's text starts with a blank line).
    sent_text: bool,
    /// Whether this turn streamed text deltas (its message then repeats them).
    turn_streamed: bool,
    /// Whether this turn streamed reasoning deltas (its message then repeats them).
    turn_reasoned: bool,
    /// Whether any reasoning is sent (the next turn's starts with a blank line).
    sent_reasoning: bool,
    /// The run's usage, once it completed.
    usage: Usage,
}

impl Chunks {
    pub(crate) fn new(envelope: Envelope) -> Self {
        Chunks {
            envelope,
            started: false,
            sent_text: false,
            turn_streamed: false,
            turn_reasoned: false,
            sent_reasoning: false,
            usage: Usage::default(),
        }
    }

    /// The chunk that carries the run's `usage`.
    pub(crate) fn usage_chunk(&self) -> Value {
        self.envelope.usage_chunk(&self.usage)
    }

    /// The chunks for one event of the run (none for tool events: the agent's tools are
    /// its own business).
    pub(crate) fn on_event(&mut self, event: &AgentEvent) -> Vec<Value> {
        let mut chunks = Vec::new();
        if !self.started {
            self.started = true;
            let delta = json!({"role": "assistant", "content": ""});
            chunks.push(self.envelope.chunk(delta, None));
        }
        match event {
            AgentEvent::TextDelta(text) if !text.is_empty() => {
                let opens_turn = !self.turn_streamed;
                self.turn_streamed = true;
                chunks.push(self.text(text, opens_turn));
            }
            AgentEvent::ReasoningDelta(text) if !text.is_empty() => {
                let opens_turn = !std::mem::replace(&mut self.turn_reasoned, true);
                chunks.push(self.reasoning(text, opens_turn));
            }
            AgentEvent::Message(message) => self.message(message, &mut chunks),
            AgentEvent::Completed(result) => {
                self.usage = result.usage.total;
                let (content, interrupt) = answer(&self.envelope.model, result);
                if interrupt.is_some() {
                    chunks.push(self.text(&content, true));
                }
                let mut last = self.envelope.chunk(json!({}), Some("stop"));
                if let Some(interrupt) = interrupt {
                    last["adk_interrupt"] = interrupt;
                }
                chunks.push(last);
            }
            _ => {}
        }
        chunks
    }

    /// The end of a turn: its reasoning, if it did not stream; its text, whole if it did
    /// not stream, with placeholders for its images and files.
    fn message(&mut self, message: &Message, chunks: &mut Vec<Value>) {
        if !std::mem::take(&mut self.turn_reasoned)
            && let Some(reasoning) = reasoning(message)
        {
            chunks.push(self.reasoning(&reasoning, true));
        }
        if std::mem::take(&mut self.turn_streamed) {
            if let Some(said) = shown::after_streamed(message) {
                chunks.push(self.text(&said, false));
            }
        } else {
            let text = shown::text(message);
            if !text.is_empty() {
                chunks.push(self.text(&text, true));
            }
        }
    }

    /// Reasoning as the servers that show it send it (DeepSeek, vLLM, OpenRouter); a
    /// turn's after earlier reasoning starts with a blank line.
    fn reasoning(&mut self, text: &str, opens_turn: bool) -> Value {
        let text = if opens_turn && self.sent_reasoning {
            format!("\n\n{text}")
        } else {
            text.to_owned()
        };
        self.sent_reasoning = true;
        self.envelope
            .chunk(json!({"reasoning_content": text}), None)
    }

    /// A text chunk; text that opens a turn after earlier text starts with a blank line.
    fn text(&mut self, text: &str, opens_turn: bool) -> Value {
        let content = if opens_turn && self.sent_text {
            format!("\n\n{text}")
        } else {
            text.to_owned()
        };
        self.sent_text = true;
        self.envelope.chunk(json!({"content": content}), None)
    }
}
