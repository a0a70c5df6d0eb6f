//! A three-turn tool loop on the recorded `gemini-2.5-flash` run of Google's SDK tests:
//! turn 1's and turn 2's thought signatures come back on their `functionCall` parts, byte
//! for byte, and our `contents` are the ones Google's SDK sent; also when the run is
//! interrupted after turn 1 and resumed from its checkpoint in another process.

use std::process::Command;

use serde_json::{Value, json};
use tower_adk::checkpoint::{CheckpointId, SqliteStore};
use tower_adk::interrupt::{Decision, Interrupt};
use tower_adk::model::{Usage, UsageMeter};
use tower_adk::{
    Agent, AgentRequest, BoxError, Handler, RunStatus, ToolCallNext, ToolRequest, ToolResponse,
};

use super::replay::{Replay, Reply, recorded};
use super::{custom_divide, model, recorded_signature, sdk, signatures};

const QUESTION: &str = "Divide 10 by 2 using the customDivide function, then divide the result by 2 again, then tell me the result";

/// The requests Google's SDK sent in the recorded run.
fn sdk_requests() -> Vec<Value> {
    let text = std::fs::read_to_string(recorded("tool-loop-requests.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn recorded_turns() -> [Reply; 3] {
    [1, 2, 3].map(|turn| Reply::stream(&format!("tool-loop-{turn}.sse")))
}

/// Turn 2's and turn 3's requests carry the signatures of the turns before, on their
/// calls, and the same `contents` as the SDK's.
fn assert_turns_as_the_sdk_sent_them(requests: &[Value]) {
    let first = recorded_signature("tool-loop-1.sse", 0);
    let second = recorded_signature("tool-loop-2.sse", 0);
    assert_eq!(signatures(&requests[0]), []);
    assert_eq!(
        signatures(&requests[1]),
        [("functionCall".into(), first.clone())]
    );
    assert_eq!(
        signatures(&requests[2]),
        [
            ("functionCall".into(), first),
            ("functionCall".into(), second)
        ]
    );
    let sdk = sdk_requests();
    for turn in 0..3 {
        assert_eq!(
            requests[turn]["contents"],
            sdk[turn]["contents"],
            "turn {}: the contents Google's SDK sent",
            turn + 1
        );
    }
}

#[tokio::test]
async fn a_three_turn_loop_sends_each_signature_on_its_call_as_googles_sdk_did() {
    let server = Replay::start(recorded_turns()).await;
    let agent = Agent::builder(model(server.url()).build().unwrap())
        .tool(custom_divide())
        .build()
        .unwrap();
    let meter = UsageMeter::new();
    let result = agent
        .run(AgentRequest::user(QUESTION).with_extension(meter.clone()))
        .await
        .unwrap();
    assert_eq!(result.final_message.content(), "The result is 2.");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(
            request.path,
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(request.api_key.as_deref(), Some("test-key"));
    }
    let bodies: Vec<Value> = requests.into_iter().map(|r| r.body).collect();
    assert_turns_as_the_sdk_sent_them(&bodies);
    sdk::validate(&bodies);

    // The last answer's text signature is kept in its place, before its text.
    let parts = result.final_message.parts();
    let signature = recorded_signature("tool-loop-3.sse", 0);
    assert!(
        matches!(&parts[0], tower_adk::content::Part::Reasoning(r)
            if r.data.as_deref() == Some(signature.as_str()) && r.id.is_none()),
        "{parts:?}"
    );

    // Usage, summed over the run: (prompt, candidates + thoughts, thoughts, total).
    let turns = [(81, 20, 179, 280), (293, 20, 110, 423), (435, 6, 102, 543)];
    let expected = turns
        .iter()
        .map(|&(p, c, t, total)| Usage::new(p, c + t, total).with_reasoning(t))
        .fold(Usage::default(), |sum, u| sum + u);
    assert_eq!(result.usage.calls, 3);
    assert_eq!(result.usage.total, expected);
    assert_eq!(result.usage.by_model["gemini-2.5-flash"], expected);
    assert_eq!(meter.total(), expected);
    assert_eq!(
        (expected.prompt_tokens, expected.completion_tokens),
        (809, 437)
    );
}

/// Interrupts before the first division runs, until a decision comes.
#[derive(Debug, Clone)]
struct AskFirst;

impl Handler for AskFirst {
    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        let first = request.arguments["numerator"].as_f64() == Some(10.0);
        if first && request.decision().is_none() {
            return Err(Interrupt::new(json!({"approve": request.arguments})).into());
        }
        next.run(request).await
    }
}

fn store_path(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let unique = format!("{name}-{}-{}", std::process::id(), uuid_like());
    dir.join(format!("{unique}.db"))
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_resumed_from_its_checkpoint_in_another_process_sends_the_same_signatures() {
    let server = Replay::start(recorded_turns()).await;
    let path = store_path("resume");
    let store = SqliteStore::open(&path).await.unwrap();
    let agent = Agent::builder(model(server.url()).build().unwrap())
        .checkpoints(store)
        .tool(custom_divide())
        .build()
        .unwrap();
    let stopped = agent
        .run(
            AgentRequest::user(QUESTION)
                .on_thread("divide")
                .with_handler(AskFirst),
        )
        .await
        .unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(server.requests().len(), 1);
    drop(agent);

    // Another process: this binary again, running only the worker below, which opens the
    // SQLite file and resumes the checkpoint with a model of its own.
    let checkpoint = stopped.checkpoint.unwrap().to_string();
    let interrupt = stopped.interrupts[0].id.to_string();
    let url = server.url().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tool_loop::worker_resumes_a_checkpoint",
                "--nocapture",
            ])
            .env("GEMINI_WORKER_STORE", &path)
            .env("GEMINI_WORKER_CHECKPOINT", checkpoint)
            .env("GEMINI_WORKER_INTERRUPT", interrupt)
            .env("GEMINI_WORKER_URL", url)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the worker failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("worker answered: The result is 2."),
        "{stdout}"
    );
    let pid: u32 = (stdout.lines())
        .find_map(|l| l.strip_prefix("worker pid "))
        .and_then(|pid| pid.trim().parse().ok())
        .unwrap();
    assert_ne!(pid, std::process::id(), "another process resumed the run");

    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), 3, "turn 1 here, turns 2 and 3 there");
    assert_turns_as_the_sdk_sent_them(&bodies);
    sdk::validate(&bodies);
}

/// The other process of the test above: does nothing unless it names a checkpoint.
#[tokio::test]
async fn worker_resumes_a_checkpoint() {
    let Ok(checkpoint) = std::env::var("GEMINI_WORKER_CHECKPOINT") else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap();
    let store = SqliteStore::open(var("GEMINI_WORKER_STORE")).await.unwrap();
    let agent = Agent::builder(model(&var("GEMINI_WORKER_URL")).build().unwrap())
        .checkpoints(store)
        .tool(custom_divide())
        .build()
        .unwrap();
    let checkpoint: CheckpointId = checkpoint.parse().unwrap();
    let request = AgentRequest::resume(
        checkpoint,
        [(var("GEMINI_WORKER_INTERRUPT"), Decision::Approve)],
    )
    .with_handler(AskFirst);
    let done = agent.run(request).await.unwrap();
    println!("worker pid {}", std::process::id());
    println!("worker answered: {}", done.final_message.content());
}
