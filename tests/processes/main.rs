//! Runs that outlive their process: interrupted in one OS process and resumed in
//! another, through the SQLite file, through Postgres and through Redis; and a durable
//! run whose process is killed (SIGKILL) between two turns, taken over by a new process
//! with no tool run twice.
//!
//! This binary is both the test and its workers (`harness = false`): run without
//! arguments it starts the servers, then runs each case by starting itself as the
//! worker processes (`processes worker STORE ROLE ...`). Each case prints `ok` or panics;
//! the binary fails if any case fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../stores/servers.rs"]
mod servers;
#[path = "../support/workers.rs"]
mod workers;

use self::workers::{AskBefore, logged, open, runs_of, unique};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tower_adk::agent::{Checkpoint, CheckpointStatus};
use tower_adk::checkpoint::{CheckpointId, CheckpointStore};
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, RunStatus};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if args.first().map(String::as_str) == Some("worker") {
        runtime.block_on(worker(&args[1..]));
        return;
    }
    runtime.block_on(cases());
}

/// Every case, on every store.
async fn cases() {
    let dir = servers::scratch("processes");
    let postgres = servers::Postgres::start();
    let redis = servers::Redis::start();
    let stores = [
        format!("sqlite:{}", dir.join("checkpoints.db").display()),
        postgres.url(),
        redis.url(),
    ];
    for store in &stores {
        let kind = store.split(':').next().unwrap_or_default();
        interrupted_here_resumed_there(store, &dir).await;
        println!("test {kind}: interrupted in one process, resumed in another ... ok");
        killed_between_turns_taken_over(store, &dir).await;
        println!("test {kind}: killed between two turns, taken over by a new process ... ok");
    }
}

/// Starts this binary as a worker and returns its standard output, once it exits 0.
fn run_worker(args: &[&str]) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .arg("worker")
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "worker {args:?} failed: {}",
        output.status
    );
    String::from_utf8(output.stdout).unwrap()
}

async fn interrupted_here_resumed_there(store: &str, dir: &Path) {
    let thread = format!("approval-{}", unique());
    let log = dir.join(format!("{thread}.log"));
    let log_arg = log.to_str().unwrap();
    let stopped = run_worker(&[store, "start", &thread, log_arg]);
    let checkpoint = stopped.trim();
    let id: CheckpointId = checkpoint.parse().unwrap();
    assert_eq!(id.thread, thread);
    assert_eq!(
        runs_of(&log, "transfer"),
        0,
        "nothing ran before the approval"
    );

    let done = run_worker(&[store, "resume", checkpoint, log_arg]);
    assert_eq!(done.trim(), "sent 5 to bob");
    assert_eq!(
        runs_of(&log, "lookup"),
        1,
        "the call that finished ran once"
    );
    assert_eq!(runs_of(&log, "transfer"), 1);

    // A second resume of the same checkpoint, from a third process, is refused.
    let again = run_worker(&[store, "resume", checkpoint, log_arg]);
    assert!(again.starts_with("refused: "), "{again}");
    assert_eq!(runs_of(&log, "transfer"), 1);
}

/// A worker process, killed when the test lets go of it, passed or failed (a failed
/// assertion would otherwise leave it waiting for its model's reply for good).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn killed_between_turns_taken_over(store: &str, dir: &Path) {
    let thread = format!("durable-{}", unique());
    let log = dir.join(format!("{thread}.log"));
    let log_arg = log.to_str().unwrap();
    let mut first = Killed(
        Command::new(std::env::current_exe().unwrap())
            .args(["worker", store, "durable", &thread, log_arg])
            .spawn()
            .unwrap(),
    );
    // Wait for the checkpoint of its first turn, then kill it while it waits for the
    // model's second reply.
    let checkpoints = open(store).await;
    let mut waited = Duration::ZERO;
    loop {
        let checkpoint = match checkpoints.head(&thread).await.unwrap() {
            Some(head) => Some(
                Checkpoint::load(&*checkpoints, &thread, &head)
                    .await
                    .unwrap(),
            ),
            None => None,
        };
        if checkpoint
            .is_some_and(|c| c.status == CheckpointStatus::Running && c.run.records().count() == 1)
        {
            break;
        }
        assert!(
            waited < Duration::from_secs(60),
            "the first turn's checkpoint never came"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += Duration::from_millis(20);
    }
    first.0.kill().unwrap(); // SIGKILL: nothing of the process runs after it.
    assert!(!first.0.wait().unwrap().success());
    assert_eq!(runs_of(&log, "first"), 1);

    let done = run_worker(&[store, "takeover", &thread, log_arg]);
    assert_eq!(done.trim(), "both done");
    assert_eq!(
        (runs_of(&log, "first"), runs_of(&log, "second")),
        (1, 1),
        "no tool ran twice"
    );
}

// --- The workers ---

async fn worker(args: &[String]) {
    let [store, role, target, log] = args else {
        panic!("worker STORE ROLE TARGET LOG, got {args:?}")
    };
    let store = open(store).await;
    let log = PathBuf::from(log);
    match role.as_str() {
        "start" => {
            let agent = bank(store, &log);
            let request = AgentRequest::user("send 5 to bob")
                .on_thread(target.as_str())
                .with_handler(AskBefore);
            let stopped = agent.run(request).await.unwrap();
            assert_eq!(stopped.status, RunStatus::Interrupted);
            println!("{}", stopped.checkpoint.unwrap());
        }
        "resume" => {
            let agent = bank(store, &log);
            let checkpoint: CheckpointId = target.parse().unwrap();
            let request =
                AgentRequest::resume(checkpoint, [("agent:bank/tool:t1", Decision::Approve)])
                    .with_handler(AskBefore);
            match agent.run(request).await {
                Ok(done) => println!("{}", done.final_message.content()),
                Err(error) => println!("refused: {error}"),
            }
        }
        "durable" => {
            // The model's second reply never comes: the process is killed waiting.
            let model = ScriptedModel::new([
                Turn::call("a", "first", json!({})),
                Turn::text("never").delay(Duration::from_secs(3600)),
            ]);
            let agent = durable(model, store, &log);
            agent
                .run(AgentRequest::user("go").on_thread(target.as_str()))
                .await
                .unwrap();
            unreachable!("the process is killed before the run ends");
        }
        "takeover" => {
            let model = ScriptedModel::per_run([
                Turn::call("a", "first", json!({})),
                Turn::call("b", "second", json!({})),
                Turn::text("both done"),
            ]);
            let agent = durable(model, store, &log);
            let (checkpoint, last) = agent.last_checkpoint(target).await.unwrap().unwrap();
            assert_eq!(
                last.status,
                CheckpointStatus::Running,
                "the killed run left it running"
            );
            let request = AgentRequest::resume(checkpoint, Vec::<(String, Decision)>::new());
            let done = agent.run(request).await.unwrap();
            println!("{}", done.final_message.content());
        }
        other => panic!("no worker role {other}"),
    }
}

/// A bank agent: a lookup, then a transfer that needs approval, in one turn.
fn bank(store: Arc<dyn CheckpointStore>, log: &Path) -> Agent {
    let model = ScriptedModel::per_run([
        Turn::call("l1", "lookup", json!({"who": "bob"})).with_call(
            "t1",
            "transfer",
            json!({"amount": 5}),
        ),
        Turn::text("sent 5 to bob"),
    ]);
    Agent::builder(model)
        .name("bank")
        .checkpoints(store)
        .tool(logged("lookup", log))
        .tool(logged("transfer", log))
        .build()
        .unwrap()
}

fn durable(model: ScriptedModel, store: Arc<dyn CheckpointStore>, log: &Path) -> Agent {
    Agent::builder(model)
        .checkpoints(store)
        .durable(true)
        .tool(logged("first", log))
        .tool(logged("second", log))
        .build()
        .unwrap()
}
