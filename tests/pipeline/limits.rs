//! Output limits: bytes and chars, invoked and streamed, multibyte text, early stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tower_adk::handlers::{max_output_bytes, max_output_chars};
use tower_adk::testing::text_tool;
use tower_adk::{Agent, AgentEvent, AgentRequest, Tool, ToolInfo};

use crate::{counted_stream, one_call, run_with_chunks};

async fn invoked_output(text: &str, limit: impl tower_adk::Handler) -> String {
    let agent = Agent::builder(one_call("t", json!({})))
        .tool(text_tool("t", text))
        .build()
        .unwrap();
    let result = agent
        .run(AgentRequest::user("go").with_handler(limit))
        .await
        .unwrap();
    result.tool_records[0].content.clone()
}

#[tokio::test]
async fn a_byte_cap_never_cuts_a_character_and_says_how_much_is_left_out() {
    // 1 + 2 + 3 + 4 bytes.
    let text = "aé€😀";
    for (cap, expected) in [
        (0, "…[truncated: 10 more bytes]"),
        (2, "a…[truncated: 9 more bytes]"),
        (3, "aé…[truncated: 7 more bytes]"),
        (5, "aé…[truncated: 7 more bytes]"),
        (6, "aé€…[truncated: 4 more bytes]"),
        (9, "aé€…[truncated: 4 more bytes]"),
        (10, "aé€😀"),
        (1000, "aé€😀"),
    ] {
        assert_eq!(
            invoked_output(text, max_output_bytes(cap)).await,
            expected,
            "cap {cap}"
        );
    }
}

#[tokio::test]
async fn a_char_cap_counts_characters_not_bytes() {
    let text = "日本語のテキスト";
    assert_eq!(
        invoked_output(text, max_output_chars(3)).await,
        "日本語…[truncated: 5 more chars]"
    );
    assert_eq!(invoked_output(text, max_output_chars(8)).await, text);
}

#[tokio::test]
async fn a_streamed_output_stops_at_the_byte_cap_and_the_tool_makes_no_further_chunk() {
    let produced = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("t", json!({"n": 1})))
        .tool(counted_stream("t", &["abcd"; 10], &produced))
        .build()
        .unwrap();

    let request = AgentRequest::user("go").with_handler(max_output_bytes(10));
    let (chunks, records) = run_with_chunks(&agent, request).await;

    let marker = "…[truncated: the output is longer than 10 bytes]";
    assert_eq!(chunks, ["abcd", "abcd", "ab", marker]);
    assert_eq!(records[0].content, format!("abcdabcdab{marker}"));
    assert!(records[0].is_success());
    assert_eq!(produced.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_streamed_multibyte_output_is_cut_at_a_character_boundary() {
    for (cap, expected) in [
        (6, vec!["éé", "é"]),
        // The third character would need 2 bytes of the 1 left: the chunk goes whole.
        (5, vec!["éé"]),
    ] {
        let produced = Arc::new(AtomicUsize::new(0));
        let agent = Agent::builder(one_call("t", json!({"n": 1})))
            .tool(counted_stream("t", &["éé"; 5], &produced))
            .build()
            .unwrap();

        let request = AgentRequest::user("go").with_handler(max_output_bytes(cap));
        let (chunks, _) = run_with_chunks(&agent, request).await;

        let marker = format!("…[truncated: the output is longer than {cap} bytes]");
        let mut expected: Vec<String> = expected.into_iter().map(String::from).collect();
        expected.push(marker);
        assert_eq!(chunks, expected, "cap {cap}");
        assert_eq!(produced.load(Ordering::SeqCst), 2, "cap {cap}");
    }
}

#[tokio::test]
async fn a_streamed_output_stops_at_the_char_cap() {
    let produced = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("t", json!({"n": 1})))
        .tool(counted_stream("t", &["日本語"; 5], &produced))
        .build()
        .unwrap();

    let request = AgentRequest::user("go").with_handler(max_output_chars(4));
    let (chunks, _) = run_with_chunks(&agent, request).await;

    assert_eq!(
        chunks,
        [
            "日本語",
            "日",
            "…[truncated: the output is longer than 4 chars]"
        ]
    );
    assert_eq!(produced.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_stream_that_ends_exactly_at_the_cap_gets_no_marker() {
    let produced = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("t", json!({"n": 1})))
        .tool(counted_stream("t", &["abcde", "fghij"], &produced))
        .build()
        .unwrap();

    let request = AgentRequest::user("go").with_handler(max_output_bytes(10));
    let (chunks, _) = run_with_chunks(&agent, request).await;

    assert_eq!(chunks, ["abcde", "fghij"]);
    assert_eq!(produced.load(Ordering::SeqCst), 2);
}

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn an_endless_stream_is_dropped_before_the_marker_and_the_run_completes() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let tool = Tool::stream_fn(ToolInfo::new("t", "Streams forever."), move |_| {
        let guard = DropFlag(Arc::clone(&flag));
        futures::stream::repeat("xyz").map(move |chunk| {
            let _alive = &guard;
            Ok::<_, std::convert::Infallible>(chunk)
        })
    });
    let agent = Agent::builder(one_call("t", json!({})))
        .tool(tool)
        .build()
        .unwrap();

    let request = AgentRequest::user("go").with_handler(max_output_chars(7));
    let read = async {
        let mut run = agent.run(request);
        let mut chunks = Vec::new();
        while let Some(event) = run.next().await {
            match event.unwrap() {
                AgentEvent::ToolOutputChunk { chunk, .. } => {
                    // The tool is cancelled by the time the caller sees the cut.
                    let cut = chunks.len() >= 2;
                    assert_eq!(dropped.load(Ordering::SeqCst), cut, "at chunk {chunk:?}");
                    chunks.push(chunk);
                }
                AgentEvent::Completed(result) => return (chunks, result.tool_records),
                _ => {}
            }
        }
        panic!("the run ended without completing");
    };
    let (chunks, records) = tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .expect("the cap must end an endless stream");

    assert_eq!(
        chunks,
        [
            "xyz",
            "xyz",
            "x",
            "…[truncated: the output is longer than 7 chars]"
        ]
    );
    assert_eq!(records[0].content, chunks.concat());
}
