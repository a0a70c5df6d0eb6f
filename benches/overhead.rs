//! The framework's overhead on a three-turn run (W1): the agent with 0, 4 and 16
//! handlers against the same run written by hand with no framework.
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

use criterion::{Criterion, criterion_group, criterion_main};

mod workloads;

fn w1(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
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

criterion_group!(benches, w1);
criterion_main!(benches);
