//! Argument transforms (re-validated) and output transforms, as standalone handlers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::handlers::{map_arguments, map_output, map_output_chunks};
use tower_adk::{Agent, AgentRequest, ToolErrorKind};

use crate::{counted_stream, counted_tool, one_call, run_with_chunks, streamed_echo};

#[tokio::test]
async fn an_argument_transform_reaches_invoked_and_streamed_tools() {
    let calls = Arc::new(AtomicUsize::new(0));
    let double = || {
        map_arguments(|call| {
            let n = call.arguments["n"].as_i64().unwrap_or(0);
            call.arguments = json!({"n": n * 2});
        })
    };
    for tool in [counted_tool("t", &calls), streamed_echo("t", &calls)] {
        let agent = Agent::builder(one_call("t", json!({"n": 21})))
            .tool(tool)
            .build()
            .unwrap();
        let result = agent
            .run(AgentRequest::user("go").with_handler(double()))
            .await
            .unwrap();
        assert_eq!(result.tool_records[0].content, r#"{"n":42}"#);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_argument_transform_that_breaks_the_schema_is_refused_before_the_tool() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("t", json!({"n": 1})))
        .tool(counted_tool("t", &calls))
        .build()
        .unwrap();
    let drop_n = map_arguments(|call| call.arguments = json!({}));

    let result = agent
        .run(AgentRequest::user("go").with_handler(drop_n))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    assert!(error.message().contains("an argument transform"), "{error}");
}

#[tokio::test]
async fn a_whole_output_transform_sees_a_streamed_output_whole_and_sends_one_chunk() {
    let produced = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("env", json!({"n": 1})))
        .tool(counted_stream("env", &["tok", "en=s3", "cret"], &produced))
        .build()
        .unwrap();
    // The secret straddles two chunks: a chunk transform would miss it.
    let redact = map_output(|text| text.replace("s3cret", "***"));

    let (chunks, records) =
        run_with_chunks(&agent, AgentRequest::user("go").with_handler(redact)).await;

    assert_eq!(chunks, ["token=***"]);
    assert_eq!(records[0].content, "token=***");
    assert_eq!(produced.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_chunk_output_transform_keeps_the_stream_chunk_by_chunk() {
    let produced = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("t", json!({"n": 1})))
        .tool(counted_stream("t", &["a", "b", "c"], &produced))
        .build()
        .unwrap();
    let upper = map_output_chunks(|chunk| chunk.to_uppercase());

    let (chunks, records) =
        run_with_chunks(&agent, AgentRequest::user("go").with_handler(upper)).await;

    assert_eq!(chunks, ["A", "B", "C"]);
    assert_eq!(records[0].content, "ABC");
}
