//! Store outages against the real servers (issue #23, point 7): SQLite locked by another
//! connection, PostgreSQL stopped as a crash would (`pg_ctl stop -m immediate`), Redis
//! killed (`SIGKILL`) and frozen (`SIGSTOP`) under runs in flight. Each case checks that
//! the run ends within the store's bound (`operation_timeout`, 3 s here, plus slack for
//! a loaded machine, never two bounds), that its error says whether its checkpoint was written
//! (`store_failed`: it was not; `checkpoint_outcome_unknown`: read the head), that the
//! records are intact once the server is back, and that the thread goes on from them.
//!
//! The servers are started by the test itself, on free ports, with their data under
//! `target/tmp/` (`tests/stores/servers.rs`; install them with `scripts/setup-stores`).
//! What each case saw (its times, its errors) is printed: `cargo test --all-features
//! --test outages -- --nocapture`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../stores/servers.rs"]
mod servers;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::join_all;
use serde_json::json;
use tokio::sync::Semaphore;
use tower_adk::agent::{Checkpoint, CheckpointStatus};
use tower_adk::checkpoint::{
    CheckpointError, CheckpointId, CheckpointStore, PostgresStore, RedisStore, SqliteStore,
    StoreError,
};
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentError, AgentEvent, AgentRequest, AgentResult, AgentRun, Tool};
use tower_adk::{ToolInfo, ToolOutput, ToolRequest};

use self::servers::{Postgres, Redis};

/// The stores' bound in these cases: long enough that the slack a loaded machine adds
/// (up to 90% of it) is generous, short enough that a second wait of the bound shows.
const BOUND: Duration = Duration::from_secs(3);

/// A tool that waits for a permit of `gate` each time it runs: a run holds its thread
/// while the test cuts its store off.
fn gate_tool(gate: &Arc<Semaphore>) -> Tool {
    let gate = Arc::clone(gate);
    Tool::from_fn(ToolInfo::new("gate", "Waits"), move |_: ToolRequest| {
        let gate = Arc::clone(&gate);
        async move {
            gate.acquire().await?.forget();
            Ok::<_, tokio::sync::AcquireError>(ToolOutput::new("passed"))
        }
    })
}

/// An agent whose every run calls the gate, then answers `done` (ten runs on a thread);
/// durable when asked (a checkpoint after the gate's turn), else it writes when it
/// starts and ends.
fn gated(store: impl CheckpointStore, gate: &Arc<Semaphore>, durable: bool) -> Agent {
    let turns = (0..10).flat_map(|i| {
        let call = Turn::call(format!("g{i}"), "gate", json!({}));
        [call, Turn::text("done")]
    });
    let model = ScriptedModel::per_run(turns);
    Agent::builder(model)
        .checkpoints(store)
        .durable(durable)
        .tool(gate_tool(gate))
        .build()
        .unwrap()
}

/// Reads the run's events until a tool call starts: its thread is claimed.
async fn until_a_tool_starts(run: &mut AgentRun) {
    loop {
        match run.next().await {
            Some(Ok(AgentEvent::ToolCallStarted { .. })) => return,
            Some(Ok(_)) => {}
            other => panic!("the run ended before its tool started: {other:?}"),
        }
    }
}

/// Runs `request` through the gate at once, to its result.
async fn through(agent: &Agent, gate: &Semaphore, request: AgentRequest) -> AgentResult {
    gate.add_permits(1);
    agent.run(request).await.unwrap()
}

/// The checkpoint error of a run that failed, and how long it took.
async fn failure(
    run: impl IntoFuture<Output = Result<AgentResult, AgentError>>,
) -> (CheckpointError, Duration) {
    let start = Instant::now();
    let ended = run.into_future().await;
    let took = start.elapsed();
    match ended {
        Err(AgentError::Checkpoint(error)) => (*error, took),
        other => panic!("expected a checkpoint error, got {other:?}"),
    }
}

/// Asserts that the run ended within the bound, plus slack for a loaded machine, and
/// so never after two bounds (a second write that waits for the store).
fn within(took: Duration, bound: Duration, what: &str) {
    println!("{what}: ended after {took:?} (bound {bound:?})");
    assert!(
        took < bound + bound * 9 / 10,
        "{what}: the run took {took:?}, over its store's bound of {bound:?}"
    );
}

/// Asserts a failure that says nothing was written.
fn not_written(error: &CheckpointError, what: &str) {
    println!("{what}: {} ({error})", error.code());
    assert_eq!(error.code(), "store_failed", "{what}: {error:?}");
    assert!(!error.is_outcome_unknown());
}

/// The thread's records: their versions, and the head's version and status.
async fn records(store: &dyn CheckpointStore, thread: &str) -> (Vec<u64>, u64, Checkpoint) {
    let versions = store.list(thread).await.unwrap();
    let head = store.head(thread).await.unwrap().unwrap();
    (
        versions,
        head.version,
        Checkpoint::decode(&head.bytes).unwrap(),
    )
}

/// Waits until the store answers again after its server came back (a connection that
/// failed to reconnect while the server was down fails the first call after it).
async fn once_it_answers(store: &dyn CheckpointStore) {
    for _ in 0..100 {
        if store.head("t").await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the store does not answer after its server came back");
}

/// Asserts that the thread's records are those `before` it, then the claim of the run
/// whose checkpoint failed, and maybe its failed mark (written in the background, once
/// the store answers); gives the claim.
async fn claim_left(store: &dyn CheckpointStore, thread: &str, before: &[u64]) -> CheckpointId {
    let versions = store.list(thread).await.unwrap();
    let at = before.last().map_or(1, |last| last + 1);
    let claim = store
        .get(thread, at)
        .await
        .unwrap()
        .expect("the run's claim");
    let claim = Checkpoint::decode(&claim.bytes).unwrap();
    assert_eq!(claim.status, CheckpointStatus::Running);
    let (claimed, marked) = ([before, &[at]].concat(), [before, &[at, at + 1]].concat());
    println!("{thread}: records {versions:?} (the run's claim at {at})");
    if versions == marked {
        let mark = store.get(thread, at + 1).await.unwrap().unwrap();
        let mark = Checkpoint::decode(&mark.bytes).unwrap();
        assert_eq!(
            (mark.status, &mark.run_id),
            (CheckpointStatus::Failed, &claim.run_id)
        );
    } else {
        assert_eq!(versions, claimed, "the records before, and the run's claim");
    }
    CheckpointId {
        thread: thread.to_owned(),
        version: at,
        run: claim.run_id,
    }
}

/// Takes the run of `claim` over, to its end (over its failed mark, if it has one).
async fn take_over(agent: &Agent, gate: &Semaphore, claim: CheckpointId) -> AgentResult {
    let request = AgentRequest::resume(claim, Vec::<(String, Decision)>::new());
    through(agent, gate, request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_locked_by_another_connection_ends_runs_within_the_bound_and_loses_nothing() {
    use tower_adk::checkpoint::sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
    use tower_adk::checkpoint::sqlx::{self, Connection as _};

    let bound = BOUND;
    let file = servers::scratch("outage-sqlite").join("checkpoints.db");
    let store = SqliteStore::open(&file)
        .await
        .unwrap()
        .operation_timeout(bound);
    let gate = Arc::new(Semaphore::new(0));
    let agent = gated(store.clone(), &gate, true);
    through(&agent, &gate, AgentRequest::user("one").on_thread("t")).await;
    let before = records(&store, "t").await;

    // Another connection (another process would do the same) holds the write lock.
    let options = SqliteConnectOptions::new().filename(&file);
    let mut other = SqliteConnection::connect_with(&options).await.unwrap();
    let lock = || sqlx::raw_sql("BEGIN IMMEDIATE");
    lock().execute(&mut other).await.unwrap();
    let run = agent.run(AgentRequest::user("two").on_thread("t"));
    let (error, took) = failure(run).await;
    within(took, bound, "sqlite, a run's claim while locked");
    not_written(&error, "sqlite, a run's claim while locked");
    sqlx::raw_sql("ROLLBACK").execute(&mut other).await.unwrap();
    assert_eq!(
        records(&store, "t").await.0,
        before.0,
        "nothing was written"
    );

    // Locked mid-run: the turn's checkpoint cannot be written.
    let mut run = agent.run(AgentRequest::user("three").on_thread("t"));
    until_a_tool_starts(&mut run).await;
    lock().execute(&mut other).await.unwrap();
    gate.add_permits(1);
    let (error, took) = failure(run).await;
    within(took, bound, "sqlite, a turn's checkpoint while locked");
    not_written(&error, "sqlite, a turn's checkpoint while locked");
    sqlx::raw_sql("ROLLBACK").execute(&mut other).await.unwrap();

    // Intact: the records before, and the run's claim; the run is taken over from it.
    let claim = claim_left(&store, "t", &before.0).await;
    let done = take_over(&agent, &gate, claim).await;
    assert_eq!(done.final_message.content(), "done");
    let versions = store.list("t").await.unwrap();
    println!("sqlite: records after the takeover {versions:?}");
    let next = through(&agent, &gate, AgentRequest::user("four").on_thread("t")).await;
    assert!(
        next.messages.iter().any(|m| m.content() == "one"),
        "the thread went on"
    );
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_immediately_ends_runs_within_the_bound_and_loses_nothing() {
    let bound = BOUND;
    let server = Postgres::start();
    let store = PostgresStore::connect(&server.url())
        .await
        .unwrap()
        .operation_timeout(bound);
    let gate = Arc::new(Semaphore::new(0));
    let agent = gated(store.clone(), &gate, true);
    through(&agent, &gate, AgentRequest::user("one").on_thread("t")).await;
    let before = records(&store, "t").await;

    // Stopped while a run holds its thread: the turn's checkpoint cannot be written.
    let mut run = agent.run(AgentRequest::user("two").on_thread("t"));
    until_a_tool_starts(&mut run).await;
    server.stop_immediately();
    gate.add_permits(1);
    let (error, took) = failure(run).await;
    within(took, bound, "postgres, a turn's checkpoint while stopped");
    not_written(&error, "postgres, a turn's checkpoint while stopped");

    // A run that starts meanwhile cannot read its thread, nor write a new one.
    let (error, took) = failure(agent.run(AgentRequest::user("x").on_thread("t"))).await;
    within(took, bound, "postgres, a new run while stopped");
    not_written(&error, "postgres, a new run while stopped");
    let (error, took) = failure(agent.run(AgentRequest::user("y").on_thread("new"))).await;
    within(took, bound, "postgres, a run on a new thread while stopped");
    not_written(&error, "postgres, a run on a new thread while stopped");

    server.start_again();
    once_it_answers(&store).await;
    let claim = claim_left(&store, "t", &before.0).await;
    let done = take_over(&agent, &gate, claim).await;
    assert_eq!(done.final_message.content(), "done");
    let next = through(&agent, &gate, AgentRequest::user("z").on_thread("t")).await;
    assert!(
        next.messages.iter().any(|m| m.content() == "one"),
        "the thread went on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_ends_runs_within_the_bound_and_loses_nothing_it_acknowledged() {
    let bound = BOUND;
    let mut server = Redis::start_persistent();
    let store = RedisStore::connect(&server.url())
        .await
        .unwrap()
        .operation_timeout(bound);
    let gate = Arc::new(Semaphore::new(0));
    let agent = gated(store.clone(), &gate, true);
    through(&agent, &gate, AgentRequest::user("one").on_thread("t")).await;
    let before = records(&store, "t").await;

    // Killed while a run holds its thread. Its connection breaks under the turn's
    // checkpoint: not written, or (a write that may have been sent) outcome unknown.
    let mut run = agent.run(AgentRequest::user("two").on_thread("t"));
    until_a_tool_starts(&mut run).await;
    server.kill();
    gate.add_permits(1);
    let (error, took) = failure(run).await;
    within(took, bound, "redis, a turn's checkpoint while killed");
    println!(
        "redis, a turn's checkpoint while killed: {} ({error})",
        error.code()
    );
    let run_id = match &error {
        CheckpointError::OutcomeUnknown { run, .. } => Some(run.clone()),
        CheckpointError::Store(StoreError::Backend(_)) => None,
        other => panic!("{other:?}"),
    };

    // A run that starts while it is down is refused a connection: nothing written.
    let (error, took) = failure(agent.run(AgentRequest::user("x").on_thread("t"))).await;
    within(took, bound, "redis, a new run while killed");
    not_written(&error, "redis, a new run while killed");

    server.restart();
    once_it_answers(&store).await;
    // Every acknowledged write is there (append-only file, synced before each answer).
    // Reconciled as the error says: the run's last record is its claim, so the turn's
    // checkpoint was not applied; the run is taken over from its claim.
    let claim = claim_left(&store, "t", &before.0).await;
    if let Some(run) = run_id {
        assert_eq!(claim.run, run);
    }
    let done = take_over(&agent, &gate, claim).await;
    assert_eq!(done.final_message.content(), "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_frozen_under_twenty_runs_says_outcome_unknown_and_their_heads_tell() {
    const RUNS: usize = 20;
    let bound = BOUND;
    let server = Redis::start();
    let store = RedisStore::connect(&server.url())
        .await
        .unwrap()
        .operation_timeout(bound);
    let gate = Arc::new(Semaphore::new(0));
    let agent = gated(store.clone(), &gate, false);

    // Twenty runs, each on a thread of its own, each past its claim and in its tool.
    let mut runs = Vec::new();
    for i in 0..RUNS {
        let mut run = agent.run(AgentRequest::user("go").on_thread(format!("frozen-{i}")));
        until_a_tool_starts(&mut run).await;
        runs.push(run);
    }
    server.freeze();
    let start = Instant::now();
    gate.add_permits(RUNS);
    // Each sends its last record to the frozen server and waits for an answer.
    let ended = join_all(runs.into_iter().map(|run| async move {
        let ended = run.await;
        (ended, start.elapsed())
    }))
    .await;
    server.thaw();

    let mut codes = std::collections::BTreeMap::<&str, usize>::new();
    let mut slowest = Duration::ZERO;
    for (i, (ended, took)) in ended.iter().enumerate() {
        slowest = slowest.max(*took);
        let thread = format!("frozen-{i}");
        let (_, _, head) = records(&store, &thread).await;
        match ended {
            Ok(result) => {
                *codes.entry("completed").or_default() += 1;
                assert_eq!(head.status, CheckpointStatus::Completed);
                assert_eq!(result.final_message.content(), "done");
            }
            Err(AgentError::Checkpoint(error)) => {
                *codes.entry(error.code()).or_default() += 1;
                let written = head.status == CheckpointStatus::Completed;
                match &**error {
                    // The write was sent: the head tells. Redis applied it when it woke.
                    CheckpointError::OutcomeUnknown { thread: t, run, .. } => {
                        assert_eq!(*t, thread);
                        assert_eq!(head.run_id, *run);
                        assert!(written, "{thread}: frozen, Redis kept what it received");
                    }
                    // Never "not written" for a run whose record is the head.
                    other => {
                        assert!(!written, "{thread}: {other} but its record is the head");
                        not_written(other, &thread);
                    }
                }
            }
            Err(other) => panic!("{thread}: {other:?}"),
        }
    }
    within(slowest, bound, "redis frozen, the slowest of 20 runs");
    println!("redis frozen, 20 runs ended: {codes:?}");
    assert_eq!(
        codes.get("checkpoint_outcome_unknown"),
        Some(&RUNS),
        "every run's last record was sent to the frozen server: {codes:?}"
    );
    // The threads go on from there.
    let again = through(
        &agent,
        &gate,
        AgentRequest::user("more").on_thread("frozen-0"),
    )
    .await;
    assert_eq!(again.final_message.content(), "done");
}
