//! Where the older turns end: the messages a summary replaces, never splitting a tool
//! call from its result.

use std::ops::Range;

use adk::Message;

/// The messages to summarise: after the leading system messages, up to the recent tail
/// that fits in `keep` tokens. The tail never starts on a tool result (a call's results
/// stay with the message that made the call, or go with it), and holds at least the last
/// message that is not a tool result, so the model has something to answer. `None` when
/// there is nothing older than that tail.
pub(crate) fn older_turns(
    messages: &[Message],
    keep: usize,
    count: impl Fn(&Message) -> usize,
) -> Option<Range<usize>> {
    let start = (messages.iter())
        .take_while(|m| matches!(m, Message::System { .. }))
        .count();
    let mut end = messages.len();
    let mut kept = 0;
    while end > start {
        let tokens = count(&messages[end - 1]);
        if kept + tokens > keep {
            break;
        }
        kept += tokens;
        end -= 1;
    }
    // Results belong with their call: the tail starts after them.
    while end < messages.len() && messages[end].tool_call_id().is_some() {
        end += 1;
    }
    if end == messages.len() {
        // Not even the last turn fits: keep it from its last message that is not a result.
        end = messages.iter().rposition(|m| m.tool_call_id().is_none())?;
    }
    (end > start).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use adk::{Message, ToolCall};
    use serde_json::json;

    use super::older_turns;

    fn history() -> Vec<Message> {
        let call = |id: &str| ToolCall::new(id, "find", json!({}));
        vec![
            Message::system("s"),
            Message::user("u1"),
            Message::assistant_with_calls("", vec![call("a"), call("b")]),
            Message::tool("a", "find", "ra"),
            Message::tool("b", "find", "rb"),
            Message::assistant("done"),
            Message::user("u2"),
        ]
    }

    #[test]
    fn the_tail_never_starts_on_a_tool_result() {
        let messages = history();
        // One token each: a tail of 3 would start on `rb`; it starts after it instead.
        assert_eq!(older_turns(&messages, 3, |_| 1), Some(1..5));
        // A tail of 4 starts on `ra`: both results go with their call.
        assert_eq!(older_turns(&messages, 4, |_| 1), Some(1..5));
        // A tail of 5 starts at the call: it keeps its results.
        assert_eq!(older_turns(&messages, 5, |_| 1), Some(1..2));
        assert_eq!(older_turns(&messages, 6, |_| 1), None);
    }

    #[test]
    fn the_last_turn_is_kept_even_when_it_is_over_the_budget() {
        let messages = history();
        assert_eq!(older_turns(&messages, 0, |_| 100), Some(1..6));
        let ends_with_results = &messages[..5];
        assert_eq!(older_turns(ends_with_results, 0, |_| 100), Some(1..2));
    }
}
