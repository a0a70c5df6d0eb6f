#![allow(clippy::unwrap_used, clippy::expect_used)]
//! How runs end early: call limits (each mode) and the tool failure policy (each mode).

mod call_limits;
mod failure_policy;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tower_adk::{Tool, ToolInfo, ToolOutput};

/// A tool that counts its calls.
pub(crate) fn counting_tool(name: &str, calls: &Arc<AtomicUsize>) -> Tool {
    let calls = Arc::clone(calls);
    Tool::from_fn(ToolInfo::new(name, "counts its calls"), move |_| {
        let calls = Arc::clone(&calls);
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<_, Infallible>(ToolOutput::new("ok"))
        }
    })
}
