//! The tool pipeline through the public API: the policy gate, argument and output
//! transforms, their order, output limits and the untrusted-data envelope.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod envelope;
mod limits;
mod order;
mod policy;
#[path = "../support/mod.rs"]
mod support;
mod transforms;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::{Value, json};
use support::tool_result;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, Tool, ToolInfo, ToolOutput, ToolRecord, ToolRequest,
};

#[test]
fn the_pipeline_handlers_are_send_sync_and_debug_whatever_their_closures() {
    use tower_adk::handlers::*;
    fn assert_handler<T: tower_adk::Handler + Send + Sync + std::fmt::Debug>(_: &T) {}
    fn assert_send_sync<T: Send + Sync>() {}

    let gate = policy(|_| Decision::Allow).approver(|_, _| async { Approval::Approve });
    assert_handler(&gate);
    assert_handler(&policy_async(|_| async { Decision::Allow }));
    assert_handler(&map_arguments(|_| {}));
    assert_handler(&map_output(|text| text));
    assert_handler(&max_output_bytes(1));
    assert_handler(&untrusted_envelope());
    assert_handler(&ToolGuard::new().policy(gate));
    assert_send_sync::<Decision>();
    assert_send_sync::<Approval>();
}

/// The schema of the test tools: `{"n": integer}`, `n` required.
fn n_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"]
    })
}

/// A tool that counts its calls and answers with the arguments it received.
fn counted_tool(name: &str, calls: &Arc<AtomicUsize>) -> Tool {
    let calls = Arc::clone(calls);
    Tool::from_fn(
        ToolInfo::new(name, "Returns its arguments.").parameters(n_schema()),
        move |req: ToolRequest| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, Infallible>(ToolOutput::new(req.arguments.to_string())) }
        },
    )
}

/// A streaming tool that yields `chunks` lazily, counting each chunk it produces.
fn counted_stream(name: &str, chunks: &[&str], produced: &Arc<AtomicUsize>) -> Tool {
    let chunks: Vec<String> = chunks.iter().map(|c| (*c).to_owned()).collect();
    let produced = Arc::clone(produced);
    Tool::stream_fn(
        ToolInfo::new(name, "Streams chunks.").parameters(n_schema()),
        move |_| {
            let produced = Arc::clone(&produced);
            futures::stream::iter(chunks.clone()).map(move |chunk| {
                produced.fetch_add(1, Ordering::SeqCst);
                Ok::<_, Infallible>(chunk)
            })
        },
    )
}

/// A streaming tool that answers with the arguments it received, in one chunk.
fn streamed_echo(name: &str, calls: &Arc<AtomicUsize>) -> Tool {
    let calls = Arc::clone(calls);
    Tool::stream_fn(
        ToolInfo::new(name, "Streams its arguments.").parameters(n_schema()),
        move |req: ToolRequest| {
            calls.fetch_add(1, Ordering::SeqCst);
            futures::stream::iter([Ok::<_, Infallible>(req.arguments.to_string())])
        },
    )
}

/// A model that calls `tool` once with `arguments`, then answers "done".
fn one_call(tool: &str, arguments: Value) -> ScriptedModel {
    ScriptedModel::new([Turn::call("c1", tool, arguments), Turn::text("done")])
}

/// Runs `request` to its end; returns the output chunks of each tool call, in order,
/// and the records.
async fn run_with_chunks(agent: &Agent, request: AgentRequest) -> (Vec<String>, Vec<ToolRecord>) {
    let mut run = agent.run(request);
    let mut chunks = Vec::new();
    while let Some(event) = run.next().await {
        match event.unwrap() {
            AgentEvent::ToolOutputChunk { chunk, .. } => chunks.push(chunk),
            AgentEvent::Completed(result) => return (chunks, result.tool_records),
            _ => {}
        }
    }
    panic!("the run ended without completing");
}

/// A shared log that stages write to.
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
