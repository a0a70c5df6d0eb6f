//! `ToolTimeout`: deadlines on invoked calls, idle timeouts and total deadlines on streams,
//! per-tool values; a timed-out tool is cancelled.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::{StreamExt, stream};
use tokio::time::{Instant, sleep};
use tower::service_fn;
use tower_adk::handlers::{Timeouts, ToolTimeout};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, AgentResult, ToolCall, ToolErrorKind, ToolInfo, ToolOutput, ToolStream,
};
use tower_adk::{BoxHandler, Tool};

use crate::{Dropped, chunks_of, run_one, tool_result};

const SECOND: Duration = Duration::from_secs(1);

/// A streaming tool that sends `chunks`, each `gap` after the previous one (after the
/// consumer asked for it), then stalls forever if `stall` is set. The stream holds a
/// guard of `dropped`.
fn feed(name: &str, chunks: &[&str], gap: Duration, stall: bool, dropped: &Dropped) -> Tool {
    let chunks: Vec<String> = chunks.iter().map(|c| (*c).to_owned()).collect();
    let dropped = dropped.clone();
    Tool::stream_fn(ToolInfo::new(name, "Streams chunks."), move |_| {
        let guard = dropped.guard();
        let sent = stream::iter(chunks.clone()).then(move |chunk| async move {
            sleep(gap).await;
            Ok::<_, Infallible>(chunk)
        });
        let tail = if stall {
            stream::pending().left_stream()
        } else {
            stream::empty().right_stream()
        };
        sent.chain(tail).map(move |chunk| {
            let _holds = &guard;
            chunk
        })
    })
}

/// A streaming tool that sends `chunk` every `gap`, forever. The stream holds a guard of
/// `dropped`.
fn endless(name: &str, chunk: &'static str, gap: Duration, dropped: &Dropped) -> Tool {
    let dropped = dropped.clone();
    Tool::stream_fn(ToolInfo::new(name, "Streams forever."), move |_| {
        let guard = dropped.guard();
        stream::repeat(chunk)
            .then(move |chunk| async move {
                sleep(gap).await;
                Ok::<_, Infallible>(chunk)
            })
            .map(move |chunk| {
                let _holds = &guard;
                chunk
            })
    })
}

/// An invoked tool that sleeps for `duration`, holding a guard of `dropped`, and sets
/// `finished` if it gets to the end.
fn sleeper(name: &str, duration: Duration, dropped: &Dropped, finished: &Arc<AtomicBool>) -> Tool {
    let dropped = dropped.clone();
    let finished = Arc::clone(finished);
    Tool::from_fn(ToolInfo::new(name, "Sleeps."), move |_| {
        let guard = dropped.guard();
        let finished = Arc::clone(&finished);
        async move {
            let _holds = guard;
            sleep(duration).await;
            finished.store(true, Ordering::SeqCst);
            Ok::<_, Infallible>(ToolOutput::new("woke up"))
        }
    })
}

fn handler(timeouts: ToolTimeout) -> Vec<BoxHandler> {
    vec![timeouts.into()]
}

fn timeout_error(result: &AgentResult, index: usize) -> String {
    let record = &result.tool_records[index];
    let error = record
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("call {index} should have failed: {record:?}"));
    assert_eq!(error.kind(), ToolErrorKind::Timeout, "{record:?}");
    error.message().to_owned()
}

#[tokio::test(start_paused = true)]
async fn an_idle_timeout_fires_on_a_stalled_stream_and_cancels_the_tool() {
    let dropped = Dropped::default();
    let tool = feed("feed", &["a", "b"], SECOND, true, &dropped);
    let timeouts = ToolTimeout::new(Duration::from_secs(60)).idle(5 * SECOND);
    let start = Instant::now();

    let (model, events, result) = run_one(tool, handler(timeouts)).await;

    // The chunks sent before the stall reached the caller; then 5s of silence.
    assert_eq!(chunks_of(&events), ["a", "b"]);
    assert_eq!(
        timeout_error(&result, 0),
        "idle timeout: no output for 5s; the call was cancelled"
    );
    // The stream was dropped when the idle timeout fired: 2s of chunks, then 5s idle.
    assert_eq!(dropped.at(), Some(start + 7 * SECOND));
    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(is_error);
    assert_eq!(
        content,
        "error (timeout): idle timeout: no output for 5s; the call was cancelled"
    );
    assert_eq!(result.final_message.content(), "done");
}

#[tokio::test(start_paused = true)]
async fn a_total_deadline_fires_on_a_slow_stream_that_never_stalls_past_the_idle_limit() {
    let dropped = Dropped::default();
    let tool = endless("drip", "x", 2 * SECOND, &dropped);
    let timeouts = ToolTimeout::new(7 * SECOND).idle(5 * SECOND);
    let start = Instant::now();

    let (_, events, result) = run_one(tool, handler(timeouts)).await;

    // Chunks at 2s, 4s and 6s: never idle for 5s, but the whole call is cut at 7s.
    assert_eq!(chunks_of(&events), ["x", "x", "x"]);
    assert_eq!(
        timeout_error(&result, 0),
        "total deadline of 7s exceeded; the call was cancelled"
    );
    assert_eq!(dropped.at(), Some(start + 7 * SECOND));
}

#[tokio::test(start_paused = true)]
async fn a_stream_within_its_limits_passes_unchanged() {
    let dropped = Dropped::default();
    let tool = feed("feed", &["a", "b", "c"], 4 * SECOND, false, &dropped);
    let timeouts = ToolTimeout::new(20 * SECOND).idle(5 * SECOND);

    let (_, events, result) = run_one(tool, handler(timeouts)).await;

    assert_eq!(chunks_of(&events), ["a", "b", "c"]);
    assert!(result.tool_records[0].is_success(), "{result:?}");
    assert_eq!(result.tool_records[0].content, "abc");
}

#[tokio::test(start_paused = true)]
async fn an_idle_timeout_also_bounds_the_opening_of_a_stream() {
    let dropped = Dropped::default();
    let guard_source = dropped.clone();
    // The stream is only returned after 60s.
    let tool = Tool::streaming(
        ToolInfo::new("late", "Opens its stream late."),
        service_fn(move |_| {
            let guard = guard_source.guard();
            async move {
                let _holds = guard;
                sleep(Duration::from_secs(60)).await;
                Ok::<_, Infallible>(ToolStream::from_chunks(["never"]))
            }
        }),
    );
    let timeouts = ToolTimeout::new(30 * SECOND).idle(3 * SECOND);
    let start = Instant::now();

    let (_, events, result) = run_one(tool, handler(timeouts)).await;

    assert!(chunks_of(&events).is_empty());
    assert_eq!(
        timeout_error(&result, 0),
        "idle timeout: no output for 3s; the call was cancelled"
    );
    assert_eq!(dropped.at(), Some(start + 3 * SECOND));
}

#[tokio::test(start_paused = true)]
async fn an_invoked_tool_over_its_deadline_times_out_and_is_cancelled() {
    let dropped = Dropped::default();
    let finished = Arc::new(AtomicBool::new(false));
    let tool = sleeper("nap", Duration::from_secs(60), &dropped, &finished);
    // An idle timeout does not apply to invoked calls: only the deadline does.
    let timeouts = ToolTimeout::new(10 * SECOND).idle(SECOND);
    let start = Instant::now();

    let (model, _, result) = run_one(tool, handler(timeouts)).await;

    assert_eq!(
        timeout_error(&result, 0),
        "total deadline of 10s exceeded; the call was cancelled"
    );
    assert_eq!(dropped.at(), Some(start + 10 * SECOND));
    assert!(!finished.load(Ordering::SeqCst), "the tool ran to its end");
    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(is_error);
    assert!(content.starts_with("error (timeout): "), "{content}");
}

#[tokio::test(start_paused = true)]
async fn per_tool_timeouts_override_the_default() {
    let dropped = Dropped::default();
    let finished = Arc::new(AtomicBool::new(false));
    // Four tools that each sleep 7s, called in the same turn.
    let tools = ["plain", "patient", "unbounded", "strict"]
        .map(|name| sleeper(name, 7 * SECOND, &dropped, &finished));
    let timeouts = ToolTimeout::new(5 * SECOND)
        .tool("patient", Timeouts::new().with_total(10 * SECOND))
        .tool("unbounded", Timeouts::new())
        .tool("strict", Timeouts::new().with_total(SECOND));
    let calls = ["plain", "patient", "unbounded", "strict"]
        .map(|name| ToolCall::new(format!("c-{name}"), name, serde_json::json!({})));
    let model = ScriptedModel::new([Turn::calls(calls), Turn::text("done")]);
    let agent = Agent::builder(model).tools(tools).build().unwrap();

    let result = agent
        .run(AgentRequest::user("go").with_handler(timeouts))
        .await
        .unwrap();

    let records = &result.tool_records;
    assert_eq!(records[0].name, "plain");
    assert_eq!(
        timeout_error(&result, 0),
        "total deadline of 5s exceeded; the call was cancelled"
    );
    assert_eq!(records[1].name, "patient");
    assert!(records[1].is_success(), "{:?}", records[1]);
    assert_eq!(records[2].name, "unbounded");
    assert!(records[2].is_success(), "{:?}", records[2]);
    assert_eq!(records[3].name, "strict");
    assert_eq!(
        timeout_error(&result, 3),
        "total deadline of 1s exceeded; the call was cancelled"
    );
}

#[tokio::test(start_paused = true)]
async fn a_per_tool_idle_timeout_overrides_the_default_for_streams() {
    let dropped = Dropped::default();
    // A chunk every 4s: too slow for the default idle of 3s, fine for the tool's 5s.
    let slow = feed("slow", &["a", "b"], 4 * SECOND, false, &dropped);
    let timeouts = ToolTimeout::with_default(Timeouts::new().with_idle(3 * SECOND))
        .tool("slow", Timeouts::new().with_idle(5 * SECOND));

    let (_, events, result) = run_one(slow, handler(timeouts.clone())).await;
    assert_eq!(chunks_of(&events), ["a", "b"]);
    assert!(result.tool_records[0].is_success(), "{result:?}");

    let other = feed("other", &["a", "b"], 4 * SECOND, false, &dropped);
    let (_, events, result) = run_one(other, handler(timeouts)).await;
    assert!(chunks_of(&events).is_empty());
    assert_eq!(
        timeout_error(&result, 0),
        "idle timeout: no output for 3s; the call was cancelled"
    );
}

#[tokio::test(start_paused = true)]
async fn a_limit_too_long_for_the_clock_is_no_limit() {
    let dropped = Dropped::default();
    let finished = Arc::new(AtomicBool::new(false));
    let nap = sleeper("nap", 7 * SECOND, &dropped, &finished);
    let forever = Timeouts::new()
        .with_total(Duration::MAX)
        .with_idle(Duration::MAX);

    let (_, _, result) = run_one(nap, handler(ToolTimeout::with_default(forever))).await;
    assert!(result.tool_records[0].is_success(), "{result:?}");

    let feed = feed("feed", &["a", "b"], 4 * SECOND, false, &dropped);
    let (_, events, result) = run_one(feed, handler(ToolTimeout::with_default(forever))).await;
    assert_eq!(chunks_of(&events), ["a", "b"]);
    assert!(result.tool_records[0].is_success(), "{result:?}");
}
