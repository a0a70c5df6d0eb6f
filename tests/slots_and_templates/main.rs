//! Slot filling and prompt templates through the public API.
//!
//! - `slots`: `set_slot_<name>` tools with schemas that fit each slot, a value outside a
//!   categorical slot's set refused (naming the allowed values), the run completing the
//!   moment the exit condition holds, and the values in the result;
//! - `templates`: the instruction rendered from a template with the time in a time zone,
//!   the description, the slots so far and the resume flag, refreshed before each model
//!   call; errors when the handler is made.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod slots;
mod templates;

use tower_adk::{Message, ModelRequest};

/// The tool result for `call_id` that the model saw in `request`, as `(content, is_error)`.
fn tool_result(request: &ModelRequest, call_id: &str) -> (String, bool) {
    request
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                call_id: id,
                content,
                is_error,
                ..
            } if id == call_id => Some((content.clone(), *is_error)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {call_id}"))
}
