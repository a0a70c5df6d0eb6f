//! A remote agent as a tool: answers, streamed chunks, one conversation per run, the
//! `SendMessage` path for an agent that does not stream, and the bearer token.

use futures::StreamExt;
use serde_json::json;
use tower_adk::a2a::client::RemoteAgent;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, ToolErrorKind};

use super::drain;
use super::peer::Peer;

fn support(model: &ScriptedModel, remote: &RemoteAgent) -> Agent {
    Agent::builder(model.clone())
        .name("support")
        .tool(remote.as_tool())
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_remote_answer_is_the_tool_result_and_a_run_s_calls_share_one_conversation() {
    let peer = Peer::start().await;
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    assert_eq!(ledger.name(), "ledger");
    assert_eq!(
        ledger.description(),
        "Answers questions about invoices and refunds."
    );
    assert!(ledger.is_streaming());
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "hello"})),
        Turn::call("c2", "ledger", json!({"message": "hello again"})),
        Turn::text("done"),
    ]);
    let (_, result) = drain(support(&model, &ledger).run(AgentRequest::user("hi"))).await;
    assert_eq!(
        result.tool_record("c1").unwrap().content,
        "Echo: hello (turn 1)"
    );
    // The second call went on with the first call's remote conversation (its contextId).
    assert_eq!(
        result.tool_record("c2").unwrap().content,
        "Echo: hello again (turn 2)"
    );
    // The model was told what the agent does, from its card.
    let tools = &model.requests()[0].tools;
    assert_eq!(tools[0].name, "ledger");
    assert_eq!(
        tools[0].description,
        "Answers questions about invoices and refunds."
    );

    // A new run starts a new remote conversation.
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "anew"})),
        Turn::text("done"),
    ]);
    let (_, result) = drain(support(&model, &ledger).run(AgentRequest::user("hi"))).await;
    assert_eq!(
        result.tool_record("c1").unwrap().content,
        "Echo: anew (turn 1)"
    );
    assert!(
        peer.methods()
            .await
            .iter()
            .all(|m| m == "SendStreamingMessage")
    );
}

#[tokio::test]
async fn streamed_artifact_chunks_arrive_as_tool_output_chunks_in_order() {
    let peer = Peer::start().await;
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "stream invoice 7"})),
        Turn::text("done"),
    ]);
    let (events, result) = drain(support(&model, &ledger).run(AgentRequest::user("hi"))).await;
    let chunks: Vec<&str> = events.iter().filter_map(AgentEvent::output_chunk).collect();
    assert_eq!(chunks, ["Invoice 7 ", "is paid ", "in full."]);
    // Each chunk reached the caller before the call's result.
    let last_chunk = events
        .iter()
        .rposition(|e| e.output_chunk().is_some())
        .unwrap();
    let tool_result = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolResult(_)))
        .unwrap();
    assert!(last_chunk < tool_result);
    assert_eq!(
        result.tool_record("c1").unwrap().content,
        "Invoice 7 is paid in full."
    );
    // The model read the whole artifact.
    let seen = &model.requests()[1].messages;
    assert_eq!(seen.last().unwrap().content(), "Invoice 7 is paid in full.");
}

#[tokio::test]
async fn an_agent_whose_card_does_not_stream_is_sent_send_message() {
    let peer = Peer::with_args(&["--no-streaming"]).await;
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    assert!(!ledger.is_streaming());
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "stream invoice 7"})),
        Turn::call("c2", "ledger", json!({"message": "message please"})),
        Turn::text("done"),
    ]);
    let (events, result) = drain(support(&model, &ledger).run(AgentRequest::user("hi"))).await;
    // The whole answer comes at once: one chunk.
    let chunks: Vec<&str> = events.iter().filter_map(AgentEvent::output_chunk).collect();
    assert_eq!(chunks[0], "Invoice 7 is paid in full.");
    assert_eq!(
        result.tool_record("c1").unwrap().content,
        "Invoice 7 is paid in full."
    );
    // An answer that is a message, not a task.
    assert_eq!(
        result.tool_record("c2").unwrap().content,
        "Hello from a message."
    );
    assert_eq!(peer.methods().await, ["SendMessage", "SendMessage"]);

    // Streaming can be turned off for an agent that streams, too.
    let streaming = Peer::start().await;
    let ledger = RemoteAgent::builder(streaming.url())
        .streaming(false)
        .connect()
        .await
        .unwrap();
    let mut events = ledger.send(tower_adk::a2a::Message::new(
        "m1",
        tower_adk::a2a::Role::User,
        vec![tower_adk::a2a::Part::text("hello")],
    ));
    let answer = events.next().await.unwrap().unwrap();
    assert!(
        matches!(answer, tower_adk::a2a::StreamResponse::Task(task) if task.status.state == tower_adk::a2a::TaskState::Completed)
    );
    assert!(events.next().await.is_none());
    assert_eq!(streaming.methods().await, ["SendMessage"]);
}

#[tokio::test]
async fn the_bearer_token_and_headers_go_with_every_request() {
    let peer = Peer::with_args(&["--token", "s3cret"]).await;
    let ledger = RemoteAgent::builder(peer.url())
        .bearer_token("s3cret")
        .header("x-tenant", "acme")
        .connect()
        .await
        .unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "hello"})),
        Turn::text("done"),
    ]);
    let (_, result) = drain(support(&model, &ledger).run(AgentRequest::user("hi"))).await;
    assert_eq!(
        result.tool_record("c1").unwrap().content,
        "Echo: hello (turn 1)"
    );
    let record = peer.record().await;
    assert_eq!(record["requests"][0]["authorization"], "Bearer s3cret");

    // Without it, the agent answers 401: a failed call the model reads.
    let anonymous = RemoteAgent::connect(peer.url()).await.unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "hello"})),
        Turn::text("done"),
    ]);
    let (_, result) = drain(support(&model, &anonymous).run(AgentRequest::user("hi"))).await;
    let record = result.tool_record("c1").unwrap();
    assert_eq!(record.error.as_ref().unwrap().kind(), ToolErrorKind::Failed);
    assert!(record.content.contains("HTTP 401"), "{}", record.content);
}

#[tokio::test]
async fn a_failed_or_rejected_remote_task_is_a_tool_error_the_model_reads() {
    let peer = Peer::start().await;
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "ledger", json!({"message": "fail please"})).with_call(
            "c2",
            "ledger",
            json!({"message": "reject please"}),
        ),
        Turn::text("Billing is closed today."),
    ]);
    let (_, result) = drain(support(&model, &ledger).run(AgentRequest::user("hi"))).await;
    let failed = result.tool_record("c1").unwrap();
    assert_eq!(failed.error.as_ref().unwrap().kind(), ToolErrorKind::Failed);
    assert!(
        failed.content.contains("the ledger is closed"),
        "{}",
        failed.content
    );
    assert!(failed.content.contains("failed"), "{}", failed.content);
    let rejected = result.tool_record("c2").unwrap();
    assert!(
        rejected.content.contains("rejected: I only do billing"),
        "{}",
        rejected.content
    );
    // The model saw both failures and answered.
    let seen = &model.requests()[1].messages;
    assert!(
        seen.iter()
            .any(|m| m.content().contains("the ledger is closed"))
    );
    assert_eq!(result.final_message.content(), "Billing is closed today.");
}
