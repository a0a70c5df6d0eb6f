//! A remote task that asks for input is the caller's interrupt, answered through the
//! caller's resume; a dropped run cancels its remote task.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use tower_adk::a2a::client::RemoteAgent;
use tower_adk::checkpoint::MemoryStore;
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, RunStatus};

use super::drain;
use super::peer::Peer;

fn support(model: &ScriptedModel, remote: &RemoteAgent) -> Agent {
    Agent::builder(model.clone())
        .name("support")
        .tool(remote.as_tool())
        .checkpoints(MemoryStore::new())
        .build()
        .unwrap()
}

#[tokio::test]
async fn input_required_is_our_interrupt_and_an_approval_resumes_the_remote_task() {
    let peer = Peer::start().await;
    approval_resumes_the_remote_task(&peer).await;
    assert!(peer.methods().await.iter().all(|m| m != "SendMessage"));
}

#[tokio::test]
async fn input_required_in_a_whole_answer_is_resumed_the_same_way() {
    let peer = Peer::with_args(&["--no-streaming"]).await;
    approval_resumes_the_remote_task(&peer).await;
    assert_eq!(
        peer.methods().await,
        ["SendMessage", "SendMessage", "GetTask"]
    );
}

async fn approval_resumes_the_remote_task(peer: &Peer) {
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "ask about a refund"})),
        Turn::text("The refund is done."),
    ]);
    let agent = support(&model, &ledger);
    let (_, stopped) = drain(agent.run(AgentRequest::user("Refund order 7"))).await;
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(stopped.interrupts.len(), 1);
    let pending = &stopped.interrupts[0];
    // Named by the call, then by the remote agent and its task.
    let task_id = pending
        .id
        .strip_prefix("agent:support/tool:c1/agent:ledger/tool:")
        .unwrap_or_else(|| panic!("{}", pending.id))
        .to_owned();
    assert!(!task_id.is_empty());
    // The person sees the remote agent's question and its data.
    assert_eq!(pending.payload["text"], "Refund 40 EUR to order 7?");
    assert_eq!(pending.payload["data"][0]["action"], "refund");
    assert_eq!(pending.payload["data"][0]["amount"], 40.0);
    assert_eq!(pending.payload["task_id"], task_id.as_str());

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(pending.id.clone(), Decision::Approve)],
    );
    let (_, done) = drain(agent.run(resume)).await;
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(done.final_message.content(), "The refund is done.");
    // The same remote task went on, with the decision as its next message.
    let content = &done.tool_record("c1").unwrap().content;
    let expected = format!(
        r#"Refunded. Got: [{{"data": {{"decisions": {{"agent:ledger/tool:{task_id}": {{"type": "approve"}}}}}}}}]"#
    );
    assert_eq!(content, &expected);
    let task = ledger.get_task(&task_id).await.unwrap();
    assert_eq!(task.status.state, tower_adk::a2a::TaskState::Completed);
}

#[tokio::test]
async fn an_answer_in_words_goes_to_the_remote_task_as_text() {
    let peer = Peer::start().await;
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "ask about a refund"})),
        Turn::text("ok"),
    ]);
    let agent = support(&model, &ledger);
    let (_, stopped) = drain(agent.run(AgentRequest::user("Refund order 7"))).await;
    let id = stopped.interrupts[0].id.clone();
    let answer = Decision::Respond {
        answer: json!("Only 30 EUR, please."),
    };
    let resume = AgentRequest::resume(stopped.checkpoint.clone().unwrap(), [(id, answer)]);
    let (_, done) = drain(agent.run(resume)).await;
    assert_eq!(
        done.tool_record("c1").unwrap().content,
        r#"Refunded. Got: [{"text": "Only 30 EUR, please."}]"#
    );
}

#[tokio::test]
async fn dropping_the_run_cancels_the_remote_task() {
    let peer = Peer::start().await;
    let ledger = RemoteAgent::builder(peer.url())
        .cancel_timeout(Duration::from_secs(2))
        .connect()
        .await
        .unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "slow count"})),
        Turn::text("never"),
    ]);
    let agent = support(&model, &ledger);
    let mut run = agent.run(AgentRequest::user("Count the ledger"));
    // Wait until the remote task works (its status message streams as a chunk).
    loop {
        let event = run.next().await.unwrap().unwrap();
        if event.output_chunk() == Some("Counting the ledger...\n") {
            break;
        }
    }
    let before = peer.record().await;
    assert_eq!(before["cancelled"], json!([]));
    drop(run);
    // The cancel is sent from a task of its own, within the cancel timeout.
    let deadline = Instant::now() + Duration::from_secs(5);
    let cancelled = loop {
        let record = peer.record().await;
        let cancelled = record["cancelled"].as_array().unwrap().clone();
        if !cancelled.is_empty() || Instant::now() > deadline {
            break cancelled;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        cancelled.len(),
        1,
        "CancelTask did not reach the remote agent"
    );
    let task = ledger
        .get_task(cancelled[0].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(task.status.state, tower_adk::a2a::TaskState::Canceled);
    assert!(peer.methods().await.contains(&"CancelTask".to_owned()));
}

#[tokio::test]
async fn a_finished_call_cancels_nothing() {
    let peer = Peer::start().await;
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "stream"})),
        Turn::call("c2", "ledger", json!({"message": "fail"})),
        Turn::call("c3", "ledger", json!({"message": "ask"})),
        Turn::text("never"),
    ]);
    let (_, stopped) = drain(support(&model, &ledger).run(AgentRequest::user("go"))).await;
    assert_eq!(stopped.status, RunStatus::Interrupted);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!peer.methods().await.contains(&"CancelTask".to_owned()));
}
