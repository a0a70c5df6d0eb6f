//! The recorded tool loop, interrupted after turn 1 (the tool waits for an approval) and
//! resumed from its checkpoint in another OS process: turn 1's reasoning item reaches the
//! requests of turns 2 and 3 byte for byte, though the process that sends them only has
//! the SQLite file.
//!
//! The other process is this test binary again, started with `--exact --ignored` on the
//! `worker` test below and its instructions in an environment variable (libtest runs only
//! that test; without the variable it does nothing). The two processes share nothing but
//! the checkpoint file and the replay server's address: no memory, no handle.

use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};
use tower_adk::checkpoint::{CheckpointId, CheckpointStore, SqliteStore};
use tower_adk::interrupt::{Decision, Interrupt};
use tower_adk::providers::openai::responses::ResponsesModel;
use tower_adk::{
    Agent, AgentRequest, BoxError, Handler, RunStatus, ToolCallNext, ToolRequest, ToolResponse,
};

use crate::recorded::{TOOL_LOOP, assert_carries_reasoning_of};
use crate::replay::Replay;
use crate::{scratch, weather};

/// The variable that makes the `worker` test a worker, holding its instructions.
const WORKER: &str = "TOWER_ADK_RESPONSES_RESUME_WORKER";

/// The first weather call of the recording.
const FIRST_CALL: &str = "call_unLAR8MvFNptuiZK6K6HCy5k";

/// Asks before the first weather call: interrupts until it comes back with a decision.
#[derive(Debug, Clone)]
struct AskFirst;

impl Handler for AskFirst {
    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        if request.call_id == FIRST_CALL && request.decision().is_none() {
            return Err(Interrupt::new(json!({"approve": request.arguments})).into());
        }
        next.run(request).await
    }
}

fn agent(replay_url: &str, store: Arc<dyn CheckpointStore>) -> Agent {
    let model = ResponsesModel::builder()
        .base_url(replay_url)
        .api_key("sk-test")
        .model("o4-mini")
        .build()
        .unwrap();
    Agent::builder(model)
        .name("weather")
        .checkpoints(store)
        .tool(weather())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_resumed_in_another_process_sends_turn_1s_reasoning_byte_for_byte() {
    let replay = Replay::start(TOOL_LOOP).await;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let db = scratch("resume").join(format!("{}-{nanos}.db", std::process::id()));
    let store: Arc<dyn CheckpointStore> =
        Arc::new(SqliteStore::open(db.to_str().unwrap()).await.unwrap());

    let stopped = agent(&replay.base_url(), store)
        .run(
            AgentRequest::user("What is the weather in Boston and in Cambridge?")
                .on_thread("weather")
                .with_handler(AskFirst),
        )
        .await
        .unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(replay.bodies().len(), 1, "turn 1 only, in this process");
    let instructions = json!({
        "url": replay.base_url(),
        "db": db,
        "checkpoint": stopped.checkpoint.unwrap().to_string(),
        "interrupt": stopped.interrupts[0].id,
    });

    let exe = std::env::current_exe().unwrap();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(exe)
            .args(["resume::worker", "--exact", "--ignored", "--nocapture"])
            .env(WORKER, instructions.to_string())
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the worker failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("answer: It is 21°C in Boston and 20°C in Cambridge."),
        "{stdout}"
    );

    let raw = replay.raw_bodies();
    let bodies = replay.bodies();
    assert_eq!(bodies.len(), 3, "turns 2 and 3 from the other process");
    assert_carries_reasoning_of(&raw[1], &bodies[1], "tool_loop_1.sse");
    assert_carries_reasoning_of(&raw[2], &bodies[2], "tool_loop_1.sse");
    assert_carries_reasoning_of(&raw[2], &bodies[2], "tool_loop_2.sse");
}

/// The other process: resumes the checkpoint it is given, approving the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a worker process of the test above, started by it"]
async fn worker() {
    let Ok(instructions) = std::env::var(WORKER) else {
        return;
    };
    let instructions: Value = serde_json::from_str(&instructions).unwrap();
    let text = |key: &str| instructions[key].as_str().unwrap().to_owned();
    let store: Arc<dyn CheckpointStore> = Arc::new(SqliteStore::open(&text("db")).await.unwrap());
    let checkpoint: CheckpointId = text("checkpoint").parse().unwrap();
    let request = AgentRequest::resume(checkpoint, [(text("interrupt"), Decision::Approve)])
        .with_handler(AskFirst);
    let done = agent(&text("url"), store).run(request).await.unwrap();
    println!("answer: {}", done.final_message.content());
}
