//! Stock tower middleware around streamed tools: the layer sees each call whole, from
//! its start to its last chunk, while the chunks still reach the caller as they come.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tower::limit::ConcurrencyLimitLayer;
use tower::timeout::TimeoutLayer;
use tower_adk::handlers::tool_layer;
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, AgentResult, Finish, HandlerLayer, Tool, ToolCall,
    ToolErrorKind, ToolInfo, ToolStream,
};

/// Runs one call of `tool` (named `slow`) and returns the chunks the caller saw and the
/// result.
async fn run_one_call(tool: Tool, request: AgentRequest) -> (Vec<String>, AgentResult) {
    let model = ScriptedModel::new([Turn::call("c1", "slow", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model).tool(tool).build().unwrap();
    let mut run = agent.run(request);
    let mut chunks = Vec::new();
    while let Some(event) = run.next().await {
        match event.unwrap() {
            AgentEvent::ToolOutputChunk { chunk, .. } => chunks.push(chunk),
            AgentEvent::Completed(result) => return (chunks, *result),
            _ => {}
        }
    }
    panic!("the run ended without a result");
}

/// Three chunks, 300 ms apart: 900 ms in all.
fn slow_stream() -> Tool {
    chunk_tool("slow", &["1", "2", "3"], Duration::from_millis(300))
}

fn assert_timed_out_after_first_chunk(chunks: &[String], result: &AgentResult) {
    assert_eq!(
        chunks,
        ["1"],
        "the chunk before the deadline reaches the caller"
    );
    let record = &result.tool_records[0];
    let error = record.error.as_ref().expect("the call timed out");
    assert_eq!(error.kind(), ToolErrorKind::Timeout);
    assert_eq!(result.final_message.content(), "done", "the run goes on");
}

#[tokio::test(start_paused = true)]
async fn a_tower_timeout_on_one_streamed_tool_bounds_the_whole_stream() {
    let tool = slow_stream().layer(TimeoutLayer::new(Duration::from_millis(500)));

    let (chunks, result) = run_one_call(tool, AgentRequest::user("go")).await;

    assert_timed_out_after_first_chunk(&chunks, &result);
}

#[tokio::test(start_paused = true)]
async fn a_tower_timeout_as_tool_wrapper_bounds_the_whole_stream() {
    let timeout = tool_layer(TimeoutLayer::new(Duration::from_millis(500)));
    let request = AgentRequest::user("go").with_handler(timeout);

    let (chunks, result) = run_one_call(slow_stream(), request).await;

    assert_timed_out_after_first_chunk(&chunks, &result);
}

#[tokio::test(start_paused = true)]
async fn a_tower_timeout_in_a_handler_layer_bounds_the_whole_stream() {
    let model = ScriptedModel::new([Turn::call("c1", "slow", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model).tool(slow_stream()).build().unwrap();
    let agent = tower::ServiceBuilder::new()
        .layer(HandlerLayer::new(tool_layer(TimeoutLayer::new(
            Duration::from_millis(500),
        ))))
        .service(agent);

    let result = tower::ServiceExt::oneshot(agent, AgentRequest::user("go"))
        .await
        .unwrap()
        .await
        .unwrap();

    let error = result.tool_records[0].error.as_ref().expect("timed out");
    assert_eq!(error.kind(), ToolErrorKind::Timeout);
}

#[tokio::test(start_paused = true)]
async fn a_streamed_call_within_its_timeout_keeps_every_chunk() {
    let tool = slow_stream().layer(TimeoutLayer::new(Duration::from_secs(5)));

    let (chunks, result) = run_one_call(tool, AgentRequest::user("go")).await;

    assert_eq!(chunks, ["1", "2", "3"]);
    assert!(result.tool_records[0].is_success());
    assert_eq!(result.tool_records[0].content, "123");
}

/// A streamed tool that counts how many of its streams are open at once.
fn counting_stream(name: &str, open: &Arc<AtomicUsize>, most: &Arc<AtomicUsize>) -> Tool {
    let (open, most) = (Arc::clone(open), Arc::clone(most));
    Tool::streaming(
        ToolInfo::new(name, "Streams two chunks slowly."),
        tower::service_fn(move |_| {
            let (open, most) = (Arc::clone(&open), Arc::clone(&most));
            async move {
                let now = open.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                let chunks = futures::stream::iter(["a", "b"]).then(|chunk| async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Ok::<_, std::convert::Infallible>(chunk)
                });
                let closing = futures::stream::once(async move {
                    open.fetch_sub(1, Ordering::SeqCst);
                    Ok("")
                });
                Ok::<_, std::convert::Infallible>(ToolStream::new(chunks.chain(closing)))
            }
        }),
    )
}

#[tokio::test(start_paused = true)]
async fn a_concurrency_limit_as_tool_wrapper_holds_its_permit_until_the_last_chunk() {
    let (open, most) = (Arc::default(), Arc::default());
    let model = ScriptedModel::new([
        Turn::calls(["c1", "c2", "c3"].map(|id| ToolCall::new(id, "count", json!({})))),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(counting_stream("count", &open, &most))
        .build()
        .unwrap();
    let request = AgentRequest::user("go").with_handler(tool_layer(ConcurrencyLimitLayer::new(1)));

    let result = agent.run(request).await.unwrap();

    assert!(result.tool_records.iter().all(|r| r.content == "ab"));
    assert_eq!(most.load(Ordering::SeqCst), 1, "one stream open at a time");
}

#[tokio::test(start_paused = true)]
async fn a_layered_streamed_tool_keeps_how_it_finishes_the_run() {
    let finishing = Tool::streaming(
        ToolInfo::new("slow", "Streams, then ends the run."),
        tower::service_fn(|_| async {
            Ok::<_, std::convert::Infallible>(
                ToolStream::from_chunks(["the ", "answer"]).finishing(Finish::WithResult),
            )
        }),
    )
    .layer(TimeoutLayer::new(Duration::from_secs(5)));

    let (chunks, result) = run_one_call(finishing, AgentRequest::user("go")).await;

    assert_eq!(chunks, ["the ", "answer"]);
    assert_eq!(result.final_message.content(), "the answer");
}
