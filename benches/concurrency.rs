//! Concurrency (W4): 10,000 concurrent W1-like runs on one shared agent, on a
//! multi-thread runtime, where each tool call sleeps 50 ms on the tokio timer; two tool
//! rounds, so the ideal wall time is 100 ms. Against the same runs written by hand (the
//! scripted model and the tools called directly in a loop, one task per run, a turn's
//! calls run concurrently as the agent does).
//!
//! ```text
//! cargo bench --bench concurrency
//! ```
//!
//! Before the timings, it prints the peak memory per in-flight run of each: a child
//! process (this binary again, with `W4_MEMORY_PROBE` set) starts the 10,000 runs and
//! samples its resident set (`VmRSS` in `/proc/self/status`) until they are done; the
//! figure is (peak - before) / 10,000. A fresh process per probe keeps one probe's freed
//! memory from hiding the other's.

use std::future::IntoFuture;
use std::hint::black_box;
use std::process::Command;
use std::sync::Arc;

use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group};
use futures::future::join_all;
use tower_adk::{Agent, AgentRequest, Tool};

mod workloads;

const RUNS: usize = 10_000;
const SLEEP: Duration = Duration::from_millis(50);
const PROBE: &str = "W4_MEMORY_PROBE";

fn agent() -> Agent {
    workloads::agent(Some(SLEEP))
}

#[derive(Clone, Copy)]
enum Kind {
    Agent,
    HandWritten,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Agent => "agent",
            Kind::HandWritten => "hand_written",
        }
    }
}

/// Spawns `RUNS` concurrent runs of `kind`, one task each, and returns the wall time
/// until they are all done.
async fn concurrent_runs(kind: Kind, agent: &Agent) -> Duration {
    let start = Instant::now();
    let tasks: Vec<_> = match kind {
        Kind::Agent => (0..RUNS)
            .map(|_| {
                let run = agent.run(AgentRequest::user("go"));
                tokio::spawn(async move { black_box(run.await).is_ok() })
            })
            .collect(),
        Kind::HandWritten => {
            let model = workloads::script();
            let tools: Arc<[Tool]> = workloads::tools(Some(SLEEP)).into();
            (0..RUNS)
                .map(|_| {
                    let (model, tools) = (model.clone(), Arc::clone(&tools));
                    tokio::spawn(async move {
                        black_box(workloads::hand_written(&model, &tools, true).await);
                        true
                    })
                })
                .collect()
        }
    };
    for result in join_all(tasks).await {
        assert!(matches!(result, Ok(true)), "a run failed");
    }
    start.elapsed()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// In the child process: one batch of runs, printing the peak growth of the resident set
/// per in-flight run, in bytes.
fn probe(kind: Kind) {
    let runtime = runtime();
    let agent = agent();
    // A first, small batch warms the runtime, the timer and the allocator up.
    runtime.block_on(async {
        let warm: Vec<_> = (0..8)
            .map(|_| tokio::spawn(agent.run(AgentRequest::user("go")).into_future()))
            .collect();
        join_all(warm).await;
    });
    let memory = workloads::PeakRss::start();
    let wall = runtime.block_on(concurrent_runs(kind, &agent));
    let grown = memory.stop();
    println!("{} {}", grown * 1024 / RUNS, wall.as_millis());
}

fn memory_per_run() {
    for kind in [Kind::Agent, Kind::HandWritten] {
        let output = std::env::current_exe().and_then(|exe| {
            Command::new(exe)
                .env(PROBE, kind.name())
                .stderr(std::process::Stdio::inherit())
                .output()
        });
        match output {
            Ok(output) if output.status.success() => {
                let text = String::from_utf8_lossy(&output.stdout);
                let mut fields = text.split_whitespace();
                let bytes = fields.next().unwrap_or("?");
                let wall = fields.next().unwrap_or("?");
                eprintln!(
                    "w4 {}: peak memory per in-flight run {bytes} bytes \
                     ({RUNS} runs in {wall} ms)",
                    kind.name()
                );
            }
            other => eprintln!("w4 {}: the memory probe failed: {other:?}", kind.name()),
        }
    }
}

fn w4(c: &mut Criterion) {
    let runtime = runtime();
    let agent = agent();
    let mut group = c.benchmark_group("w4_10k_concurrent_runs");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    for kind in [Kind::HandWritten, Kind::Agent] {
        group.bench_function(kind.name(), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| runtime.block_on(concurrent_runs(kind, &agent)))
                    .sum()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, w4);

fn main() {
    match std::env::var(PROBE).as_deref() {
        Ok("agent") => return probe(Kind::Agent),
        Ok(_) => return probe(Kind::HandWritten),
        Err(_) => {}
    }
    memory_per_run();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
