//! Resumes that are refused change nothing: unknown, used, corrupt, of another format,
//! expired; decisions missing or for no interrupt.

use std::time::Duration;

use serde_json::json;
use tower_adk::agent::ResumeError;
use tower_adk::checkpoint::{CheckpointError, CheckpointId, CheckpointStore, MemoryStore};
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentError, AgentRequest, AgentResult, RunStatus};

use super::{AskBefore, Counter, counted};

fn agent(store: &MemoryStore, runs: &Counter) -> Agent {
    let model = ScriptedModel::per_run([Turn::call("c1", "transfer", json!({})), Turn::text("ok")]);
    Agent::builder(model)
        .checkpoints(store.clone())
        .tool(counted("transfer", runs))
        .build()
        .unwrap()
}

async fn stop(agent: &Agent) -> AgentResult {
    let request = AgentRequest::user("send").with_handler(AskBefore("transfer"));
    let stopped = agent.run(request).await.unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    stopped
}

fn approve(checkpoint: CheckpointId) -> AgentRequest {
    AgentRequest::resume(checkpoint, [("agent:agent/tool:c1", Decision::Approve)])
        .with_handler(AskBefore("transfer"))
}

/// Why a resume was refused.
fn refusal(result: Result<AgentResult, AgentError>) -> ResumeError {
    match result {
        Err(AgentError::Resume(error)) => *error,
        other => panic!("expected a refused resume, got {other:?}"),
    }
}

/// The checkpoint error of a run whose record could not be read.
fn unreadable(result: Result<AgentResult, AgentError>) -> CheckpointError {
    match result {
        Err(AgentError::Checkpoint(error)) => *error,
        other => panic!("expected an unreadable record, got {other:?}"),
    }
}

#[tokio::test]
async fn a_checkpoint_resumed_twice_is_refused_the_second_time() {
    let (store, runs) = (MemoryStore::new(), Counter::default());
    let agent = agent(&store, &runs);
    let checkpoint = stop(&agent).await.checkpoint.unwrap();
    agent.run(approve(checkpoint.clone())).await.unwrap();
    let again = refusal(agent.run(approve(checkpoint.clone())).await);
    assert!(
        matches!(again, ResumeError::Used(ref id, _) if *id == checkpoint),
        "{again}"
    );
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn two_resumes_of_one_checkpoint_at_once_run_the_call_once() {
    let (store, runs) = (MemoryStore::new(), Counter::default());
    let agent = agent(&store, &runs);
    let checkpoint = stop(&agent).await.checkpoint.unwrap();
    let (a, b) = tokio::join!(
        agent.run(approve(checkpoint.clone())).into_future(),
        agent.run(approve(checkpoint.clone())).into_future()
    );
    assert_eq!([a.is_ok(), b.is_ok()].iter().filter(|ok| **ok).count(), 1);
    let refused = refusal(if a.is_err() { a } else { b });
    assert!(matches!(refused, ResumeError::Used(..)), "{refused}");
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn decisions_that_do_not_answer_every_interrupt_exactly_are_refused() {
    let (store, runs) = (MemoryStore::new(), Counter::default());
    let agent = agent(&store, &runs);
    let checkpoint = stop(&agent).await.checkpoint.unwrap();

    let none = AgentRequest::resume(checkpoint.clone(), Vec::<(String, Decision)>::new());
    let missing = refusal(agent.run(none).await);
    assert!(matches!(missing, ResumeError::MissingDecision(ref id) if id == "agent:agent/tool:c1"));

    let extra = AgentRequest::resume(
        checkpoint.clone(),
        [
            ("agent:agent/tool:c1", Decision::Approve),
            ("agent:agent/tool:zz", Decision::Approve),
        ],
    );
    let unknown = refusal(agent.run(extra).await);
    assert!(
        matches!(unknown, ResumeError::UnknownInterrupt(ref id) if id == "agent:agent/tool:zz")
    );

    let nowhere = CheckpointId {
        thread: checkpoint.thread.clone(),
        version: checkpoint.version + 7,
        run: checkpoint.run.clone(),
    };
    assert!(matches!(
        refusal(agent.run(approve(nowhere)).await),
        ResumeError::Unknown(_)
    ));
    let other_run = CheckpointId {
        run: "someone-else".into(),
        ..checkpoint.clone()
    };
    assert!(matches!(
        refusal(agent.run(approve(other_run)).await),
        ResumeError::Unknown(_)
    ));

    // Nothing of that changed the checkpoint.
    assert_eq!(
        store.list(&checkpoint.thread).await.unwrap(),
        [checkpoint.version]
    );
    let done = agent.run(approve(checkpoint)).await.unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_corrupt_record_and_one_of_another_format_are_typed_errors() {
    let (store, runs) = (MemoryStore::new(), Counter::default());
    let agent = agent(&store, &runs);
    let checkpoint = stop(&agent).await.checkpoint.unwrap();
    let thread = checkpoint.thread.clone();

    let head = store.head(&thread).await.unwrap().unwrap();
    let mut record: serde_json::Value = serde_json::from_slice(&head.bytes).unwrap();
    record["format"] = json!(99);
    let version = store
        .append(
            &thread,
            Some(head.version),
            serde_json::to_vec(&record).unwrap(),
        )
        .await
        .unwrap();
    let at = |version| CheckpointId {
        version,
        ..checkpoint.clone()
    };
    let future = unreadable(agent.run(approve(at(version))).await);
    assert!(
        matches!(future, CheckpointError::UnknownFormat { found: 99 }),
        "{future}"
    );

    let version = store
        .append(&thread, Some(version), b"\x00not json".to_vec())
        .await
        .unwrap();
    let corrupt = unreadable(agent.run(approve(at(version))).await);
    assert!(matches!(corrupt, CheckpointError::Corrupt(_)), "{corrupt}");
    // And a thread whose head is corrupt refuses new runs the same way.
    let on_thread = agent
        .run(AgentRequest::user("hi").on_thread(thread.as_str()))
        .await;
    assert!(matches!(unreadable(on_thread), CheckpointError::Corrupt(_)));
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn an_expired_checkpoint_is_unknown() {
    let runs = Counter::default();
    let store = MemoryStore::new().expire_after(Duration::from_millis(50));
    let agent = agent(&store, &runs);
    let checkpoint = stop(&agent).await.checkpoint.unwrap();
    tokio::time::sleep(Duration::from_millis(120)).await;
    let expired = refusal(agent.run(approve(checkpoint)).await);
    assert!(matches!(expired, ResumeError::Unknown(_)), "{expired}");
    assert_eq!(runs.get(), 0);
}

#[test]
fn a_checkpoint_id_is_text_and_back() {
    let id: CheckpointId = "a@b@4#r1".parse().unwrap();
    assert_eq!(
        (id.thread.as_str(), id.version, id.run.as_str()),
        ("a@b", 4, "r1")
    );
    assert!("no-version#r".parse::<CheckpointId>().is_err());
    assert!("t@x#r".parse::<CheckpointId>().is_err());
}
