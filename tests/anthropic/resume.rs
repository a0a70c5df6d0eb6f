//! A thinking tool loop interrupted in one process and resumed in another: Claude's
//! thinking blocks of turn 1 live in the checkpoint (SQLite) between them, and go back
//! byte for byte in turns 2 and 3, sent by the second process.
//!
//! How the second process comes about: this test binary starts itself again, twice, each
//! time running only [`worker_process`] (`--exact`), which does one step of the run as
//! `ANTHROPIC_RESUME_WORKER` says and prints what the parent needs. In a normal test run
//! `worker_process` finds no such variable and returns at once. The recorded replies come
//! from one replay server of the parent process, which keeps every request body, whichever
//! process sent it.

use std::process::Command;

use serde_json::json;
use tower_adk::checkpoint::{CheckpointId, SqliteStore};
use tower_adk::interrupt::{Decision, Interrupt};
use tower_adk::{
    Agent, AgentRequest, BoxError, Handler, RunStatus, ToolCallNext, ToolRequest, ToolResponse,
};

use crate::replay::{Replay, Reply};
use crate::servers::scratch;
use crate::{blocks, builder, calculator, database, thinking_blocks};

/// The variable that makes [`worker_process`] a worker: `ROLE\nBASE_URL\nDB[\nCHECKPOINT]`.
const WORKER: &str = "ANTHROPIC_RESUME_WORKER";

/// Asks before every calculation: interrupts until the call comes back approved.
#[derive(Debug, Clone)]
struct AskBefore;

impl Handler for AskBefore {
    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        if request.name == "calculator" && request.decision().is_none() {
            return Err(Interrupt::new(json!({"approve": request.arguments})).into());
        }
        next.run(request).await
    }
}

/// The agent both processes build: Claude with thinking, a SQLite checkpoint store.
async fn agent(base_url: &str, db: &str) -> Agent {
    let model = builder(base_url)
        .max_tokens(16_000)
        .thinking_budget(Some(10_000))
        .build()
        .unwrap();
    Agent::builder(model)
        .name("revenue")
        .checkpoints(SqliteStore::open(db).await.unwrap())
        .tool(calculator())
        .tool(database())
        .build()
        .unwrap()
}

/// One step of the run, in a worker process.
#[tokio::test]
async fn worker_process() {
    let Ok(task) = std::env::var(WORKER) else {
        return; // Not a worker: nothing to do.
    };
    let task: Vec<&str> = task.lines().collect();
    match task[..] {
        ["start", base_url, db, thread] => {
            let request = AgentRequest::user("Revenue for 150 units at $50, against the average?")
                .on_thread(thread)
                .with_handler(AskBefore);
            let stopped = agent(base_url, db).await.run(request).await.unwrap();
            assert_eq!(stopped.status, RunStatus::Interrupted);
            println!("worker-output: {}", stopped.checkpoint.unwrap());
        }
        ["resume", base_url, db, checkpoint] => {
            let checkpoint: CheckpointId = checkpoint.parse().unwrap();
            let decisions = [("agent:revenue/tool:toolu_01Calc", Decision::Approve)];
            let request = AgentRequest::resume(checkpoint, decisions).with_handler(AskBefore);
            let done = agent(base_url, db).await.run(request).await.unwrap();
            println!("worker-output: {}", done.final_message.content());
        }
        _ => panic!("{WORKER}: {task:?}"),
    }
}

/// Starts this binary as a worker and returns what it printed for the parent.
fn worker(task: &[&str]) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "resume::worker_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WORKER, task.join("\n"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "worker {task:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = (stdout.lines()).find_map(|l| l.split_once("worker-output: ").map(|(_, out)| out));
    line.unwrap_or_else(|| panic!("no output from worker {task:?}:\n{stdout}"))
        .to_owned()
}

#[tokio::test]
async fn thinking_goes_back_byte_for_byte_after_a_resume_in_another_process() {
    let server = Replay::start([
        Reply::stream("interleaved_1.sse"),
        Reply::stream("interleaved_2.sse"),
        Reply::stream("interleaved_3.sse"),
    ]);
    let base_url = server.base_url();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let db = scratch("resume").join(format!("{nanos}.db"));
    let db = db.to_str().unwrap();
    let thread = format!("revenue-{nanos}");

    let checkpoint = worker(&["start", &base_url, db, &thread]);
    assert_eq!(server.requests().len(), 1, "turn 1, then the interrupt");
    let answer = worker(&["resume", &base_url, db, &checkpoint]);
    assert!(answer.contains("$7,500"), "{answer}");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let first = json!({
        "type": "thinking",
        "thinking": "The user wants the revenue for 150 units at $50 each, then a comparison with the database. Calculator first.",
        "signature": "EuYBCkQYAiJAk3Nw1Ls4yYbmZ0eHzVx+interleaved/one=="
    });
    let second = json!({
        "type": "thinking",
        "thinking": "7500 in revenue. Now the average monthly revenue from the database.",
        "signature": "EuYBCkQYAiJAvQ2p8Rk0Tq+interleaved/two=="
    });
    // Sent by the second process, from what the first one checkpointed.
    assert_eq!(
        thinking_blocks(&requests[1].json()),
        std::slice::from_ref(&first)
    );
    assert_eq!(
        thinking_blocks(&requests[2].json()),
        [first.clone(), second]
    );
    for request in &requests[1..] {
        assert!(request.text().contains(&first["signature"].to_string()));
    }
    assert_eq!(blocks(&requests[1].json(), 1)[0], first);
    assert_eq!(blocks(&requests[1].json(), 2)[0]["content"], "7500");
}
