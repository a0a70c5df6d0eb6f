//! Helpers shared by several integration test binaries (`#[path]`-included; each uses
//! what it needs).

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use tower_adk::ModelRequest;

/// The tool result that answers `call_id` in a model request, as `(content, is_error)`.
pub(crate) fn tool_result(request: &ModelRequest, call_id: &str) -> (String, bool) {
    match request.messages.tool_result(call_id) {
        Some(result) => (result.content().to_owned(), result.is_error()),
        None => panic!("no tool result for {call_id} in {request:?}"),
    }
}

/// A shared log that tools, wrappers and the test's event loop write to, in order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub(crate) fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    pub(crate) fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}
