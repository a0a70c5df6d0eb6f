//! Progress notifications become the chunks of a streamed tool call, before its result.

use futures::StreamExt;
use serde_json::json;
use tower_adk::providers::mcp::McpServer;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, AgentResult};

use crate::support::{self, HttpServer};

/// The run's output chunks, in order, and its result.
async fn chunks_of(agent: &Agent) -> (Vec<String>, AgentResult) {
    let mut run = agent.run(AgentRequest::user("go"));
    let mut chunks = Vec::new();
    while let Some(event) = run.next().await {
        match event.unwrap() {
            AgentEvent::ToolOutputChunk { chunk, .. } => chunks.push(chunk),
            AgentEvent::Completed(result) => return (chunks, *result),
            _ => {}
        }
    }
    panic!("the run ended without a result")
}

// On a multi-threaded runtime, as in production: rmcp handles each notification in a task
// of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_progress_arrives_as_tool_output_chunks_then_the_result() {
    let model = ScriptedModel::new([
        Turn::call(
            "c1",
            "trigger-long-running-operation",
            json!({"duration": 0.8, "steps": 4}),
        ),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool_set(support::everything().connect().await.unwrap())
        .build()
        .unwrap();

    let (chunks, result) = chunks_of(&agent).await;

    assert_eq!(
        chunks,
        [
            "progress 1/4\n",
            "progress 2/4\n",
            "progress 3/4\n",
            "progress 4/4\n",
            "Long running operation completed. Duration: 0.8 seconds, Steps: 4.",
        ]
    );
    // The model reads the whole stream.
    assert_eq!(result.tool_records[0].content, chunks.concat());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_arrives_as_chunks_over_streamable_http_too() {
    let server = HttpServer::toolbox();
    let model = ScriptedModel::new([
        Turn::call("c1", "countdown", json!({"steps": 2})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool_set(McpServer::http(server.url()).connect().await.unwrap())
        .build()
        .unwrap();

    let (chunks, _) = chunks_of(&agent).await;

    assert_eq!(chunks, ["step 1 of 2\n", "step 2 of 2\n", "liftoff"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_messages_become_chunks_of_their_own() {
    let model = ScriptedModel::new([
        Turn::call("c1", "countdown", json!({"steps": 3})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool_set(support::toolbox().connect().await.unwrap())
        .build()
        .unwrap();

    let (chunks, _) = chunks_of(&agent).await;

    assert_eq!(
        chunks,
        ["step 1 of 3\n", "step 2 of 3\n", "step 3 of 3\n", "liftoff"]
    );
}

#[tokio::test]
async fn without_progress_streaming_the_tools_answer_whole() {
    let set = support::toolbox()
        .stream_progress(false)
        .connect()
        .await
        .unwrap();
    let tools = set.clone().into_tools().unwrap();
    assert!(tools.iter().all(|t| t.is_invokable() && !t.is_streamable()));
    let model = ScriptedModel::new([
        Turn::call("c1", "countdown", json!({"steps": 2})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model).tool_set(set).build().unwrap();

    let (chunks, result) = chunks_of(&agent).await;

    assert!(chunks.is_empty(), "{chunks:?}");
    assert_eq!(result.tool_records[0].content, "liftoff");
}
