//! AG-UI events, and the translation of a run's events into them.

use serde::Serialize;
use serde_json::{Value, json};

use super::input::interrupt_id;
use crate::agent::AgentError;
use crate::agent::AgentEvent;
use crate::agent::AgentResult;
use crate::agent::RunStatus;
use crate::interrupt::PendingInterrupt;
use crate::message::Message;
use crate::wire::WireError;

/// One AG-UI event: `type` in SCREAMING_SNAKE_CASE, fields in camelCase.
#[derive(Debug, Serialize)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub(crate) enum AgUiEvent {
    RunStarted {
        thread_id: String,
        run_id: String,
    },
    RunFinished {
        thread_id: String,
        run_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        outcome: Outcome,
    },
    RunError {
        message: String,
        code: String,
    },
    TextMessageStart {
        message_id: String,
        role: &'static str,
    },
    TextMessageContent {
        message_id: String,
        delta: String,
    },
    TextMessageEnd {
        message_id: String,
    },
    ToolCallStart {
        tool_call_id: String,
        tool_call_name: String,
        parent_message_id: String,
    },
    ToolCallArgs {
        tool_call_id: String,
        delta: String,
    },
    ToolCallEnd {
        tool_call_id: String,
    },
    ToolCallResult {
        message_id: String,
        tool_call_id: String,
        content: String,
        role: &'static str,
    },
}

/// Why a run ended: `{"type": "success"}` or `{"type": "interrupt", "interrupts": [...]}`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Outcome {
    Success,
    Interrupt { interrupts: Vec<Value> },
}

/// Turns a run's events into AG-UI events, keeping the ids of the message being
/// streamed.
#[derive(Debug)]
pub(crate) struct Translate {
    thread_id: String,
    run_id: String,
    /// The id of this turn's assistant message, once it has one.
    turn: Option<String>,
    /// Whether this turn's text message is open (started, not ended).
    text_open: bool,
    /// How many message ids this run made.
    ids: usize,
}

impl Translate {
    pub(crate) fn new(thread_id: String, run_id: String) -> Self {
        Translate {
            thread_id,
            run_id,
            turn: None,
            text_open: false,
            ids: 0,
        }
    }

    pub(crate) fn started(&self) -> AgUiEvent {
        AgUiEvent::RunStarted {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
        }
    }

    /// The AG-UI events for one event of the run.
    pub(crate) fn on_event(&mut self, event: &AgentEvent) -> Vec<AgUiEvent> {
        let mut events = Vec::new();
        match event {
            AgentEvent::TextDelta(text) if !text.is_empty() => self.text(text, &mut events),
            AgentEvent::Message(message) => self.message(message, &mut events),
            AgentEvent::ToolResult(record) => {
                events.push(AgUiEvent::ToolCallResult {
                    message_id: self.next_id(),
                    tool_call_id: record.call_id.to_string(),
                    content: record.content.clone(),
                    role: "tool",
                });
            }
            AgentEvent::Completed(result) => {
                self.close_text(&mut events);
                events.push(self.finished(result));
            }
            _ => {}
        }
        events
    }

    /// `RUN_ERROR` for a failed run.
    pub(crate) fn error(&self, error: &AgentError) -> AgUiEvent {
        let error = WireError::from(error);
        AgUiEvent::RunError {
            message: error.message,
            code: error.code.into_owned(),
        }
    }

    fn text(&mut self, text: &str, events: &mut Vec<AgUiEvent>) {
        let message_id = self.turn_id();
        if !self.text_open {
            self.text_open = true;
            events.push(AgUiEvent::TextMessageStart {
                message_id: message_id.clone(),
                role: "assistant",
            });
        }
        events.push(AgUiEvent::TextMessageContent {
            message_id,
            delta: text.to_owned(),
        });
    }

    /// The end of a turn: its text (whole, if it did not stream), then its tool calls.
    fn message(&mut self, message: &Message, events: &mut Vec<AgUiEvent>) {
        let streamed = self.text_open;
        if !streamed && !message.content().is_empty() {
            self.text(message.content(), events);
        }
        self.close_text(events);
        let parent = self.turn_id();
        for call in message.tool_calls() {
            events.push(AgUiEvent::ToolCallStart {
                tool_call_id: call.id.to_string(),
                tool_call_name: call.name.to_string(),
                parent_message_id: parent.clone(),
            });
            events.push(AgUiEvent::ToolCallArgs {
                tool_call_id: call.id.to_string(),
                delta: call.arguments.to_string(),
            });
            events.push(AgUiEvent::ToolCallEnd {
                tool_call_id: call.id.to_string(),
            });
        }
        self.turn = None;
    }

    fn close_text(&mut self, events: &mut Vec<AgUiEvent>) {
        if std::mem::take(&mut self.text_open) {
            let message_id = self.turn_id();
            events.push(AgUiEvent::TextMessageEnd { message_id });
        }
    }

    fn finished(&self, result: &AgentResult) -> AgUiEvent {
        let (result, outcome) = match (result.status, &result.checkpoint) {
            (RunStatus::Interrupted, Some(checkpoint)) => {
                let interrupts = result.interrupts.iter().map(|pending| {
                    let id = interrupt_id(checkpoint, &pending.id);
                    interrupt(id, pending)
                });
                let interrupts = interrupts.collect();
                (None, Outcome::Interrupt { interrupts })
            }
            _ => {
                let answer = Value::from(result.final_message.content());
                (Some(answer), Outcome::Success)
            }
        };
        AgUiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result,
            outcome,
        }
    }

    fn turn_id(&mut self) -> String {
        if let Some(id) = &self.turn {
            return id.clone();
        }
        let id = self.next_id();
        self.turn = Some(id.clone());
        id
    }

    fn next_id(&mut self) -> String {
        self.ids += 1;
        format!("{}-{}", self.run_id, self.ids)
    }
}

/// An AG-UI `Interrupt`: `reason` `tool_call` (with `toolCallId`) or `hook`, `message`
/// from the payload when it has one, and the payload itself in `metadata`.
fn interrupt(id: String, pending: &PendingInterrupt) -> Value {
    let payload = &pending.payload;
    let message = payload.as_str().or_else(|| {
        let text = |key| payload.get(key).and_then(Value::as_str);
        text("message").or_else(|| text("question"))
    });
    let mut interrupt = json!({
        "id": id,
        "reason": if pending.call.is_some() { "tool_call" } else { "hook" },
        "metadata": {"payload": payload, "adkInterruptId": pending.id},
    });
    if let Some(message) = message {
        interrupt["message"] = message.into();
    }
    if let Some(call) = &pending.call {
        interrupt["toolCallId"] = call.id.as_str().into();
    }
    interrupt
}
