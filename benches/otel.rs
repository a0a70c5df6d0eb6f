//! What a run's spans cost once they are exported (feature `otel`): W1 (seven spans a
//! run: the run, three model calls, three tool calls) with no subscriber, and with the
//! OTLP exporter's layer (`telemetry::otlp::Exporter::layer`) as the subscriber. The
//! exporter's batches go to a closed port of 127.0.0.1 and are dropped: what is timed is
//! the run's own thread (spans built, attributes recorded, ended spans queued), not the
//! exporter's thread that encodes and sends them.
//!
//! ```text
//! cargo bench --features otel --bench otel
//! ```

use std::hint::black_box;
use std::net::TcpListener;

use criterion::{Criterion, criterion_group, criterion_main};
use tower_adk::telemetry::otlp::Exporter;
use tracing_subscriber::layer::SubscriberExt;

mod workloads;

/// The spans of one W1 run.
const SPANS_PER_RUN: u64 = 7;

fn w1_traced(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("w1_traced");
    group.throughput(criterion::Throughput::Elements(SPANS_PER_RUN));
    let agent = workloads::agent(None);

    group.bench_function("no_subscriber", |b| {
        b.to_async(&runtime).iter(|| async {
            let result = agent.run(workloads::request(&[])).await;
            black_box(result.unwrap_or_else(|e| panic!("{e}")))
        });
    });

    // A port nothing listens on: the batches fail to send and are dropped.
    let closed = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap_or_else(|e| panic!("{e}"))
        .port();
    let (layer, guard) = Exporter::new()
        .endpoint(format!("http://127.0.0.1:{closed}"))
        .layer()
        .unwrap_or_else(|e| panic!("{e}"));
    let subscriber = tracing_subscriber::registry().with(layer);
    let _default = tracing::subscriber::set_default(subscriber);
    group.bench_function("otlp_exported", |b| {
        b.to_async(&runtime).iter(|| async {
            let result = agent.run(workloads::request(&[])).await;
            black_box(result.unwrap_or_else(|e| panic!("{e}")))
        });
    });
    group.finish();
    drop(guard);
}

criterion_group!(benches, w1_traced);
criterion_main!(benches);
