//! `ToolRetry`: which calls are retried, how often, and when.

use std::sync::Arc;
use std::time::Duration;

use futures::stream;
use serde_json::json;
use tokio::time::{Instant, sleep};
use tower::retry::backoff::ExponentialBackoffMaker;
use tower::retry::budget::TpsBudget;
use tower::util::rng::HasherRng;
use tower_adk::handlers::retry::SharedRng;
use tower_adk::handlers::{RetryPolicy, ToolRetry, ToolTimeout, wrap_tool_invoke};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, BoxError, BoxHandler, Tool, ToolError, ToolErrorKind, ToolInfo, ToolOutput,
};

use crate::{Attempts, chunks_of, run_one, tool_result};

const MS: Duration = Duration::from_millis(1);

/// Backoffs of exactly 100ms, 200ms, 400ms, ... (no jitter).
fn exact_backoff() -> ExponentialBackoffMaker {
    ExponentialBackoffMaker::new(100 * MS, Duration::from_secs(10), 0.0, HasherRng::default())
        .unwrap()
}

/// A retry handler with at most `max_attempts` attempts per call and exact backoffs.
fn retry(max_attempts: usize) -> BoxHandler {
    ToolRetry::new(RetryPolicy::new(max_attempts).backoff(exact_backoff())).into()
}

/// An invoked tool that records each attempt and answers attempt `n` with `answer(n)`.
fn tool_with(
    name: &str,
    attempts: &Attempts,
    answer: impl Fn(usize) -> Result<ToolOutput, BoxError> + Clone + Send + Sync + 'static,
) -> Tool {
    let attempts = attempts.clone();
    Tool::from_fn(ToolInfo::new(name, "Records its attempts."), move |_| {
        let result = answer(attempts.record());
        async move { result }
    })
}

/// An idempotent tool whose every attempt fails with "connection reset".
fn always_failing(name: &str, attempts: &Attempts) -> Tool {
    tool_with(name, attempts, |_| Err("connection reset".into())).idempotent(true)
}

#[tokio::test(start_paused = true)]
async fn a_failing_idempotent_tool_is_retried_up_to_the_max_attempts() {
    let attempts = Attempts::default();

    let (model, _, result) = run_one(always_failing("lookup", &attempts), vec![retry(4)]).await;

    assert_eq!(attempts.count(), 4);
    // The model sees one result: the last failure.
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Failed);
    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(is_error);
    assert_eq!(content, "error (tool_error): connection reset");
}

#[tokio::test(start_paused = true)]
async fn a_retried_call_that_succeeds_stops_retrying_and_the_model_sees_the_success() {
    let attempts = Attempts::default();
    let tool = tool_with("lookup", &attempts, |n| match n {
        1 | 2 => Err("connection reset".into()),
        _ => Ok(ToolOutput::new(format!("found on attempt {n}"))),
    })
    .idempotent(true);

    let (_, _, result) = run_one(tool, vec![retry(5)]).await;

    assert_eq!(attempts.count(), 3);
    assert!(result.tool_records[0].is_success());
    assert_eq!(result.tool_records[0].content, "found on attempt 3");
}

#[tokio::test(start_paused = true)]
async fn a_shared_budget_stops_retries_across_calls() {
    let attempts = Attempts::default();
    // No deposits count (0%): only the reserve of 2 retries in the 1s window.
    let budget = Arc::new(TpsBudget::new(Duration::from_secs(1), 2, 0.0));
    let policy = RetryPolicy::new(10).backoff(exact_backoff()).budget(budget);
    // Two turns, one call each, to the same always-failing tool.
    let model = ScriptedModel::new([
        Turn::call("c1", "lookup", json!({})),
        Turn::call("c2", "lookup", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(always_failing("lookup", &attempts))
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("go").with_handler(ToolRetry::new(policy)))
        .await
        .unwrap();

    // The first call spends the budget: 1 attempt + 2 retries (100ms + 200ms, inside the
    // window). The second call gets no retry, though its own limit is 10 attempts.
    assert_eq!(attempts.count(), 4);
    assert_eq!(result.tool_records.len(), 2);
    assert!(result.tool_records.iter().all(|r| !r.is_success()));
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_is_not_idempotent_is_never_retried() {
    let attempts = Attempts::default();
    let tool = tool_with("charge", &attempts, |_| Err("connection reset".into()));
    assert!(!tool.is_idempotent());

    let (_, _, result) = run_one(tool, vec![retry(5)]).await;

    assert_eq!(attempts.count(), 1);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Failed);
}

#[tokio::test(start_paused = true)]
async fn invalid_arguments_from_the_tool_are_never_retried() {
    let attempts = Attempts::default();
    let tool = tool_with("lookup", &attempts, |_| {
        Err(ToolError::invalid_arguments("`id` must be positive").into())
    })
    .idempotent(true);

    let (_, _, result) = run_one(tool, vec![retry(5)]).await;

    assert_eq!(attempts.count(), 1);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
}

#[tokio::test(start_paused = true)]
async fn a_denial_inside_the_retry_is_never_retried() {
    let attempts = Attempts::default();
    let tool = tool_with("lookup", &attempts, |_| Ok(ToolOutput::new("found"))).idempotent(true);
    // A policy gate registered after the retry runs on every attempt: it denies once.
    let gate_attempts = attempts.clone();
    let gate = wrap_tool_invoke(move |_, _| {
        gate_attempts.record();
        async { Err(ToolError::denied("not on weekends").into()) }
    });

    let (_, _, result) = run_one(tool, vec![retry(5), gate.into()]).await;

    assert_eq!(attempts.count(), 1);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Denied);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_tool_is_never_retried() {
    let attempts = Attempts::default();
    let tool = tool_with("lookup", &attempts, |_| panic!("bad state")).idempotent(true);

    let (_, _, result) = run_one(tool, vec![retry(5)]).await;

    assert_eq!(attempts.count(), 1);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Panicked);
}

#[tokio::test(start_paused = true)]
async fn backoff_delays_separate_the_attempts() {
    let attempts = Attempts::default();
    let start = Instant::now();

    run_one(always_failing("lookup", &attempts), vec![retry(4)]).await;

    // Attempt 1 at once, then 100ms, 200ms and 400ms later.
    assert_eq!(
        attempts.offsets(start),
        [Duration::ZERO, 100 * MS, 300 * MS, 700 * MS]
    );
}

#[tokio::test(start_paused = true)]
async fn jittered_backoff_delays_grow_exponentially_within_their_jitter() {
    let attempts = Attempts::default();
    // Base delays 100ms, 200ms, 400ms, each plus up to 100% random jitter.
    let backoff =
        ExponentialBackoffMaker::new(100 * MS, Duration::from_secs(10), 1.0, SharedRng::new())
            .unwrap();
    let handler = ToolRetry::new(RetryPolicy::new(4).backoff(backoff));
    let start = Instant::now();

    run_one(always_failing("lookup", &attempts), vec![handler.into()]).await;

    let times = attempts.offsets(start);
    assert_eq!(times.len(), 4);
    let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
    for (gap, base) in gaps.iter().zip([100 * MS, 200 * MS, 400 * MS]) {
        assert!(
            base <= *gap && *gap <= 2 * base,
            "gap {gap:?} outside [{base:?}, {:?}]",
            2 * base
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_attempt_is_retried_when_the_timeout_is_inside_the_retry() {
    let attempts = Attempts::default();
    let recorder = attempts.clone();
    // The first attempt hangs; the second answers at once.
    let tool = Tool::from_fn(ToolInfo::new("lookup", "Hangs once."), move |_| {
        let attempt = recorder.record();
        async move {
            if attempt == 1 {
                sleep(Duration::from_secs(3600)).await;
            }
            Ok::<_, BoxError>(ToolOutput::new("found"))
        }
    })
    .idempotent(true);
    let timeout = ToolTimeout::new(Duration::from_secs(1));
    let start = Instant::now();

    let (_, _, result) = run_one(tool, vec![retry(3), timeout.into()]).await;

    assert!(result.tool_records[0].is_success(), "{result:?}");
    // Attempt 2 started after the 1s timeout and the 100ms backoff.
    assert_eq!(attempts.offsets(start), [Duration::ZERO, 1100 * MS]);
}

/// A streaming idempotent tool whose attempt `n` streams what `chunks(n)` says.
fn streaming_with(
    name: &str,
    attempts: &Attempts,
    chunks: impl Fn(usize) -> Vec<Result<&'static str, &'static str>> + Clone + Send + Sync + 'static,
) -> Tool {
    let attempts = attempts.clone();
    Tool::stream_fn(ToolInfo::new(name, "Streams per attempt."), move |_| {
        stream::iter(chunks(attempts.record()))
    })
    .idempotent(true)
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_fails_before_its_first_chunk_is_retried() {
    let attempts = Attempts::default();
    let tool = streaming_with("feed", &attempts, |n| match n {
        1 => vec![Err("connection reset")],
        _ => vec![Ok("a"), Ok("b")],
    });

    let (_, events, result) = run_one(tool, vec![retry(3)]).await;

    assert_eq!(attempts.count(), 2);
    assert_eq!(chunks_of(&events), ["a", "b"]);
    assert_eq!(result.tool_records[0].content, "ab");
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_fails_after_a_chunk_is_not_retried() {
    let attempts = Attempts::default();
    let tool = streaming_with("feed", &attempts, |_| {
        vec![Ok("a"), Err("connection reset")]
    });

    let (_, events, result) = run_one(tool, vec![retry(3)]).await;

    assert_eq!(attempts.count(), 1);
    assert_eq!(chunks_of(&events), ["a"]);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Failed);
}
