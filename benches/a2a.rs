//! A round trip through A2A against the same run over our own route, over loopback: the
//! hook for BENCHMARKS.md's A2A figures (issue #26).
//!
//! ```text
//! cargo bench --features a2a,server --bench a2a
//! ```
//!
//! One server (the `server` feature's router with [`Server::a2a`]) on 127.0.0.1, one
//! kept-alive reqwest client, one run at a time. The agent: a scripted model that calls
//! `track` (which answers at once) and then streams `Order 7 arrives tomorrow.` in three
//! chunks. Four measurements of the same run:
//!
//! - `own/json`: `POST /agents/stream/runs` `{"input": ...}`, the `completed` event as JSON;
//! - `a2a/send`: JSON-RPC `SendMessage`, the completed task as JSON;
//! - `own/sse`: the same route with `Accept: text/event-stream`, read to its end;
//! - `a2a/stream`: `SendStreamingMessage`, read to its end.
//!
//! The difference between `a2a/*` and `own/*` is what A2A adds: its envelope, its types,
//! and the task kept for `GetTask` (the runs both go through the same identity, limits
//! and run-starting code).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tower_adk::Agent;
use tower_adk::server::Server;
use tower_adk::server::a2a::A2a;
use tower_adk::testing::{ScriptedModel, Turn, text_tool};

const INPUT: &str = "Where is order 7?";

fn agent() -> Agent {
    let model = ScriptedModel::per_run([
        Turn::call("c1", "track", json!({"order": 7})),
        Turn::stream(["Order 7 ", "arrives ", "tomorrow."]),
    ]);
    Agent::builder(model)
        .tool(text_tool("track", "in transit"))
        .build()
        .unwrap()
}

fn a2a_body(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": INPUT}]
    }}})
}

fn round_trip(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let base = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = Server::new().agent("stream", agent()).a2a(A2a::new());
        tokio::spawn(server.serve(listener));
        base
    });
    let client = reqwest::Client::new();
    let own = format!("{base}/agents/stream/runs");
    let a2a = format!("{base}/agents/stream/a2a");
    let mut group = c.benchmark_group("a2a_round_trip");
    group.bench_function("own/json", |b| {
        b.to_async(&runtime).iter(|| async {
            let answer: Value = client
                .post(&own)
                .json(&json!({"input": INPUT}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(answer["type"], "completed");
        });
    });
    group.bench_function("a2a/send", |b| {
        b.to_async(&runtime).iter(|| async {
            let answer: Value = client
                .post(&a2a)
                .json(&a2a_body("SendMessage"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(
                answer["result"]["task"]["status"]["state"],
                "TASK_STATE_COMPLETED"
            );
        });
    });
    group.bench_function("own/sse", |b| {
        b.to_async(&runtime).iter(|| async {
            let request = client.post(&own).header("accept", "text/event-stream");
            let body = request
                .json(&json!({"input": INPUT}))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(body.contains("event: completed"));
        });
    });
    group.bench_function("a2a/stream", |b| {
        b.to_async(&runtime).iter(|| async {
            let request = client.post(&a2a).json(&a2a_body("SendStreamingMessage"));
            let body = request.send().await.unwrap().text().await.unwrap();
            assert!(body.contains("TASK_STATE_COMPLETED"));
        });
    });
    group.finish();
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
