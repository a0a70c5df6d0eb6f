//! Durable runs through the public API: interrupts and every kind of decision, resumes
//! that run nothing twice, threads, per-turn durability, refused resumes, and many runs
//! interrupted and resumed at once. (The stores themselves: `tests/stores`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod claims;
mod errors;
mod interrupts;
mod many;
mod owners;
mod threads;
mod turns;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::interrupt::Interrupt;
use tower_adk::{BoxError, Handler, ToolCallNext, ToolInfo, ToolOutput, ToolRequest, ToolResponse};
use tower_adk::{Tool, ToolError};

/// How many times each tool really ran.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>);

impl Counter {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A tool that counts its runs and answers `NAME(ARGS)`.
fn counted(name: &'static str, runs: &Counter) -> Tool {
    let runs = runs.clone();
    let info = ToolInfo::new(name, "Counts its runs").parameters(json!({
        "type": "object",
        "properties": {"amount": {"type": "integer"}, "to": {"type": "string"}},
    }));
    Tool::from_fn(info, move |request: ToolRequest| {
        let runs = runs.clone();
        async move {
            runs.0.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ToolError>(ToolOutput::new(format!("{name}({})", request.arguments)))
        }
    })
}

/// Asks a person before every call of `tool`; lets it through once approved.
struct AskBefore(&'static str);

impl Handler for AskBefore {
    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        if request.name == self.0 && request.decision().is_none() {
            let payload = json!({"approve": request.name, "arguments": request.arguments});
            return Err(Interrupt::new(payload).into());
        }
        next.run(request).await
    }
}
