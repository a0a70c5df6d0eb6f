//! Message content on spans, only when the program opts in: the messages a model call
//! sends and its reply, a tool call's arguments and result.

use std::sync::atomic::{AtomicU8, Ordering};

use serde_json::{Value, json};

use crate::content::Part;
use crate::message::Message;

/// The environment variable that opts in, as OpenTelemetry's GenAI instrumentations read it.
const CAPTURE_VARIABLE: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// Not decided yet; off; on.
const UNREAD: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;

static CAPTURE: AtomicU8 = AtomicU8::new(UNREAD);

/// Switches message content on spans on or off, for the whole process.
///
/// Off unless the program opts in: with `capture_content(true)`, or with the environment
/// variable `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` (read once, when no
/// call has switched it). When on, a model call's span has the history it is made from
/// (`gen_ai.input.messages`; a `wrap_model` hook may send the model less) and its reply
/// (`gen_ai.output.messages`), in the JSON form of
/// the GenAI conventions (`[{"role": "user", "parts": [{"type": "text", "content": ..}]}]`);
/// a tool call's span has its arguments (`gen_ai.tool.call.arguments`) and result
/// (`gen_ai.tool.call.result`). Content holds what your users wrote and what your tools
/// read: switch it on where the backend may keep it.
///
/// ```
/// use tower_adk::telemetry::{capture_content, captures_content};
///
/// capture_content(true);
/// assert!(captures_content());
/// capture_content(false);
/// assert!(!captures_content());
/// ```
pub fn capture_content(on: bool) {
    CAPTURE.store(if on { ON } else { OFF }, Ordering::Relaxed);
}

/// Whether spans carry message content (see [`capture_content`]).
pub fn captures_content() -> bool {
    match CAPTURE.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => {
            let on = std::env::var(CAPTURE_VARIABLE).is_ok_and(|v| v.eq_ignore_ascii_case("true"));
            // A call that switched it in between wins.
            let read = if on { ON } else { OFF };
            let _ = CAPTURE.compare_exchange(UNREAD, read, Ordering::Relaxed, Ordering::Relaxed);
            CAPTURE.load(Ordering::Relaxed) == ON
        }
    }
}

/// Messages in the conventions' form: `[{"role": .., "parts": [..]}]`, as JSON text.
pub(crate) fn messages(messages: &[Message]) -> String {
    let messages: Vec<Value> = messages.iter().map(message).collect();
    Value::Array(messages).to_string()
}

fn message(message: &Message) -> Value {
    let (role, mut parts) = match message {
        Message::System { content } => ("system", vec![text(content)]),
        Message::User { .. } => ("user", parts(message)),
        Message::Assistant { .. } => ("assistant", parts(message)),
        Message::Tool { call_id, .. } => {
            let response = json!({
                "type": "tool_call_response",
                "id": call_id.as_str(),
                "response": message.content(),
            });
            ("tool", vec![response])
        }
    };
    for call in message.tool_calls() {
        let arguments = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.to_string()));
        parts.push(json!({
            "type": "tool_call",
            "id": call.id.as_str(),
            "name": call.name.as_str(),
            "arguments": arguments,
        }));
    }
    json!({"role": role, "parts": parts})
}

fn parts(message: &Message) -> Vec<Value> {
    let parts = message.parts();
    parts
        .iter()
        .map(|part| match part {
            Part::Text { text: content } => text(content),
            Part::Image(_) => json!({"type": "image"}),
            Part::File { .. } => json!({"type": "file"}),
            Part::Reasoning(reasoning) => json!({"type": "reasoning", "content": reasoning.text}),
        })
        .collect()
}

fn text(content: &str) -> Value {
    json!({"type": "text", "content": content})
}
