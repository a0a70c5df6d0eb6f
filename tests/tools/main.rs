//! Tool calls through the public API: failures the model sees, tool wrappers and their
//! order, and stock tower middleware around tools and models.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod failures;
mod middleware;
mod records;
mod sets;
mod wrappers;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tower_adk::{Message, ModelRequest, Tool, ToolInfo, ToolOutput, ToolRequest};

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

/// A shared log that wrappers and tools write to.
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

/// A tool that counts its calls and answers with its arguments.
fn counting_echo(name: &str, calls: &Arc<AtomicUsize>) -> Tool {
    let calls = Arc::clone(calls);
    Tool::from_fn(
        ToolInfo::new(name, "Returns its arguments."),
        move |req: ToolRequest| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, Infallible>(ToolOutput::new(req.arguments.to_string())) }
        },
    )
}
