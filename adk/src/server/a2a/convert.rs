//! Between A2A's messages and ours: a caller's message as a run's input, the decisions a
//! message on an input-required task carries, and the agent's side as A2A messages.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::error::A2aError;
use crate::a2a::{Message, Part, PartContent, Role};
use crate::content::{self, Source};
use crate::interrupt::{Decision, PendingInterrupt};
use crate::wire::WireError;

/// The caller's message as our user message: text parts as text, files by URL or bytes
/// as images (by their media type) or files, data parts as their JSON text. A message
/// with no parts is refused.
pub(super) fn user_message(message: &Message) -> Result<crate::message::Message, A2aError> {
    if message.parts.is_empty() {
        return Err(A2aError::invalid_params("the message has no parts"));
    }
    let parts: Vec<content::Part> = message.parts.iter().map(our_part).collect();
    if let [content::Part::Text { text }] = parts.as_slice() {
        return Ok(crate::message::Message::user(text.as_str()));
    }
    Ok(crate::message::Message::user(parts))
}

fn our_part(part: &Part) -> content::Part {
    let media_type = part.media_type.clone();
    let source = match &part.content {
        PartContent::Text(text) => return content::Part::text(text),
        PartContent::Data(data) => return content::Part::text(data.to_string()),
        PartContent::Url(url) => Source::Url {
            url: url.clone(),
            media_type: media_type.clone(),
        },
        PartContent::Raw(bytes) => {
            let media_type = media_type.as_deref().unwrap_or("application/octet-stream");
            Source::from_bytes(media_type, bytes)
        }
    };
    let image = media_type.is_some_and(|m| m.starts_with("image/"));
    if image {
        content::Part::image(source)
    } else {
        content::Part::file(source, part.filename.clone())
    }
}

/// The decisions a message on an input-required task carries: a data part
/// `{"decisions": {"INTERRUPT ID": decision}}`; or, when it is text only and one
/// interrupt waits whose payload allows an answer (or does not say), the text as the
/// answer ([`Decision::Respond`]).
pub(super) fn decisions(
    message: &Message,
    pending: &[PendingInterrupt],
) -> Result<BTreeMap<String, Decision>, A2aError> {
    let data = message.parts.iter().filter_map(Part::as_data);
    if let Some(decisions) = data.filter_map(|data| data.get("decisions")).next() {
        return serde_json::from_value(decisions.clone()).map_err(|error| {
            A2aError::invalid_params(format!("`decisions` do not read: {error}"))
        });
    }
    let text = message.text();
    let only_text = message.parts.iter().all(|p| p.as_text().is_some());
    match pending {
        [one] if only_text && !text.is_empty() && answerable(one) => {
            let answer = Decision::Respond {
                answer: Value::String(text),
            };
            Ok(BTreeMap::from([(one.id.clone(), answer)]))
        }
        _ => Err(A2aError::invalid_params(
            "the task waits for decisions: send a data part {\"decisions\": {\"INTERRUPT ID\": {\"type\": \"approve\"}}}",
        )),
    }
}

/// Whether a text reply may answer the interrupt: its payload lists no `allowed`
/// decisions, or lists `respond`.
fn answerable(interrupt: &PendingInterrupt) -> bool {
    match interrupt.payload.get("allowed").and_then(Value::as_array) {
        Some(allowed) => allowed.iter().any(|a| a == "respond"),
        None => true,
    }
}

/// An agent's message on a task.
pub(super) fn agent_message(task: &str, context: &str, parts: Vec<Part>) -> Message {
    let mut message = Message::new(uuid::Uuid::new_v4().to_string(), Role::Agent, parts);
    message.task_id = Some(task.to_owned());
    message.context_id = Some(context.to_owned());
    message
}

/// What an input-required task says: each interrupt's description as text, and the
/// interrupts as a data part `{"interrupts": [...]}` in our wire form (`id`, `call`,
/// `payload`).
pub(super) fn interrupt_parts(interrupts: &[PendingInterrupt]) -> Vec<Part> {
    let asked: Vec<String> = interrupts.iter().map(describe).collect();
    let data = json!({ "interrupts": interrupts });
    vec![Part::text(asked.join("\n")), Part::data(data)]
}

fn describe(interrupt: &PendingInterrupt) -> String {
    let payload = &interrupt.payload;
    let said = ["description", "question"]
        .iter()
        .find_map(|key| payload.get(key)?.as_str());
    match (said, &interrupt.call) {
        (Some(said), _) => said.to_owned(),
        (None, Some(call)) => format!("`{}` waits for a decision ({})", call.name, interrupt.id),
        (None, None) => format!("the run waits for a decision ({})", interrupt.id),
    }
}

/// What a failed task says: the error's message, and its code as data.
pub(super) fn failure_parts(error: &WireError) -> Vec<Part> {
    vec![
        Part::text(error.message.clone()),
        Part::data(json!({ "error": error })),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::a2a::Role;

    fn pending(payload: Value) -> PendingInterrupt {
        serde_json::from_value(json!({"id": "agent:a/tool:c1", "payload": payload})).unwrap()
    }

    fn said(parts: Vec<Part>) -> Message {
        Message::new("m", Role::User, parts)
    }

    #[test]
    fn a_data_part_carries_the_decisions_and_a_wrong_one_is_invalid_params() {
        let one = [pending(json!({"question": "Pay?"}))];
        let data = json!({"decisions": {"agent:a/tool:c1": {"type": "reject", "reason": "no"}}});
        let read = decisions(&said(vec![Part::data(data)]), &one).unwrap();
        assert_eq!(read["agent:a/tool:c1"].kind(), "reject");
        let wrong = json!({"decisions": {"agent:a/tool:c1": {"type": "maybe"}}});
        assert!(matches!(
            decisions(&said(vec![Part::data(wrong)]), &one),
            Err(A2aError::Rpc(_))
        ));
    }

    #[test]
    fn text_answers_one_interrupt_unless_its_payload_does_not_allow_an_answer() {
        let question = [pending(json!({"question": "Which city?"}))];
        let answered = decisions(&said(vec![Part::text("Paris")]), &question).unwrap();
        assert_eq!(
            answered["agent:a/tool:c1"],
            Decision::Respond {
                answer: json!("Paris")
            }
        );
        let approval = [pending(json!({"allowed": ["approve", "reject"]}))];
        assert!(decisions(&said(vec![Part::text("yes")]), &approval).is_err());
        let two = [question[0].clone(), pending(json!({}))];
        assert!(decisions(&said(vec![Part::text("Paris")]), &two).is_err());
    }

    #[test]
    fn files_and_data_become_our_parts_and_an_empty_message_is_refused() {
        let image = Part::url("https://example.com/a.png").with_media_type("image/png");
        let file = Part::raw(b"%PDF".to_vec())
            .with_media_type("application/pdf")
            .with_filename("a.pdf");
        let message = user_message(&said(vec![
            Part::text("look"),
            image,
            file,
            Part::data(json!({"k": 1})),
        ]))
        .unwrap();
        let parts = message.parts();
        assert!(matches!(parts[1], content::Part::Image(_)));
        assert!(
            matches!(&parts[2], content::Part::File { name: Some(name), .. } if name == "a.pdf")
        );
        assert_eq!(parts[3].as_text(), Some(r#"{"k":1}"#));
        assert!(user_message(&said(Vec::new())).is_err());
        assert_eq!(
            user_message(&said(vec![Part::text("hi")]))
                .unwrap()
                .content(),
            "hi"
        );
    }
}
