//! Checkpoint stores: writing and reading one record the size of a real checkpoint (the
//! JSON of a 20-message history with tool calls, about 6 KB), on each store.
//!
//! ```text
//! scripts/setup-stores
//! cargo bench --all-features --bench checkpoint
//! ```
//!
//! - `checkpoint_write/STORE`: one `append_owned` at the thread's head, as a run does
//!   after a turn (the thread is deleted every 1,000 appends, outside the measured time,
//!   so that it does not grow without end);
//! - `checkpoint_read/STORE`: one `head` of a thread, as a resume does;
//! - `w1_durability/{none,memory,sqlite,sqlite_normal}`: W1 (`benches/overhead.rs`, 4
//!   handlers) as it is, and durable on the memory store and on SQLite (with synchronous
//!   commits, and with `synchronous=NORMAL`): four checkpoints per run (when it
//!   starts, after each of its two tool turns, when it ends), each run on a thread of its
//!   own.
//!
//! The stores are the memory store; SQLite on a file under `target/` (WAL, synchronous
//! commits); PostgreSQL and Redis on servers of their own on 127.0.0.1 that the bench
//! starts as the tests do (`tests/stores/servers.rs`): PostgreSQL with its default
//! durability (`fsync` on), Redis without persistence.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/stores/servers.rs"]
mod servers;
mod workloads;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tower_adk::checkpoint::sqlx::sqlite::{SqliteConnectOptions, SqliteSynchronous};
use tower_adk::checkpoint::{CheckpointStore, MemoryStore, PostgresStore, RedisStore, SqliteStore};
use tower_adk::{Message, ToolCall};

use self::servers::{Postgres, Redis};

/// Appends to one thread before it is deleted and started again.
const APPENDS_PER_THREAD: u64 = 1_000;

/// A 20-message history as a run writes it: an instruction, then rounds of a question,
/// a tool call, its result and an answer.
fn history() -> Vec<u8> {
    let mut messages = vec![Message::system(
        "You are the support agent of an online shop. Answer briefly, cite the order \
         number, and call a tool whenever the answer depends on live data.",
    )];
    for round in 0..5 {
        let order = 10_000 + round;
        messages.push(Message::user(format!(
            "Hello, my order {order} has not arrived yet. It was supposed to come on \
             Tuesday and the tracking page has not changed for three days. Can you check \
             where it is and whether it will arrive before the weekend?"
        )));
        let call = ToolCall::new(
            format!("call_{round}"),
            "order_status",
            json!({"order": order, "fields": ["carrier", "tracking", "eta", "history"]}),
        );
        messages.push(Message::assistant_with_calls(
            "Let me look up the order.",
            vec![call],
        ));
        let status = json!({
            "order": order,
            "carrier": "DHL Express",
            "tracking": format!("JD0146000{order}"),
            "eta": "2025-06-14",
            "history": [
                {"at": "2025-06-09T08:12:00Z", "event": "label created", "place": "Leipzig"},
                {"at": "2025-06-09T17:40:00Z", "event": "picked up", "place": "Leipzig"},
                {"at": "2025-06-10T04:05:00Z", "event": "at the sorting centre", "place": "Kassel"},
            ],
        });
        messages.push(Message::tool(
            format!("call_{round}"),
            "order_status",
            status.to_string(),
        ));
        messages.push(Message::assistant(format!(
            "Your order {order} is with DHL Express (tracking JD0146000{order}). It left \
             the sorting centre in Kassel and is expected on 14 June, before the weekend. \
             I will keep an eye on it; is there anything else I can do for you?"
        )));
    }
    let record = json!({"format": 1, "thread": "support-42", "messages": messages});
    serde_json::to_vec(&record).unwrap()
}

fn checkpoint(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let record = history();
    println!("checkpoint record: {} bytes", record.len());

    let redis = Redis::start();
    let postgres = Postgres::start();
    let file = servers::scratch("sqlite-bench").join("checkpoints.db");
    let stores: Vec<(&str, Arc<dyn CheckpointStore>)> = runtime.block_on(async {
        vec![
            (
                "memory",
                Arc::new(MemoryStore::new()) as Arc<dyn CheckpointStore>,
            ),
            ("sqlite", Arc::new(SqliteStore::open(&file).await.unwrap())),
            (
                "postgres",
                Arc::new(PostgresStore::connect(&postgres.url()).await.unwrap()),
            ),
            (
                "redis",
                Arc::new(RedisStore::connect(&redis.url()).await.unwrap()),
            ),
        ]
    });

    let mut write = c.benchmark_group("checkpoint_write");
    write.sample_size(20);
    for (name, store) in &stores {
        write.bench_function(*name, |b| {
            b.to_async(&runtime)
                .iter_custom(|iters| appends(store.as_ref(), &record, iters));
        });
    }
    write.finish();

    let mut read = c.benchmark_group("checkpoint_read");
    for (name, store) in &stores {
        runtime.block_on(async {
            let first = store.append("read", None, record.clone()).await.unwrap();
            store
                .append("read", Some(first), record.clone())
                .await
                .unwrap();
        });
        read.bench_function(*name, |b| {
            b.to_async(&runtime).iter(|| async {
                let head = store.head("read").await.unwrap();
                black_box(head.map(|r| r.bytes.len()))
            });
        });
    }
    read.finish();

    drop(stores);
    drop((redis, postgres));
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

/// `iters` appends at the head of a thread, timed one by one, each with the thread's owner
/// as a run writes them; the thread is deleted and started again (untimed) every
/// [`APPENDS_PER_THREAD`].
async fn appends(store: &dyn CheckpointStore, record: &[u8], iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut head = None;
    for i in 0..iters {
        if i % APPENDS_PER_THREAD == 0 {
            store.delete_thread("write").await.unwrap();
            head = None;
        }
        let start = Instant::now();
        let appended = store.append_owned("write", "bench", head, record.to_vec());
        let version = appended.await.unwrap();
        total += start.elapsed();
        head = Some(version);
    }
    black_box(head);
    total
}

fn w1_durability(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let handlers = workloads::handler_chain(4, &count);
    let file = servers::scratch("w1-durable").join("checkpoints.db");
    let sqlite = runtime.block_on(SqliteStore::open(&file)).unwrap();
    let normal = file.with_file_name("normal.db");
    let normal = SqliteConnectOptions::new()
        .filename(normal)
        .create_if_missing(true)
        .synchronous(SqliteSynchronous::Normal);
    let normal = runtime.block_on(SqliteStore::open_with(normal)).unwrap();
    let agents = [
        ("none", workloads::agent(None)),
        ("memory", workloads::durable_agent(MemoryStore::new())),
        ("sqlite", workloads::durable_agent(sqlite)),
        ("sqlite_normal", workloads::durable_agent(normal)),
    ];
    let mut group = c.benchmark_group("w1_durability");
    group.sample_size(20);
    for (name, agent) in &agents {
        group.bench_function(*name, |b| {
            b.to_async(&runtime).iter(|| async {
                let result = agent.run(workloads::request(&handlers)).await.unwrap();
                black_box(result.final_message)
            });
        });
    }
    group.finish();
    drop(agents);
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

criterion_group!(benches, checkpoint, w1_durability);
criterion_main!(benches);
