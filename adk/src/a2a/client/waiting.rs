//! A remote task that waits for input: what the caller keeps of it ([`Waiting`]), the
//! interrupts its question makes ([`listed_interrupts`], [`asked`]), and the message part
//! that answers it with the person's decisions ([`answer`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::progress::parts_text;
use crate::a2a::{Message, Part, PartContent};
use crate::interrupt::{Decision, InterruptAddress, PendingInterrupt};

/// A remote task that waits for input, as the caller's run keeps it.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Waiting {
    pub(crate) task_id: String,
    pub(crate) context_id: Option<String>,
}

/// The interrupts a remote agent lists in the message that asks for input (a data part
/// `{"interrupts": [{"id": ..., "payload": ...}]}`, as tower-adk's A2A server writes
/// them), keeping only ids that are interrupt addresses.
pub(crate) fn listed_interrupts(question: &Message) -> Vec<PendingInterrupt> {
    question
        .parts
        .iter()
        .filter_map(|part| part.as_data()?.get("interrupts"))
        .filter_map(|listed| Vec::<PendingInterrupt>::deserialize(listed).ok())
        .flatten()
        .filter(|interrupt| interrupt.address().is_ok())
        .collect()
}

/// The one interrupt of a task that asks for input without listing interrupts: at
/// `id`, showing the agent's question (its text, its data parts, all its parts).
pub(crate) fn asked(
    id: InterruptAddress,
    agent: &str,
    task_id: &str,
    question: Option<&Message>,
) -> PendingInterrupt {
    let parts = question.map_or(&[][..], |m| &m.parts[..]);
    let text: Vec<Part> = parts
        .iter()
        .filter(|p| p.as_data().is_none())
        .cloned()
        .collect();
    let data: Vec<&Value> = parts.iter().filter_map(Part::as_data).collect();
    PendingInterrupt {
        id: id.to_string(),
        call: None,
        payload: json!({
            "agent": agent,
            "task_id": task_id,
            "text": parts_text(&text),
            "data": data,
            "parts": parts,
        }),
    }
}

/// The parts that answer a remote task with the person's decisions, keyed by the
/// remote's interrupt ids: one data part `{"decisions": {...}}`, or the text of a lone
/// `respond` decision whose answer is a text.
pub(crate) fn answer(decisions: &BTreeMap<String, Decision>) -> Vec<Part> {
    let mut each = decisions.values();
    if let (
        Some(Decision::Respond {
            answer: Value::String(text),
        }),
        None,
    ) = (each.next(), each.next())
    {
        return vec![Part::text(text.clone())];
    }
    vec![Part::new(PartContent::Data(
        json!({ "decisions": decisions }),
    ))]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn decisions_go_as_one_data_part_and_a_lone_text_answer_as_text() {
        let id = "agent:billing/tool:c9".to_owned();
        let approve = BTreeMap::from([(id.clone(), Decision::Approve)]);
        let parts = answer(&approve);
        assert_eq!(
            parts[0].as_data(),
            Some(&json!({"decisions": {"agent:billing/tool:c9": {"type": "approve"}}}))
        );
        let respond = BTreeMap::from([(
            id,
            Decision::Respond {
                answer: json!("Yes, 40 EUR."),
            },
        )]);
        assert_eq!(answer(&respond)[0].as_text(), Some("Yes, 40 EUR."));
    }

    #[test]
    fn a_remote_agent_s_listed_interrupts_are_read_from_its_question() {
        let question: Message = serde_json::from_value(json!({
            "messageId": "m", "role": "ROLE_AGENT",
            "parts": [{"text": "Approve?"}, {"data": {"interrupts": [
                {"id": "agent:billing/tool:c9", "payload": {"question": "Refund?"}},
                {"id": "not an address", "payload": {}}
            ]}}]
        }))
        .unwrap();
        let listed = listed_interrupts(&question);
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, "agent:billing/tool:c9");
        assert_eq!(listed[0].payload["question"], "Refund?");
    }

    #[test]
    fn a_question_without_listed_interrupts_is_shown_whole() {
        let question: Message = serde_json::from_value(json!({
            "messageId": "m", "role": "ROLE_AGENT",
            "parts": [{"text": "Refund 40 EUR?"}, {"data": {"amount": 40}}]
        }))
        .unwrap();
        let id = InterruptAddress::for_call("ledger", "t1");
        let pending = asked(id, "ledger", "t1", Some(&question));
        assert_eq!(pending.id, "agent:ledger/tool:t1");
        assert_eq!(pending.payload["text"], "Refund 40 EUR?");
        assert_eq!(pending.payload["data"], json!([{"amount": 40}]));
    }
}
