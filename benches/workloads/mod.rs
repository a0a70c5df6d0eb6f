//! The W1 and W4 workloads, shared by the criterion benches (`overhead`, `concurrency`)
//! and the tower-adk entry of `benches/peers`, so every figure measures the same run.
//!
//! A three-turn run: system + user message in; turn 1 calls `tool_0` and `tool_1`, turn 2
//! calls `tool_2`, turn 3 answers `done`; 8 tools registered, small JSON arguments.
// Each bench uses part of this module.
#![allow(dead_code)]

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::join_all;
use serde_json::json;
use tower::ServiceExt;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, BoxHandler, Message, Messages, ModelRequest, Tool, ToolCall, ToolInfo,
    ToolOutput, ToolRequest, handlers,
};

/// The system instruction of every run.
pub(crate) const INSTRUCTION: &str = "You are a bench.";

/// The caller's role, a request extension that the role filter reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Admin,
}

/// The model: the same three turns on every run.
pub(crate) fn script() -> ScriptedModel {
    ScriptedModel::per_run([
        Turn::call("c1", "tool_0", json!({"q": "a"})).with_call("c2", "tool_1", json!({"q": "b"})),
        Turn::call("c3", "tool_2", json!({"q": "c"})),
        Turn::text("done"),
    ])
    .without_records()
}

/// The 8 tools; each answers `ok <q>`, after sleeping `sleep` on the runtime's timer
/// (W4) or at once (W1).
pub(crate) fn tools(sleep: Option<Duration>) -> Vec<Tool> {
    (0..8)
        .map(|i| {
            Tool::from_fn(
                ToolInfo::new(format!("tool_{i}"), "a tool"),
                move |req: ToolRequest| async move {
                    if let Some(sleep) = sleep {
                        tokio::time::sleep(sleep).await;
                    }
                    Ok::<_, Infallible>(ToolOutput::new(format!("ok {}", req.arguments["q"])))
                },
            )
        })
        .collect()
}

/// The agent of W1 (tools answer at once) or W4 (tools sleep).
pub(crate) fn agent(sleep: Option<Duration>) -> Agent {
    Agent::builder(script())
        .instruction(INSTRUCTION)
        .tools(tools(sleep))
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The agent of W1, durable on `store`: a checkpoint when each run starts, after each
/// of its two tool turns, and when it ends.
pub(crate) fn durable_agent(store: impl tower_adk::checkpoint::CheckpointStore) -> Agent {
    Agent::builder(script())
        .instruction(INSTRUCTION)
        .tools(tools(None))
        .checkpoints(store)
        .durable(true)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A caller whose model asks one tool, `w1`, then answers: with `w1` the W1 agent as a
/// sub-agent (`nested`), or a plain tool that answers at once (the caller's own cost).
pub(crate) fn caller(nested: bool) -> Agent {
    let model = ScriptedModel::per_run([
        Turn::call("p1", "w1", json!({"request": "go"})),
        Turn::text("done"),
    ])
    .without_records();
    let w1 = if nested {
        tower_adk::compose::AgentTool::named("w1", agent(None)).into_tool()
    } else {
        Tool::from_fn(ToolInfo::new("w1", "a tool"), |_| async {
            Ok::<_, Infallible>(ToolOutput::new("done"))
        })
    };
    Agent::builder(model)
        .instruction(INSTRUCTION)
        .tool(w1)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The four cheap handlers of W1: a role filter, an instruction append, a before-model
/// rewrite that keeps the history, and a tool wrapper that counts calls.
pub(crate) fn four_handlers(count: &Arc<AtomicUsize>) -> [BoxHandler; 4] {
    let count = Arc::clone(count);
    [
        handlers::filter_tools(|ext, _| ext.get::<Role>() == Some(&Role::Admin)).into(),
        handlers::instruction_fn(|_, current| format!("{current} Be brief.")).into(),
        handlers::before_model(|_, _| Ok(())).into(),
        handlers::wrap_tool_invoke(move |req, next| {
            count.fetch_add(1, Ordering::Relaxed);
            next.run(req)
        })
        .into(),
    ]
}

/// `n` handlers: the four of W1, repeated (`n` a multiple of 4).
pub(crate) fn handler_chain(n: usize, count: &Arc<AtomicUsize>) -> Vec<BoxHandler> {
    (0..n / 4).flat_map(|_| four_handlers(count)).collect()
}

/// One W1 request, as the admin, with these handlers.
pub(crate) fn request(handlers: &[BoxHandler]) -> AgentRequest {
    let mut request = AgentRequest::user("go").with_extension(Role::Admin);
    request.handlers_mut().extend(handlers.iter().cloned());
    request
}

/// The same run with no framework: call the model, run the turn's tools (one after
/// another, or all at once when `concurrent`), loop. Returns the final message.
///
/// Written as carefully as the framework: the history is shared with each model request
/// (the request is dropped by the time the history grows, so pushing copies nothing) and
/// has room for the run's turns; the calls are read from the reply in place, not copied
/// out of it; each call copies only what its request and its result message must own.
pub(crate) async fn hand_written(
    model: &ScriptedModel,
    tools: &[Tool],
    concurrent: bool,
) -> Message {
    let mut history = Vec::with_capacity(10);
    history.extend([Message::system(INSTRUCTION), Message::user("go")]);
    let mut messages = Messages::from(history);
    loop {
        let request = ModelRequest::new(messages.clone());
        let reply = match model.clone().oneshot(request).await {
            Ok(response) => response
                .into_message()
                .await
                .unwrap_or_else(|_| Message::assistant("")),
            Err(_) => Message::assistant(""),
        };
        if reply.tool_calls().is_empty() {
            return reply;
        }
        let mut results = Vec::with_capacity(reply.tool_calls().len());
        if concurrent {
            results.extend(join_all(reply.tool_calls().iter().map(|c| call_one(tools, c))).await);
        } else {
            for call in reply.tool_calls() {
                results.push(call_one(tools, call).await);
            }
        }
        let history = messages.to_mut();
        history.push(reply);
        history.extend(results.into_iter().flatten());
    }
}

/// One call of [`hand_written`]: its tool's result as a message (`None`: no such tool).
async fn call_one(tools: &[Tool], call: &ToolCall) -> Option<Message> {
    let tool = tools.iter().find(|t| t.name() == call.name)?;
    let arguments = serde_json::from_str(&call.arguments).unwrap_or_default();
    let output = tool
        .invoke(ToolRequest::new(
            call.id.clone(),
            call.name.clone(),
            arguments,
        ))
        .await;
    let content = output.map(|o| o.content).unwrap_or_default();
    Some(Message::tool(call.id.clone(), call.name.clone(), content))
}

/// The turns of a long run: `turns` model calls that each call one tool, then the answer.
pub(crate) const LONG_RUN_TURNS: usize = 100;

/// The model of a long run (see [`LONG_RUN_TURNS`]).
pub(crate) fn long_script() -> ScriptedModel {
    let calls = (0..LONG_RUN_TURNS).map(|i| {
        Turn::call(
            format!("c{i}"),
            format!("tool_{}", i % 8),
            json!({"q": "a"}),
        )
    });
    ScriptedModel::per_run(calls.chain([Turn::text("done")])).without_records()
}

/// The agent of a long run: the W1 agent's tools, with room for its turns.
pub(crate) fn long_agent() -> Agent {
    Agent::builder(long_script())
        .instruction(INSTRUCTION)
        .tools(tools(None))
        .max_iterations(LONG_RUN_TURNS + 1)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Samples this process's resident set every millisecond, on a thread of its own, from
/// `start` to `stop`: the growth of memory while concurrent runs are in flight.
pub(crate) struct PeakRss {
    before: usize,
    done: Arc<AtomicBool>,
    sampler: std::thread::JoinHandle<usize>,
}

impl PeakRss {
    pub(crate) fn start() -> Self {
        let before = rss_kib("VmRSS");
        let done = Arc::new(AtomicBool::new(false));
        let sampler = {
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let mut peak = before;
                while !done.load(Ordering::Relaxed) {
                    peak = peak.max(rss_kib("VmRSS"));
                    std::thread::sleep(Duration::from_millis(1));
                }
                peak.max(rss_kib("VmRSS"))
            })
        };
        PeakRss {
            before,
            done,
            sampler,
        }
    }

    /// How far the resident set grew above where it was at `start`, in KiB.
    pub(crate) fn stop(self) -> usize {
        self.done.store(true, Ordering::Relaxed);
        let peak = self.sampler.join().unwrap_or(self.before);
        peak.saturating_sub(self.before)
    }
}

/// The resident set of this process now (`VmRSS`) or at its peak (`VmHWM`), in KiB.
pub(crate) fn rss_kib(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
