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
//!   own;
//! - `durable_turns/{none,memory,sqlite,sqlite_normal}/{1,11}`: a run of 1 and of 11 tool
//!   turns on a thread whose history is the 20 messages above (one call of
//!   `order_status` a turn, whose answer is as long as the history's), durable (a record
//!   when it starts, after each turn, when it ends) or not (`none`): the difference
//!   between 11 and 1, over 10, is what a turn costs, and what its record costs beside
//!   `none`.
//!
//! The stores are the memory store; SQLite on a file under `target/` (WAL, synchronous
//! commits); PostgreSQL and Redis on servers of their own on 127.0.0.1 that the bench
//! starts as the tests do (`tests/stores/servers.rs`): PostgreSQL with its default
//! durability (`fsync` on), Redis without persistence.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/stores/servers.rs"]
mod servers;
mod workloads;

use std::convert::Infallible;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tower_adk::checkpoint::sqlx::sqlite::{SqliteConnectOptions, SqliteSynchronous};
use tower_adk::checkpoint::{CheckpointStore, MemoryStore, PostgresStore, RedisStore, SqliteStore};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, Message, Tool, ToolCall, ToolInfo, ToolOutput, ToolRequest};

use self::servers::{Postgres, Redis};

/// Appends to one thread before it is deleted and started again.
const APPENDS_PER_THREAD: u64 = 1_000;

/// A 20-message history as a run writes it: an instruction, then rounds of a question,
/// a tool call, its result and an answer.
fn messages() -> Vec<Message> {
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
        messages.push(Message::tool(
            format!("call_{round}"),
            "order_status",
            order_status(order).to_string(),
        ));
        messages.push(Message::assistant(format!(
            "Your order {order} is with DHL Express (tracking JD0146000{order}). It left \
             the sorting centre in Kassel and is expected on 14 June, before the weekend. \
             I will keep an eye on it; is there anything else I can do for you?"
        )));
    }
    messages
}

/// What the `order_status` tool answers for `order`.
fn order_status(order: u64) -> serde_json::Value {
    json!({
        "order": order,
        "carrier": "DHL Express",
        "tracking": format!("JD0146000{order}"),
        "eta": "2025-06-14",
        "history": [
            {"at": "2025-06-09T08:12:00Z", "event": "label created", "place": "Leipzig"},
            {"at": "2025-06-09T17:40:00Z", "event": "picked up", "place": "Leipzig"},
            {"at": "2025-06-10T04:05:00Z", "event": "at the sorting centre", "place": "Kassel"},
        ],
    })
}

/// [`messages`] as one record.
fn history() -> Vec<u8> {
    let record = json!({"format": 1, "thread": "support-42", "messages": messages()});
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

/// A durable agent on `store` whose model calls `order_status` `turns` times, one call a
/// turn, then answers; with the 20-message history's instruction.
fn support_agent(store: Arc<dyn CheckpointStore>, turns: u64, durable: bool) -> Agent {
    let calls = (0..turns).map(|i| {
        Turn::call(
            format!("t{i}"),
            "order_status",
            json!({"order": 10_000 + i}),
        )
    });
    // `per_run` plays the turn whose index is the number of replies in the history
    // already: the thread's history has 10, and the run before (`turns == 0`) 9.
    let replies = if turns == 0 { 9 } else { 10 };
    let earlier = (0..replies).map(|_| Turn::text("(earlier)"));
    let calls = earlier
        .chain(calls)
        .chain([Turn::text("All on their way.")]);
    let model = ScriptedModel::per_run(calls);
    let tool = Tool::from_fn(
        ToolInfo::new("order_status", "Where an order is"),
        |request: ToolRequest| async move {
            let order = request.arguments["order"].as_u64().unwrap_or_default();
            Ok::<_, Infallible>(ToolOutput::new(order_status(order).to_string()))
        },
    );
    Agent::builder(model.without_records())
        .instruction(messages()[0].content().to_owned())
        .tool(tool)
        .checkpoints(store)
        .durable(durable)
        .build()
        .unwrap()
}

/// `iters` runs, timed, each on a new thread whose history is the 20 messages (after the
/// instruction) that a run before (untimed) left.
async fn turns_on_history(store: &Arc<dyn CheckpointStore>, agent: &Agent, iters: u64) -> Duration {
    let setup = support_agent(Arc::clone(store), 0, false);
    let input = messages().split_off(1);
    let mut total = Duration::ZERO;
    for i in 0..iters {
        let thread = format!("turns-{i}");
        store.delete_thread(&thread).await.unwrap();
        let request = AgentRequest::new(input[..19].to_vec()).on_thread(&thread);
        setup.run(request).await.unwrap();
        let start = Instant::now();
        let request = AgentRequest::user("And my other orders?").on_thread(&thread);
        let result = agent.run(request).await.unwrap();
        total += start.elapsed();
        black_box(result.final_message);
    }
    total
}

fn durable_turns(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = servers::scratch("durable-turns");
    let open = |name: &str, synchronous| {
        let options = SqliteConnectOptions::new()
            .filename(dir.join(name))
            .create_if_missing(true)
            .synchronous(synchronous);
        let store = runtime.block_on(SqliteStore::open_with(options)).unwrap();
        Arc::new(store) as Arc<dyn CheckpointStore>
    };
    let stores = [
        (
            "none",
            Arc::new(MemoryStore::new()) as Arc<dyn CheckpointStore>,
        ),
        ("memory", Arc::new(MemoryStore::new())),
        ("sqlite", open("full.db", SqliteSynchronous::Full)),
        (
            "sqlite_normal",
            open("normal.db", SqliteSynchronous::Normal),
        ),
    ];
    let mut group = c.benchmark_group("durable_turns");
    group.sample_size(20);
    for (name, store) in &stores {
        for turns in [1, TURNS + 1] {
            let agent = support_agent(Arc::clone(store), turns, *name != "none");
            group.bench_function(format!("{name}/{turns}"), |b| {
                b.to_async(&runtime)
                    .iter_custom(|iters| turns_on_history(store, &agent, iters));
            });
        }
    }
    group.finish();
    drop(stores);
    let _ = std::fs::remove_dir_all(dir);
}

/// The turns that `durable_turns/STORE/11` adds to `durable_turns/STORE/1`.
const TURNS: u64 = 10;

criterion_group!(benches, checkpoint, w1_durability, durable_turns);
criterion_main!(benches);
