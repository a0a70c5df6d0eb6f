//! Context that stays within budget, through the public API: the summariser over a long
//! conversation, tool results offloaded and read back, token counts, and the model
//! fallback chain.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fallback;
mod long_conversation;
mod offload;
mod tokens;

use tower_adk::Message;

/// Every tool call in `messages` is answered, and every tool result answers a call of
/// the assistant message it follows: what providers require of a history.
fn assert_paired(messages: &tower_adk::Messages) {
    let mut repaired = messages.clone();
    assert_eq!(repaired.repair_tool_calls(), 0, "a call without its result");
    let mut calls: Vec<&str> = Vec::new();
    for message in messages.iter() {
        match message.tool_call_id() {
            Some(id) => assert!(calls.contains(&id), "a result without its call: {id}"),
            None => calls = message.tool_calls().iter().map(|c| c.id.as_str()).collect(),
        }
    }
    assert!(!matches!(messages.first(), Some(Message::Tool { .. })));
}
