//! A streamable tool's chunks pass through the stream wrappers lazily and reach the caller.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tokio::sync::mpsc;
use tower::BoxError;
use tower_adk::handlers::{wrap_tool_invoke, wrap_tool_stream};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, AgentResult, BoxHandler, Tool, ToolErrorKind, ToolInfo,
    ToolOutput, ToolStream,
};

use crate::{Log, tool_result};

/// A stream wrapper that logs each chunk it passes as `{name} {chunk}` and transforms it.
fn logging_map(
    name: &'static str,
    log: &Log,
    f: impl Fn(String) -> String + Clone + Send + Sync + 'static,
) -> BoxHandler {
    let log = log.clone();
    wrap_tool_stream(move |req, next| {
        let log = log.clone();
        let f = f.clone();
        async move {
            let stream = next.run(req).await?;
            Ok(stream.map_chunks(move |chunk| {
                log.push(format!("{name} {chunk}"));
                f(chunk)
            }))
        }
    })
    .into()
}

/// Collects a run's events, logging each output chunk as `caller {chunk}` as it arrives.
async fn read_run(agent: &Agent, request: AgentRequest, log: &Log) -> Vec<AgentEvent> {
    let mut run = agent.run(request);
    let mut events = Vec::new();
    while let Some(event) = run.next().await {
        let event = event.unwrap();
        if let AgentEvent::ToolOutputChunk { chunk, .. } = &event {
            log.push(format!("caller {chunk}"));
        }
        events.push(event);
    }
    events
}

fn chunks_of(events: &[AgentEvent]) -> Vec<(&str, &str)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolOutputChunk { call_id, chunk, .. } => {
                Some((&**call_id, chunk.as_str()))
            }
            _ => None,
        })
        .collect()
}

fn result_of(events: &[AgentEvent]) -> &AgentResult {
    match events.last() {
        Some(AgentEvent::Completed(result)) => result,
        _ => panic!("the run must complete: {events:?}"),
    }
}

#[tokio::test]
async fn tool_chunks_pass_every_stream_wrapper_lazily_and_reach_the_caller_one_by_one() {
    let log = Log::default();
    let tool_log = log.clone();
    let tool = Tool::stream_fn(ToolInfo::new("letters", "Streams letters."), move |_| {
        let log = tool_log.clone();
        futures::stream::iter(["a", "b", "c"]).map(move |chunk| {
            log.push(format!("tool {chunk}"));
            Ok::<_, Infallible>(chunk)
        })
    });
    let model = ScriptedModel::new([Turn::call("c1", "letters", json!({})), Turn::text("ok")]);
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();
    let request = AgentRequest::user("go")
        .with_handler(logging_map("outer", &log, |c| format!("[{c}]")))
        .with_handler(logging_map("inner", &log, |c| c.to_uppercase()));

    let events = read_run(&agent, request, &log).await;

    // Each chunk goes tool -> inner -> outer -> caller before the next one is produced.
    assert_eq!(
        log.entries(),
        [
            "tool a",
            "inner a",
            "outer A",
            "caller [A]", //
            "tool b",
            "inner b",
            "outer B",
            "caller [B]", //
            "tool c",
            "inner c",
            "outer C",
            "caller [C]",
        ]
    );
    assert_eq!(
        chunks_of(&events),
        [("c1", "[A]"), ("c1", "[B]"), ("c1", "[C]")]
    );
    // The result is the concatenation of the transformed chunks, for the record and for
    // the model.
    let result = result_of(&events);
    assert_eq!(result.tool_records[0].content, "[A][B][C]");
    assert!(result.tool_records[0].is_success());
    assert_eq!(
        tool_result(&model.requests()[1], "c1"),
        ("[A][B][C]".to_owned(), false)
    );
    // The result event comes after the last chunk.
    let last_chunk = events
        .iter()
        .rposition(|e| matches!(e, AgentEvent::ToolOutputChunk { .. }))
        .unwrap();
    let result_event = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolResult(_)))
        .unwrap();
    assert!(last_chunk < result_event);
}

#[tokio::test]
async fn the_testing_chunk_tool_streams_its_chunks_as_events() {
    let model = ScriptedModel::new([Turn::call("c1", "progress", json!({})), Turn::text("ok")]);
    let agent = Agent::builder(model.clone())
        .tool(chunk_tool(
            "progress",
            &["10%", " 50%", " 100%"],
            Duration::ZERO,
        ))
        .build()
        .unwrap();

    let events = read_run(&agent, AgentRequest::user("go"), &Log::default()).await;

    assert_eq!(
        chunks_of(&events),
        [("c1", "10%"), ("c1", " 50%"), ("c1", " 100%")]
    );
    assert_eq!(result_of(&events).tool_records[0].content, "10% 50% 100%");
    assert_eq!(tool_result(&model.requests()[1], "c1").0, "10% 50% 100%");
}

/// Awaiting the result stops the events (nobody reads them), not the run: everything
/// still reaches the model, the history and the result.
#[tokio::test]
async fn reading_some_events_then_awaiting_the_result_loses_nothing() {
    let model = ScriptedModel::new([
        Turn::call("c1", "progress", json!({})).with_call("c2", "progress", json!({})),
        Turn::text("ok"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(chunk_tool("progress", &["a", "b", "c"], Duration::ZERO))
        .build()
        .unwrap();

    let mut run = agent.run(AgentRequest::user("go"));
    let first = run.next().await.unwrap().unwrap();
    assert!(matches!(first, AgentEvent::Message(_)), "{first:?}");
    let result = run.result().await.unwrap();

    assert_eq!(result.final_message.content(), "ok");
    let contents: Vec<&str> = result
        .tool_records
        .iter()
        .map(|r| r.content.as_str())
        .collect();
    assert_eq!(contents, ["abc", "abc"]);
    assert_eq!(tool_result(&model.requests()[1], "c2").0, "abc");
    assert_eq!(
        result.messages.len(),
        5,
        "user, assistant, 2 tool results, answer"
    );
}

#[tokio::test]
async fn a_slow_reader_holds_the_tool_back_one_chunk_at_a_time() {
    // The tool could produce 1000 chunks at once; it produces each only when asked.
    let produced = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&produced);
    let tool = Tool::stream_fn(ToolInfo::new("firehose", "Streams a lot."), move |_| {
        let counter = Arc::clone(&counter);
        futures::stream::iter(0..1000).map(move |i| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok::<_, Infallible>(i.to_string())
        })
    });
    let model = ScriptedModel::new([Turn::call("c1", "firehose", json!({})), Turn::text("ok")]);
    let agent = Agent::builder(model).tool(tool).build().unwrap();
    let request = AgentRequest::user("go").with_handler(wrap_tool_stream(|req, next| async move {
        Ok(next.run(req).await?.map_chunks(|c| format!("<{c}>")))
    }));

    let mut run = agent.run(request);
    let mut seen = 0;
    while let Some(event) = run.next().await {
        if let AgentEvent::ToolOutputChunk { chunk, .. } = event.unwrap() {
            assert_eq!(chunk, format!("<{seen}>"));
            seen += 1;
            assert_eq!(
                produced.load(Ordering::SeqCst),
                seen,
                "the tool ran ahead of the reader"
            );
            if seen == 3 {
                break;
            }
        }
    }
    drop(run);
    assert_eq!(produced.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn the_first_chunk_reaches_the_caller_before_the_tool_has_produced_its_last() {
    // The tool's chunks come from a channel that the test feeds only after it has seen
    // the previous chunk as an event. A framework that buffered the stream would wait for
    // the end that never comes; the timeout turns that deadlock into a failure.
    let (tx, rx) = mpsc::unbounded_channel::<&'static str>();
    let rx = Arc::new(Mutex::new(Some(rx)));
    let tool = Tool::stream_fn(
        ToolInfo::new("feed", "Streams what it is fed."),
        move |_| {
            let rx = rx.lock().unwrap().take();
            futures::stream::unfold(rx, |rx| async move {
                let mut rx = rx?;
                let chunk = rx.recv().await?;
                Some((Ok::<_, Infallible>(chunk), Some(rx)))
            })
        },
    );
    let model = ScriptedModel::new([Turn::call("c1", "feed", json!({})), Turn::text("ok")]);
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();
    let request = AgentRequest::user("go").with_handler(wrap_tool_stream(|req, next| async move {
        Ok(next.run(req).await?.map_chunks(|c| c.to_uppercase()))
    }));

    tx.send("first").unwrap();
    let mut tx = Some(tx);
    let mut chunks = Vec::new();
    let drive = async {
        let mut run = agent.run(request);
        while let Some(event) = run.next().await {
            match event.unwrap() {
                AgentEvent::ToolOutputChunk { chunk, .. } => {
                    chunks.push(chunk);
                    match chunks.len() {
                        1 => tx.as_ref().unwrap().send("second").unwrap(),
                        2 => {
                            tx.as_ref().unwrap().send("last").unwrap();
                            tx = None; // ends the tool's stream
                        }
                        _ => {}
                    }
                }
                AgentEvent::Completed(result) => return result,
                _ => {}
            }
        }
        panic!("the run ended without a result");
    };
    let result = tokio::time::timeout(Duration::from_secs(30), drive)
        .await
        .expect("deadlock: the first chunk did not reach the caller before the tool's end");

    assert_eq!(chunks, ["FIRST", "SECOND", "LAST"]);
    assert_eq!(result.tool_records[0].content, "FIRSTSECONDLAST");
    assert_eq!(
        tool_result(&model.requests()[1], "c1"),
        ("FIRSTSECONDLAST".to_owned(), false)
    );
}

#[tokio::test]
async fn a_stream_that_fails_midway_gives_the_model_an_error_result_and_the_run_goes_on() {
    let tool = Tool::stream_fn(ToolInfo::new("download", "Streams a file."), |_| {
        futures::stream::iter([
            Ok("part one, "),
            Err(BoxError::from("connection dropped")),
            Ok("never sent"),
        ])
    });
    let model = ScriptedModel::new([
        Turn::call("c1", "download", json!({})),
        Turn::text("The download failed."),
    ]);
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();

    let events = read_run(&agent, AgentRequest::user("go"), &Log::default()).await;

    assert_eq!(chunks_of(&events), [("c1", "part one, ")]);
    let result = result_of(&events);
    assert_eq!(result.final_message.content(), "The download failed.");
    let record = &result.tool_records[0];
    assert_eq!(record.error.as_ref().unwrap().kind(), ToolErrorKind::Failed);
    assert!(record.content.contains("connection dropped"), "{record:?}");
    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(is_error);
    assert!(content.contains("connection dropped"), "{content}");
}

#[tokio::test]
async fn a_stream_that_panics_midway_gives_the_model_a_panicked_result() {
    let tool = Tool::stream_fn(ToolInfo::new("crash", "Streams, then panics."), |_| {
        futures::stream::iter(0..3).map(|i| {
            if i == 1 {
                panic!("chunk {i} exploded");
            }
            Ok::<_, Infallible>(i.to_string())
        })
    });
    let model = ScriptedModel::new([Turn::call("c1", "crash", json!({})), Turn::text("ok")]);
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();

    let events = read_run(&agent, AgentRequest::user("go"), &Log::default()).await;

    assert_eq!(chunks_of(&events), [("c1", "0")]);
    let record = &result_of(&events).tool_records[0];
    assert_eq!(
        record.error.as_ref().unwrap().kind(),
        ToolErrorKind::Panicked
    );
    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(
        is_error && content.contains("chunk 1 exploded"),
        "{content}"
    );
}

#[tokio::test]
async fn a_tool_that_can_both_invoke_and_stream_is_streamed() {
    let invoked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&invoked);
    let tool = Tool::from_fn(ToolInfo::new("report", "Writes a report."), move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, Infallible>(ToolOutput::new("whole report")) }
    })
    .with_stream(tower::service_fn(|_| async {
        Ok::<_, Infallible>(ToolStream::from_chunks(["section 1; ", "section 2"]))
    }));
    assert!(tool.is_invokable() && tool.is_streamable());
    let model = ScriptedModel::new([Turn::call("c1", "report", json!({})), Turn::text("ok")]);
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();
    let log = Log::default();
    let (invoke_log, stream_log) = (log.clone(), log.clone());
    let request = AgentRequest::user("go")
        .with_handler(wrap_tool_invoke(move |req, next| {
            invoke_log.push("invoke wrapper");
            next.run(req)
        }))
        .with_handler(wrap_tool_stream(move |req, next| {
            stream_log.push("stream wrapper");
            next.run(req)
        }));

    let events = read_run(&agent, request, &log).await;

    assert_eq!(invoked.load(Ordering::SeqCst), 0);
    assert_eq!(
        log.entries(),
        ["stream wrapper", "caller section 1; ", "caller section 2"]
    );
    assert_eq!(
        chunks_of(&events),
        [("c1", "section 1; "), ("c1", "section 2")]
    );
    assert_eq!(
        result_of(&events).tool_records[0].content,
        "section 1; section 2"
    );
    assert_eq!(
        tool_result(&model.requests()[1], "c1").0,
        "section 1; section 2"
    );
}
