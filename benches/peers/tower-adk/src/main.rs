//! tower-adk, and the same run written by hand, on the W1 and W4 workloads of
//! `benches/peers` (see its README for the contract). The workload is the one the
//! criterion benches use (`benches/workloads/mod.rs`).
//!
//! `peer-tower-adk <w1|w4>` prints one JSON line per measurement; `run` calls it once per
//! workload, so each gets a fresh process and its own peak memory.

use std::future::IntoFuture;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::json;
use tower_adk::{AgentRequest, Tool};

#[path = "../../../workloads/mod.rs"]
mod workloads;

const SAMPLES: usize = 5;
/// W4 batches of concurrent runs; the wall time reported is their median.
const W4_BATCHES: usize = 5;

fn quick() -> bool {
    std::env::var_os("PEERS_QUICK").is_some()
}

/// Median time per run, in µs, over `SAMPLES` samples of `runs` runs each, after a
/// warm-up that also picks `runs` so that a sample takes about a second.
fn measure<F: Future>(
    runtime: &tokio::runtime::Runtime,
    mut run: impl FnMut() -> F,
) -> (f64, usize) {
    let (warm_up, sample) = if quick() {
        (Duration::from_millis(50), Duration::from_millis(50))
    } else {
        (Duration::from_millis(500), Duration::from_secs(1))
    };
    let start = Instant::now();
    let mut warm_runs = 0u32;
    while start.elapsed() < warm_up {
        runtime.block_on(async { black_box(run().await) });
        warm_runs += 1;
    }
    let per_run = start.elapsed() / warm_runs.max(1);
    let runs = (sample.as_secs_f64() / per_run.as_secs_f64().max(1e-9)).ceil() as usize;
    let mut samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            runtime.block_on(async {
                for _ in 0..runs {
                    black_box(run().await);
                }
            });
            start.elapsed().as_secs_f64() * 1e6 / runs as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    (samples[SAMPLES / 2], runs)
}

fn print(peer: &str, workload: &str, handlers: usize, runs: usize, figures: serde_json::Value) {
    // `run` says which commit of the repository this is.
    let version = match peer {
        "tower-adk" => std::env::var("PEER_VERSION").unwrap_or_else(|_| "this checkout".into()),
        _ => "-".into(),
    };
    let mut line = json!({
        "peer": peer,
        "version": version,
        "workload": workload,
        "handlers": handlers,
        "runs": runs,
    });
    if let (Some(line), Some(figures)) = (line.as_object_mut(), figures.as_object()) {
        line.extend(figures.clone());
    }
    println!("{line}");
}

fn w1() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let model = workloads::script();
    let tools = workloads::tools(None);
    let agent = workloads::agent(None);
    let count = Arc::new(AtomicUsize::new(0));

    // Check the run before timing it: three turns, three tool calls, `done`.
    let chain = workloads::handler_chain(4, &count);
    let result = runtime
        .block_on(agent.run(workloads::request(&chain)).into_future())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(result.final_message.content(), "done");
    assert_eq!(result.tool_records.len(), 3);
    assert_eq!(count.load(Ordering::Relaxed), 3);

    let (us, runs) = measure(&runtime, || workloads::hand_written(&model, &tools, false));
    print("hand-written", "W1", 0, runs, json!({"us_per_run": us}));
    for n in [0, 4] {
        let chain = workloads::handler_chain(n, &count);
        let (us, runs) = measure(&runtime, || {
            agent.run(workloads::request(&chain)).into_future()
        });
        print(
            "tower-adk",
            "W1",
            n,
            runs,
            json!({
                "us_per_run": us,
                "peak_rss_kib": workloads::rss_kib("VmHWM"),
            }),
        );
    }
}

/// 10,000 concurrent runs, tools sleeping 50 ms; the agent's, then the hand-written ones.
fn w4(hand_written: bool) {
    let runs = if quick() { 500 } else { 10_000 };
    let sleep = Duration::from_millis(50);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let agent = workloads::agent(Some(sleep));
    let model = workloads::script();
    let tools: Arc<[Tool]> = workloads::tools(Some(sleep)).into();
    let batch = |n: usize| {
        let tasks: Vec<_> = (0..n)
            .map(|_| {
                if hand_written {
                    let (model, tools) = (model.clone(), Arc::clone(&tools));
                    runtime.spawn(async move {
                        workloads::hand_written(&model, &tools, true)
                            .await
                            .content()
                            == "done"
                    })
                } else {
                    let run = agent.run(AgentRequest::user("go")).into_future();
                    runtime.spawn(async move {
                        run.await.is_ok_and(|r| r.final_message.content() == "done")
                    })
                }
            })
            .collect();
        runtime.block_on(async {
            for done in join_all(tasks).await {
                assert!(matches!(done, Ok(true)), "a run failed");
            }
        });
    };
    // Warm the runtime, the timer and the allocator up.
    batch(8);
    let memory = workloads::PeakRss::start();
    // The first batch is measured for memory (and time); then more, for a median time.
    let start = Instant::now();
    batch(runs);
    let mut walls = vec![start.elapsed()];
    let walls_first_ms = walls[0].as_secs_f64() * 1e3;
    let grown = memory.stop();
    for _ in 1..W4_BATCHES {
        let start = Instant::now();
        batch(runs);
        walls.push(start.elapsed());
    }
    walls.sort();
    let wall = walls[walls.len() / 2];
    let peer = if hand_written {
        "hand-written"
    } else {
        "tower-adk"
    };
    print(
        peer,
        "W4",
        0,
        runs,
        json!({
            "batches": walls.len(),
            "first_wall_ms": walls_first_ms,
            "wall_ms": wall.as_secs_f64() * 1e3,
            "kib_per_run": grown as f64 / runs as f64,
        }),
    );
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("w1") => w1(),
        Some("w4") => w4(false),
        Some("w4-hand-written") => w4(true),
        _ => {
            eprintln!("usage: peer-tower-adk <w1|w4|w4-hand-written>");
            std::process::exit(2);
        }
    }
}
