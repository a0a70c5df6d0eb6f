//! What `POST /v1/chat/completions` answers: a `chat.completion`, or a stream of
//! `chat.completion.chunk`s.

use serde_json::{Value, json};

use crate::agent::AgentEvent;
use crate::agent::AgentResult;
use crate::agent::RunStatus;
use crate::interrupt::PendingInterrupt;
use crate::model::Usage;

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
        let mut completion = json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }],
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

/// The answer's text and, for an interrupted run, the `adk_interrupt` extension.
fn answer(model: &str, result: &AgentResult) -> (String, Option<Value>) {
    if result.status != RunStatus::Interrupted {
        return (result.final_message.content().to_owned(), None);
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
            // Reasoning as the servers that show it send it (DeepSeek, vLLM, OpenRouter).
            AgentEvent::ReasoningDelta(text) if !text.is_empty() => {
                let delta = json!({"reasoning_content": text});
                chunks.push(self.envelope.chunk(delta, None));
            }
            AgentEvent::Message(message) => {
                if !self.turn_streamed && !message.content().is_empty() {
                    chunks.push(self.text(message.content(), true));
                }
                self.turn_streamed = false;
            }
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
