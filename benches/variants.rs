//! Mixed roles (W2): requests alternate between two roles whose handlers give different
//! per-run configurations (one adds a return-directly tool, one filters tools out), on
//! one agent with the compiled-loop cache and on one that recompiles every run (as Eino
//! does).
//!
//! ```text
//! cargo bench --bench variants
//! ```
//!
//! Also prints how many loop variants each agent compiled over 10,000 runs: the cached
//! one should report exactly the number of distinct compatibility keys (two).

use std::convert::Infallible;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tower::ServiceExt;
use tower::service_fn;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, BoxHandler, ModelRequest, Tool, ToolInfo, ToolOutput, ToolRequest,
    handlers,
};

const RUNS: usize = 10_000;

fn tool(name: String) -> Tool {
    Tool::from_fn(
        ToolInfo::new(name, "a tool"),
        |req: ToolRequest| async move {
            Ok::<_, Infallible>(ToolOutput::new(format!("ok {}", req.arguments["q"])))
        },
    )
}

/// A scripted model per role, chosen by the tools the run offers: a run that has the
/// `answer` tool calls it (and the run ends there, it returns directly); any other run
/// calls `tool_0`, then answers.
fn agent(recompile: bool) -> Agent {
    let answering =
        ScriptedModel::per_run([Turn::call("c1", "answer", json!({"q": "a"}))]).without_records();
    let working = ScriptedModel::per_run([
        Turn::call("c1", "tool_0", json!({"q": "a"})),
        Turn::text("done"),
    ])
    .without_records();
    let model = service_fn(move |request: ModelRequest| {
        let model = if request.tool_names().any(|name| name == "answer") {
            answering.clone()
        } else {
            working.clone()
        };
        model.oneshot(request)
    });
    Agent::builder(model)
        .instruction("You are a bench.")
        .tools((0..8).map(|i| tool(format!("tool_{i}"))))
        .recompile_every_run(recompile)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The two roles' handlers: one adds a return-directly tool, one keeps half the tools.
fn roles() -> [Vec<BoxHandler>; 2] {
    [
        vec![
            handlers::add_tools([tool("answer".into())]).into(),
            handlers::return_directly(["answer"]).into(),
        ],
        vec![handlers::filter_tools(|_, tool| tool.name() < "tool_4").into()],
    ]
}

async fn run(agent: &Agent, handlers: &[BoxHandler]) -> String {
    let mut request = AgentRequest::user("go");
    request.handlers_mut().extend(handlers.iter().cloned());
    let result = agent.run(request).await.unwrap_or_else(|e| panic!("{e}"));
    result.final_message.content().to_owned()
}

/// 10,000 alternating runs on a fresh agent; returns the time per run and the number of
/// compiled variants.
fn ten_thousand_runs(runtime: &tokio::runtime::Runtime, recompile: bool) -> (Duration, usize) {
    let agent = agent(recompile);
    let roles = roles();
    let start = Instant::now();
    runtime.block_on(async {
        for i in 0..RUNS {
            black_box(run(&agent, &roles[i % 2]).await);
        }
    });
    (start.elapsed() / RUNS as u32, agent.compiled_variants())
}

fn w2(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));

    for (mode, recompile) in [("cached", false), ("recompile_every_run", true)] {
        let (per_run, variants) = ten_thousand_runs(&runtime, recompile);
        eprintln!(
            "w2 {mode}: {variants} compiled loop variants after {RUNS} runs ({per_run:?} per run)"
        );
    }

    let mut group = c.benchmark_group("w2_mixed_roles");
    group.measurement_time(Duration::from_secs(3));
    for (mode, recompile) in [("cached", false), ("recompile_every_run", true)] {
        let agent = agent(recompile);
        let roles = roles();
        let mut i = 0usize;
        group.bench_function(mode, |b| {
            b.to_async(&runtime).iter(|| {
                i += 1;
                let handlers = &roles[i % 2];
                let agent = &agent;
                async move { black_box(run(agent, handlers).await) }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, w2);
criterion_main!(benches);
