#![allow(clippy::unwrap_used, clippy::expect_used)]
//! How runs end on a tool: stop at a named tool (both forms, and the errors), and the
//! built-in `task_completed` tool (with text, without, alongside other calls).

mod stop_at_tool;
mod task_completed;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::{Tool, ToolError, ToolErrorKind, ToolInfo, ToolOutput, ToolRequest};

/// A `submit` tool that accepts an integer `answer` and fails on anything else.
pub(crate) fn submit_tool() -> Tool {
    Tool::from_fn(
        ToolInfo::new("submit", "Submits the final answer").parameters(json!({
            "type": "object",
            "properties": {"answer": {}},
            "required": ["answer"]
        })),
        |req: ToolRequest| async move {
            match req.arguments["answer"].as_i64() {
                Some(answer) => Ok(ToolOutput::new(format!("accepted {answer}"))),
                None => Err(ToolError::new(
                    ToolErrorKind::Failed,
                    "the answer must be an integer",
                )),
            }
        },
    )
}

/// A tool that counts its calls.
pub(crate) fn counting_tool(name: &str, calls: &Arc<AtomicUsize>) -> Tool {
    let calls = Arc::clone(calls);
    Tool::from_fn(ToolInfo::new(name, "counts its calls"), move |_| {
        let calls = Arc::clone(&calls);
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<_, Infallible>(ToolOutput::new("done"))
        }
    })
}
