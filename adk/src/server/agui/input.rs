//! AG-UI's `RunAgentInput`, and the agent request it asks for: a new run on its
//! messages, or the resume of an interrupted run by its `resume` entries.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::AgUiRun;
use super::content::AgUiPart;
use crate::agent::AgentRequest;
use crate::checkpoint::CheckpointId;
use crate::interrupt::{Decision, InterruptAddress};
use crate::message::Message;
use crate::server::ApiError;
use crate::server::chat::{self, ChatMessage};
use crate::server::extract;

/// `RunAgentInput`: only `threadId`, `runId` and `messages` are required.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunAgentInput {
    pub(crate) thread_id: String,
    pub(crate) run_id: String,
    messages: Vec<ChatMessage<AgUiPart>>,
    #[serde(default)]
    context: Vec<Context>,
    #[serde(default)]
    state: Value,
    #[serde(default)]
    forwarded_props: Value,
    #[serde(default)]
    resume: Vec<ResumeEntry>,
}

#[derive(Debug, Deserialize)]
struct Context {
    description: String,
    value: String,
}

/// An answer to one interrupt: `{interruptId, status: "resolved" | "cancelled", payload}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResumeEntry {
    interrupt_id: String,
    status: ResumeStatus,
    #[serde(default)]
    payload: Value,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ResumeStatus {
    Resolved,
    Cancelled,
}

impl RunAgentInput {
    /// Reads a body (JSON whatever its content type says).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        let what = r#"an AG-UI RunAgentInput: {"threadId", "runId", "messages", ...}"#;
        extract::json(bytes, what)
    }

    /// The agent request, with the input's ids, state and forwarded props in its
    /// extensions as an [`AgUiRun`].
    pub(crate) fn into_request(self) -> Result<AgentRequest, ApiError> {
        let run = AgUiRun {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            state: self.state.clone(),
            forwarded_props: self.forwarded_props.clone(),
        };
        let request = if self.resume.is_empty() {
            AgentRequest::new(self.messages()?)
        } else {
            resume(self.resume)?
        };
        Ok(request.with_extension(run))
    }

    /// The context entries as one system message, then the messages.
    fn messages(&self) -> Result<Vec<Message>, ApiError> {
        let mut messages = Vec::with_capacity(self.messages.len() + 1);
        if !self.context.is_empty() {
            let lines = self
                .context
                .iter()
                .map(|c| format!("{}: {}", c.description, c.value));
            messages.push(Message::system(lines.collect::<Vec<_>>().join("\n")));
        }
        // Activity and reasoning messages are read past.
        let chat = self.messages.iter();
        let chat = chat.filter(|m| !matches!(m, ChatMessage::Other));
        chat::append(chat, &mut messages)
            .map_err(|e| ApiError::bad_request("invalid_body", e.message()))?;
        Ok(messages)
    }
}

/// The resume of the run the entries' interrupts ended: each entry's interrupt id is
/// the one the server sent (see [`interrupt_id`]), which names the checkpoint.
fn resume(entries: Vec<ResumeEntry>) -> Result<AgentRequest, ApiError> {
    let mut checkpoint: Option<CheckpointId> = None;
    let mut decisions = BTreeMap::new();
    for entry in entries {
        let (id, interrupt) = split_interrupt_id(&entry.interrupt_id)?;
        if checkpoint.as_ref().is_some_and(|c| *c != id) {
            let message = "the resume entries answer interrupts of different runs";
            return Err(ApiError::bad_request("invalid_body", message));
        }
        checkpoint = Some(id);
        decisions.insert(interrupt.to_owned(), decision(entry.status, entry.payload));
    }
    let checkpoint =
        checkpoint.ok_or_else(|| ApiError::bad_request("invalid_body", "no resume entry"))?;
    Ok(AgentRequest::resume(checkpoint, decisions))
}

/// The AG-UI id of one of our interrupts: its checkpoint, `|`, its own id (an id the
/// server makes and reads back; a client only passes it through).
pub(crate) fn interrupt_id(checkpoint: &CheckpointId, interrupt: &str) -> String {
    format!("{checkpoint}|{interrupt}")
}

fn split_interrupt_id(id: &str) -> Result<(CheckpointId, &str), ApiError> {
    let unknown = || {
        let message = format!("`{id}` is not an interrupt id this server sent");
        ApiError::new(
            axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_interrupt",
            message,
        )
    };
    // A thread's name, and so the checkpoint's id, may hold a `|` too: the split is the
    // first one after which an interrupt's address begins.
    let split = id.match_indices('|').find_map(|(at, _)| {
        let (checkpoint, interrupt) = (&id[..at], &id[at + 1..]);
        interrupt.parse::<InterruptAddress>().ok()?;
        Some((checkpoint.parse().ok()?, interrupt))
    });
    split.ok_or_else(unknown)
}

/// A resume entry as a [`Decision`]; see the mapping in the [module docs](super).
fn decision(status: ResumeStatus, payload: Value) -> Decision {
    let reason = |payload: &Value, default: &str| {
        let reason = payload.get("reason").and_then(Value::as_str);
        reason.unwrap_or(default).to_owned()
    };
    match status {
        ResumeStatus::Cancelled => Decision::Reject {
            reason: reason(&payload, "the user cancelled the call"),
        },
        ResumeStatus::Resolved => match payload.get("approved").and_then(Value::as_bool) {
            _ if payload.is_null() => Decision::Approve,
            Some(false) => Decision::Reject {
                reason: reason(&payload, "the user rejected the call"),
            },
            approved => match payload.get("arguments") {
                Some(arguments) => Decision::Edit {
                    arguments: arguments.clone(),
                },
                None if approved == Some(true) => Decision::Approve,
                None => Decision::Respond { answer: payload },
            },
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn resume_payloads_map_to_decisions() {
        let resolved = |payload| decision(ResumeStatus::Resolved, payload);
        assert_eq!(resolved(Value::Null), Decision::Approve);
        assert_eq!(resolved(json!({"approved": true})), Decision::Approve);
        assert_eq!(
            resolved(json!({"approved": false, "reason": "too much"})),
            Decision::Reject {
                reason: "too much".into()
            }
        );
        assert_eq!(
            resolved(json!({"arguments": {"amount": 5}})),
            Decision::Edit {
                arguments: json!({"amount": 5})
            }
        );
        assert_eq!(
            resolved(json!({"city": "Oslo"})),
            Decision::Respond {
                answer: json!({"city": "Oslo"})
            }
        );
        assert_eq!(
            decision(ResumeStatus::Cancelled, Value::Null),
            Decision::Reject {
                reason: "the user cancelled the call".into()
            }
        );
    }

    #[test]
    fn an_interrupt_id_reads_back_as_its_checkpoint_and_its_own_id() {
        let checkpoint: CheckpointId = "abc@2#r1".parse().unwrap();
        let id = interrupt_id(&checkpoint, "agent:bank/tool:c|1");
        let (read, interrupt) = split_interrupt_id(&id).unwrap();
        assert_eq!((read, interrupt), (checkpoint, "agent:bank/tool:c|1"));
        // A thread with a `|` in its name.
        let checkpoint: CheckpointId = "a|b@2#r1".parse().unwrap();
        let id = interrupt_id(&checkpoint, "agent:bank/tool:c1");
        let (read, interrupt) = split_interrupt_id(&id).unwrap();
        assert_eq!((read, interrupt), (checkpoint, "agent:bank/tool:c1"));
        assert_eq!(
            split_interrupt_id("agent:bank/tool:c1")
                .unwrap_err()
                .status(),
            422
        );
    }
}
