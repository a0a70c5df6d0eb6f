//! Streaming end to end: model text deltas, streamed tool output through the stream
//! wrappers, laziness and backpressure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod filler;
mod model_text;
mod tool_chunks;

use std::sync::{Arc, Mutex};

use tower_adk::{Message, ModelRequest};

/// The tool result that answers `call_id` in a model request, as `(content, is_error)`.
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
        .unwrap_or_else(|| panic!("no tool result for {call_id} in {request:?}"))
}

/// A shared log that tools, wrappers and the test's event loop write to, in order.
#[derive(Clone, Debug, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}
