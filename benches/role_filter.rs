//! What filtering tools by the caller's role costs per run, by how many tools the agent
//! registers (8, 100, 1,000).
//!
//! Each run: the model calls the last tool the role keeps, then answers. `all_tools` runs
//! with no filter; `role_filter` with a `filter_tools` handler that keeps half of the
//! tools (a filter only removes tools). The difference per registered tool is the
//! filter's cost per tool; see BENCHMARKS.md.

use std::convert::Infallible;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, BoxHandler, Tool, ToolInfo, ToolOutput, handlers};

/// The sizes of the tool list.
const SIZES: [usize; 3] = [8, 100, 1_000];

/// An agent with `n` tools `tool_0` … `tool_{n-1}`, whose model calls `tool_{n-2}` (the
/// last even one: kept by the role filter, and found last by a scan in order).
fn agent(n: usize) -> Agent {
    let tools = (0..n).map(|i| {
        Tool::from_fn(ToolInfo::new(format!("tool_{i}"), "a tool"), |_| async {
            Ok::<_, Infallible>(ToolOutput::new("ok"))
        })
    });
    let model = ScriptedModel::per_run([
        Turn::call("c1", format!("tool_{}", n - 2), json!({})),
        Turn::text("done"),
    ])
    .without_records();
    Agent::builder(model)
        .tools(tools)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Keeps the even tools: what a role that may use half of them sees.
fn role_filter() -> BoxHandler {
    handlers::filter_tools(|_, tool| {
        tool.name()
            .bytes()
            .last()
            .is_some_and(|digit| (digit - b'0').is_multiple_of(2))
    })
    .into()
}

async fn run(agent: &Agent, handler: Option<&BoxHandler>) -> usize {
    let mut request = AgentRequest::user("go");
    request.handlers_mut().extend(handler.cloned());
    let result = agent.run(request).await.unwrap_or_else(|e| panic!("{e}"));
    result.tool_records.len()
}

fn filter(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let filter = role_filter();
    let mut group = c.benchmark_group("role_filter");
    group.measurement_time(Duration::from_secs(3));
    for n in SIZES {
        let agent = agent(n);
        for (name, handler) in [("all_tools", None), ("role_filter", Some(&filter))] {
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.to_async(&runtime)
                    .iter(|| async { black_box(run(&agent, handler).await) });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, filter);
criterion_main!(benches);
