//! The framework's overhead on a three-turn run (W1): the agent with 0, 4 and 16
//! handlers against the same run written by hand with no framework; the cost of one
//! nesting level (W1 called as a sub-agent tool); and the cost per turn of a 100-turn
//! run, both ways.
//!
//! ```text
//! cargo bench --bench overhead
//! ```
//!
//! The model is the scripted model, so the numbers are the loop's own cost. The workload
//! is in `workloads/mod.rs`, shared with `benches/peers/tower-adk`.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

mod workloads;

/// The runtime each run is awaited on: a current-thread one (BENCHMARKS.md, Method).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn w1(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("w1_three_turn_run");

    let model = workloads::script();
    let tools = workloads::tools(None);
    group.bench_function("hand_written", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(workloads::hand_written(&model, &tools, false).await) });
    });

    let agent = workloads::agent(None);
    let count = Arc::new(AtomicUsize::new(0));
    for n in [0, 4, 16] {
        let chain = workloads::handler_chain(n, &count);
        group.bench_function(format!("agent_{n}_handlers"), |b| {
            b.to_async(&runtime).iter(|| async {
                let result = agent.run(workloads::request(&chain)).await;
                black_box(result.unwrap_or_else(|e| panic!("{e}")))
            });
        });
    }
    group.finish();
}

/// One nesting level: W1 run directly, against a caller (two turns, one tool call)
/// whose tool is the W1 agent (`AgentTool`), and the same caller with a plain tool. The
/// nesting costs `w1_as_sub_agent - w1_direct - caller_plain_tool`.
fn nesting(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("w1_nesting");
    let direct = workloads::agent(None);
    let plain = workloads::caller(false);
    let nested = workloads::caller(true);
    // The sub-agent's W1 run answers the caller's call, whole.
    let result = runtime.block_on(nested.run(workloads::request(&[])).result());
    let record = result
        .unwrap_or_else(|e| panic!("{e}"))
        .tool_records
        .remove(0);
    assert!(
        record.is_success() && record.content == "done",
        "{record:?}"
    );
    for (name, agent) in [
        ("w1_direct", &direct),
        ("caller_plain_tool", &plain),
        ("w1_as_sub_agent", &nested),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let result = agent.run(workloads::request(&[])).await;
                black_box(result.unwrap_or_else(|e| panic!("{e}")))
            });
        });
    }
    // The same, every event read: the sub-agent's events are relayed to the caller's.
    group.bench_function("w1_as_sub_agent_read", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut run = nested.run(workloads::request(&[]));
            let mut events = 0_usize;
            while let Some(event) = futures::StreamExt::next(&mut run).await {
                black_box(event.unwrap_or_else(|e| panic!("{e}")));
                events += 1;
            }
            black_box(events)
        });
    });
    group.bench_function("w1_direct_read", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut run = direct.run(workloads::request(&[]));
            while let Some(event) = futures::StreamExt::next(&mut run).await {
                black_box(event.unwrap_or_else(|e| panic!("{e}")));
            }
        });
    });
    group.finish();
}

/// A long run: 100 turns of one tool call each, then the answer, by hand and with the
/// 4 W1 handlers. Criterion reports turns per second (one model call each).
fn long_run(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("long_run");
    group.throughput(Throughput::Elements(workloads::LONG_RUN_TURNS as u64 + 1));

    let model = workloads::long_script();
    let tools = workloads::tools(None);
    group.bench_function("hand_written", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(workloads::hand_written(&model, &tools, false).await) });
    });

    let agent = workloads::long_agent();
    let count = Arc::new(AtomicUsize::new(0));
    let chain = workloads::handler_chain(4, &count);
    group.bench_function("agent_4_handlers", |b| {
        b.to_async(&runtime).iter(|| async {
            let result = agent.run(workloads::request(&chain)).await;
            black_box(result.unwrap_or_else(|e| panic!("{e}")))
        });
    });
    group.finish();
}

criterion_group!(benches, w1, nesting, long_run);
criterion_main!(benches);
