//! [`Translate`]: a run's events into AG-UI events.

use serde_json::Value;

use super::content::tool_content;
use super::events::{AgUiEvent, Outcome, TokenUsage, interrupt};
use super::input::interrupt_id;
use crate::agent::AgentError;
use crate::agent::AgentEvent;
use crate::agent::AgentResult;
use crate::agent::RunStatus;
use crate::content::Part;
use crate::message::Message;
use crate::model::{Prices, UsageTotals};
use crate::server::shown;
use crate::wire::WireError;

/// Turns a run's events into AG-UI events, keeping the ids of the messages being
/// streamed and what the run's model calls used.
#[derive(Debug)]
pub(crate) struct Translate {
    thread_id: String,
    run_id: String,
    /// The id of this turn's assistant message, once it has one.
    turn: Option<String>,
    /// Whether this turn's text message is open (started, not ended).
    text_open: bool,
    /// The open reasoning: the span's id and its message's.
    reasoning: Option<(String, String)>,
    /// Whether this turn's reasoning streamed (its message then repeats it).
    turn_reasoned: bool,
    /// How many message ids this run made.
    ids: usize,
    /// What this run's model calls used (a resumed run's: since it resumed).
    usage: UsageTotals,
    /// The agent's price table, if it has one.
    prices: Option<Prices>,
}

impl Translate {
    pub(crate) fn new(thread_id: String, run_id: String, prices: Option<Prices>) -> Self {
        Translate {
            thread_id,
            run_id,
            turn: None,
            text_open: false,
            reasoning: None,
            turn_reasoned: false,
            ids: 0,
            usage: UsageTotals::default(),
            prices,
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
            AgentEvent::ReasoningDelta(text) if !text.is_empty() => {
                self.turn_reasoned = true;
                self.reasoning(text, &mut events);
            }
            AgentEvent::TextDelta(text) if !text.is_empty() => {
                self.close_reasoning(&mut events);
                self.text(text, &mut events);
            }
            AgentEvent::Usage { model, usage } => self.usage.add(model.as_deref(), *usage),
            AgentEvent::Message(message) => self.message(message, &mut events),
            AgentEvent::ToolResult(record) => {
                events.push(AgUiEvent::ToolCallResult {
                    message_id: self.next_id(),
                    tool_call_id: record.call_id.to_string(),
                    content: tool_content(record),
                    role: "tool",
                });
            }
            AgentEvent::Completed(result) => {
                self.close_reasoning(&mut events);
                self.close_text(&mut events);
                events.extend(self.cost());
                events.push(self.finished(result));
            }
            _ => {}
        }
        events
    }

    /// `RUN_ERROR` for a failed run, with what its model calls used before it failed.
    pub(crate) fn error(&self, error: &AgentError) -> AgUiEvent {
        let error = WireError::from(error);
        AgUiEvent::RunError {
            message: error.message,
            code: error.code.into_owned(),
            usage: TokenUsage::of(&self.usage),
        }
    }

    /// Reasoning text: a reasoning span and its message open at the first.
    fn reasoning(&mut self, text: &str, events: &mut Vec<AgUiEvent>) {
        let message_id = match &self.reasoning {
            Some((_, message_id)) => message_id.clone(),
            None => {
                let (span, message_id) = (self.next_id(), self.next_id());
                events.push(AgUiEvent::ReasoningStart {
                    message_id: span.clone(),
                });
                events.push(AgUiEvent::ReasoningMessageStart {
                    message_id: message_id.clone(),
                    role: "reasoning",
                });
                self.reasoning = Some((span, message_id.clone()));
                message_id
            }
        };
        events.push(AgUiEvent::ReasoningMessageContent {
            message_id,
            delta: text.to_owned(),
        });
    }

    fn close_reasoning(&mut self, events: &mut Vec<AgUiEvent>) {
        if let Some((span, message_id)) = self.reasoning.take() {
            events.push(AgUiEvent::ReasoningMessageEnd { message_id });
            events.push(AgUiEvent::ReasoningEnd { message_id: span });
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

    /// The end of a turn: its reasoning (if it did not stream), its text (whole, if it
    /// did not stream; with placeholders for its images and files), then its tool calls.
    fn message(&mut self, message: &Message, events: &mut Vec<AgUiEvent>) {
        self.close_reasoning(events);
        if !std::mem::take(&mut self.turn_reasoned) {
            let parts = message.parts();
            for part in parts.iter() {
                if let Part::Reasoning(reasoning) = part
                    && !reasoning.text.is_empty()
                {
                    self.reasoning(&reasoning.text, events);
                    self.close_reasoning(events);
                }
            }
        }
        let said = if self.text_open {
            shown::after_streamed(message)
        } else {
            Some(shown::text(message).into_owned()).filter(|text| !text.is_empty())
        };
        if let Some(said) = said {
            self.text(&said, events);
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

    /// `CUSTOM` `cost`, when the agent has prices and the run's calls reported usage.
    fn cost(&self) -> Option<AgUiEvent> {
        let prices = self.prices.as_ref().filter(|_| self.usage.calls > 0)?;
        let cost = self.usage.cost(prices);
        Some(AgUiEvent::Custom {
            name: "cost",
            value: serde_json::to_value(cost).unwrap_or_default(),
        })
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
                let answer = Value::from(shown::text(&result.final_message));
                (Some(answer), Outcome::Success)
            }
        };
        AgUiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result,
            outcome,
            usage: TokenUsage::of(&self.usage),
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
