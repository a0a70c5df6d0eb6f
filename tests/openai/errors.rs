//! Every failure is a typed `OpenAiError`, none panics or hangs, and `is_retryable`
//! tells which a retry may cure: error statuses, rate limits, connections refused or
//! dropped mid-stream, streams cut short, malformed chunks, stalls and slow servers.

use std::time::{Duration, Instant};

use serde_json::json;
use tower::ServiceExt;
use tower::retry::{Policy, Retry};
use tower_adk::providers::openai::{OpenAiError, OpenAiModel};
use tower_adk::{Agent, AgentRequest, Message, ModelRequest, ModelResponse};

use crate::servers::Llmock;
use crate::{openai_error, run, streamed_text, weather};

fn hello() -> ModelRequest {
    ModelRequest::new(vec![Message::user("Say hello")].into())
}

/// The reply of one call, read to its end.
async fn call(model: OpenAiModel) -> Result<Message, OpenAiError> {
    let response = model.oneshot(hello()).await?;
    let message = response
        .into_message()
        .await
        .map_err(|e| *e.downcast::<OpenAiError>().unwrap())?;
    Ok(message)
}

/// A run of an agent with the `weather` tool, streamed, whose first reply ("one two three
/// four five six") is broken by `fault`: its streamed text and its error.
async fn broken_stream(fault: serde_json::Value) -> (String, OpenAiError) {
    let server = Llmock::start();
    server.script(json!([
        {"type": "reply", "text": "one two three four five six"},
        fault
    ]));
    // Long enough for a busy machine, short enough for the stall test.
    let model = server.builder().read_timeout(Some(Duration::from_secs(2)));
    let agent = Agent::builder(model.build().unwrap())
        .tool(weather())
        .build()
        .unwrap();
    let (events, result) = run(&agent, AgentRequest::user("Count to six")).await;
    let error = result.expect_err("the run fails with the model's error");
    let text = streamed_text(&events);
    // `AgentError::Model` holds the `OpenAiError` itself.
    let tower_adk::AgentError::Model(inner) = error else {
        panic!("not a model error: {error:?}")
    };
    (text, *inner.downcast::<OpenAiError>().unwrap())
}

#[tokio::test]
async fn an_error_status_carries_the_servers_message_and_code() {
    let server = Llmock::start();
    server.script(json!([{"type": "fail", "status": 404, "message": "The model `gpt-4o-mini` does not exist", "code": "model_not_found"}]));
    let agent = Agent::builder(server.model(true)).build().unwrap();

    let (_, result) = run(&agent, AgentRequest::user("hi")).await;
    let error = result.unwrap_err();

    match openai_error(&error) {
        OpenAiError::Status {
            status,
            message,
            code,
            ..
        } => {
            assert_eq!(status.as_u16(), 404);
            assert_eq!(message, "The model `gpt-4o-mini` does not exist");
            assert_eq!(code.as_deref(), Some("model_not_found"));
        }
        other => panic!("{other:?}"),
    }
    assert!(!openai_error(&error).is_retryable());
    assert!(error.to_string().contains("does not exist"), "{error}");
}

#[tokio::test]
async fn a_rate_limit_carries_the_wait_the_server_asked_for() {
    let server = Llmock::start();
    server.script(
        json!([{"type": "fail", "status": 429, "retry_after": 1.5, "message": "Slow down"}]),
    );

    let error = call(server.model(true)).await.unwrap_err();

    assert!(error.is_rate_limited() && error.is_retryable(), "{error:?}");
    assert_eq!(error.retry_after(), Some(Duration::from_millis(1500)));
    assert_eq!(error.status().map(|s| s.as_u16()), Some(429));
    assert!(error.to_string().contains("Slow down"));
}

#[tokio::test]
async fn a_server_error_is_retryable_and_a_bad_request_is_not() {
    let server = Llmock::start();
    server.script(json!([
        {"type": "fail", "status": 503},
        {"type": "fail", "status": 400, "message": "messages: field required"}
    ]));

    let unavailable = call(server.model(false)).await.unwrap_err();
    let bad_request = call(server.model(false)).await.unwrap_err();

    assert_eq!(unavailable.status().map(|s| s.as_u16()), Some(503));
    assert!(unavailable.is_retryable());
    assert_eq!(bad_request.status().map(|s| s.as_u16()), Some(400));
    assert!(!bad_request.is_retryable());
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_fails_the_run_after_the_text_so_far() {
    let (text, error) =
        broken_stream(json!({"type": "stream_fault", "kind": "disconnect", "after_chunks": 3}))
            .await;

    assert_eq!(text, "one two ");
    assert!(
        matches!(error, OpenAiError::ConnectionDropped(_)),
        "{error:?}"
    );
    assert!(error.is_retryable());
}

#[tokio::test]
async fn a_stream_that_ends_without_done_is_incomplete() {
    let (text, error) =
        broken_stream(json!({"type": "stream_fault", "kind": "truncate", "after_chunks": 3})).await;

    assert_eq!(text, "one two ");
    assert!(matches!(error, OpenAiError::StreamIncomplete), "{error:?}");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn a_chunk_of_malformed_json_fails_the_stream() {
    let (text, error) =
        broken_stream(json!({"type": "stream_fault", "kind": "malformed", "after_chunks": 2}))
            .await;

    assert_eq!(text, "one ");
    match &error {
        OpenAiError::MalformedChunk { data, .. } => assert!(data.starts_with('{'), "{data}"),
        other => panic!("{other:?}"),
    }
    assert!(!error.is_retryable());
}

#[tokio::test]
async fn a_stalled_stream_fails_at_the_read_timeout_instead_of_hanging() {
    let started = Instant::now();
    let (text, error) = broken_stream(
        json!({"type": "stream_fault", "kind": "stall", "after_chunks": 2, "stall_seconds": 60}),
    )
    .await;

    assert_eq!(text, "one ");
    assert!(error.is_timeout() && error.is_retryable(), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_server_that_does_not_answer_fails_at_the_read_timeout() {
    let server = Llmock::start();
    server.script(json!([{"type": "delay", "seconds": 60}]));
    let model = server
        .builder()
        .stream(false)
        .read_timeout(Some(Duration::from_millis(500)))
        .build()
        .unwrap();

    let started = Instant::now();
    let error = call(model).await.unwrap_err();

    assert!(error.is_timeout(), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_retryable_request_error() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let model = OpenAiModel::builder()
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .model("m")
        .build()
        .unwrap();

    let error = call(model).await.unwrap_err();

    assert!(matches!(error, OpenAiError::Request(_)), "{error:?}");
    assert!(error.is_retryable());
}

/// Retries retryable errors, after the server's wait or 50ms, at most `left` times.
#[derive(Clone)]
struct RetryRetryable {
    left: usize,
}

impl Policy<ModelRequest, ModelResponse, OpenAiError> for RetryRetryable {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        _: &mut ModelRequest,
        result: &mut Result<ModelResponse, OpenAiError>,
    ) -> Option<Self::Future> {
        let error = result.as_ref().err()?;
        if self.left == 0 || !error.is_retryable() {
            return None;
        }
        self.left -= 1;
        Some(tokio::time::sleep(
            error.retry_after().unwrap_or(Duration::from_millis(50)),
        ))
    }

    fn clone_request(&mut self, request: &ModelRequest) -> Option<ModelRequest> {
        Some(request.clone())
    }
}

#[tokio::test]
async fn a_retry_policy_waits_as_long_as_the_rate_limit_asks_then_succeeds() {
    let server = Llmock::start();
    server.script(json!([
        {"type": "fail", "status": 429, "retry_after": 1},
        {"type": "fail", "status": 502},
        {"type": "reply", "text": "Hello!"}
    ]));
    let model = Retry::new(RetryRetryable { left: 3 }, server.model(true));

    let started = Instant::now();
    let reply = model
        .oneshot(hello())
        .await
        .unwrap()
        .into_message()
        .await
        .unwrap();

    assert_eq!(reply.content(), "Hello!");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 3);
}
