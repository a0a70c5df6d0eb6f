//! Tool calls through the public API: failures the model sees, tool wrappers and their
//! order, and stock tower middleware around tools and models.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod failures;
mod middleware;
mod names;
mod records;
mod sets;
mod streamed_middleware;
mod wrappers;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tower_adk::{Tool, ToolInfo, ToolOutput, ToolRequest};

#[path = "../support/mod.rs"]
mod support;

use support::{Log, tool_result};

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
