//! Stock tower-http layers around the router, all at once and unchanged: trace, request
//! id, timeout, CORS and compression, with the router nested in an app under `/api`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};
use tower_adk::server::{BearerTokens, Server};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, BoxError, Tool, ToolInfo, ToolOutput};
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

use super::{Counter, SseReader, TestServer};

/// What the trace layer saw: requests, responses, and body chunks sent.
#[derive(Clone, Default)]
struct Traced {
    requests: Counter,
    responses: Counter,
    chunks: Counter,
}

/// Longer than any run here takes, but for the one that hangs (a hang guard, not a
/// timing assertion).
const TIMEOUT: Duration = Duration::from_secs(3);

const ORIGIN: &str = "http://app.example";

/// Agent `a` calls `wait`, which answers once the gate lets it; agent `hang` calls a
/// tool that never answers. The app nests the router under `/api` inside every layer.
async fn layered(gate: &Arc<tokio::sync::Semaphore>, traced: &Traced) -> TestServer {
    let gate = Arc::clone(gate);
    let wait = Tool::from_fn(ToolInfo::new("wait", "Waits"), move |_| {
        let gate = Arc::clone(&gate);
        async move {
            let _permit = gate.acquire().await?;
            Ok::<_, BoxError>(ToolOutput::new("opened"))
        }
    });
    let model = ScriptedModel::per_run([
        Turn::call("c1", "wait", json!({})),
        Turn::text("A long enough answer, so that compressing it is worth it: ".repeat(4)),
    ]);
    let agent = Agent::builder(model).tool(wait).build().unwrap();
    let hang = Tool::from_fn(ToolInfo::new("wait", "Never answers"), |_| {
        std::future::pending::<Result<ToolOutput, BoxError>>()
    });
    let hanging = Agent::builder(ScriptedModel::per_run([Turn::call(
        "c1",
        "wait",
        json!({}),
    )]))
    .tool(hang)
    .build()
    .unwrap();
    let server = Server::new()
        .agent("a", agent)
        .agent("hang", hanging)
        .identify(BearerTokens::new().token("t0ken", ()));
    let api = server.into_router();
    let (requests, responses, chunks) = (
        traced.requests.clone(),
        traced.responses.clone(),
        traced.chunks.clone(),
    );
    let trace = TraceLayer::new_for_http()
        .on_request(move |_: &http::Request<_>, _: &tracing::Span| requests.bump())
        .on_response(move |_: &http::Response<_>, _: Duration, _: &tracing::Span| responses.bump())
        .on_body_chunk(move |_: &axum::body::Bytes, _: Duration, _: &tracing::Span| chunks.bump());
    let cors = CorsLayer::new()
        .allow_origin(HeaderValue::from_static(ORIGIN))
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE]);
    let app = Router::new()
        .nest("/api", api)
        .layer(CompressionLayer::new())
        .layer(cors)
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            TIMEOUT,
        ))
        .layer(trace)
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid));
    TestServer::start(app).await
}

fn opened() -> Arc<tokio::sync::Semaphore> {
    Arc::new(tokio::sync::Semaphore::new(
        tokio::sync::Semaphore::MAX_PERMITS,
    ))
}

#[tokio::test]
async fn a_run_keeps_its_request_id_and_cors_headers_and_is_traced() {
    let traced = Traced::default();
    let server = layered(&opened(), &traced).await;
    let client = reqwest::Client::new();

    let response = client
        .post(server.url("/api/agents/a/runs"))
        .bearer_auth("t0ken")
        .header("origin", ORIGIN)
        .header("x-request-id", "req-42")
        .json(&json!({"input": "hello"}))
        .send()
        .await
        .unwrap();
    let generated = client.get(server.url("/api/healthz")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-request-id"], "req-42");
    assert_eq!(response.headers()["access-control-allow-origin"], ORIGIN);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["tool_records"][0]["content"], "opened");
    let id = generated.headers()["x-request-id"].to_str().unwrap();
    assert_eq!(id.len(), 36, "a generated UUID: {id}");
    assert_eq!((traced.requests.get(), traced.responses.get()), (2, 2));
}

#[tokio::test]
async fn a_cors_preflight_is_answered_before_identity() {
    let server = layered(&opened(), &Traced::default()).await;

    let response = reqwest::Client::new()
        .request(Method::OPTIONS, server.url("/api/agents/a/runs"))
        .header("origin", ORIGIN)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap();
    let elsewhere = reqwest::Client::new()
        .request(Method::OPTIONS, server.url("/api/agents/a/runs"))
        .header("origin", "http://evil.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200); // no token needed for a preflight
    let headers = response.headers();
    assert_eq!(headers["access-control-allow-origin"], ORIGIN);
    let methods = headers["access-control-allow-methods"].to_str().unwrap();
    assert!(methods.contains("POST"), "{methods}");
    let allowed = headers["access-control-allow-headers"].to_str().unwrap();
    assert!(allowed.contains("authorization"), "{allowed}");
    // Another origin is told the one allowed, which its browser refuses.
    assert_eq!(elsewhere.headers()["access-control-allow-origin"], ORIGIN);
}

#[tokio::test]
async fn a_json_answer_is_gzipped_when_asked_and_curl_decodes_it() {
    let server = layered(&opened(), &Traced::default()).await;
    let url = server.url("/api/agents/a/runs");

    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("curl")
            .args([
                "-s",
                "--compressed",
                "-D",
                "-",
                "-H",
                "authorization: Bearer t0ken",
            ])
            .args(["-d", r#"{"input": "hello"}"#])
            .arg(url)
            .output()
            .unwrap()
    })
    .await
    .unwrap();

    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-encoding: gzip"), "{head}");
    let body: Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["type"], "completed");
    assert!(
        body["final_message"]["content"]
            .as_str()
            .unwrap()
            .starts_with("A long enough answer")
    );
}

#[tokio::test]
async fn a_streamed_run_still_streams_through_compression_and_trace() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let traced = Traced::default();
    let server = layered(&gate, &traced).await;

    let response = reqwest::Client::new()
        .post(server.url("/api/agents/a/runs"))
        .bearer_auth("t0ken")
        .header("accept", "text/event-stream")
        .header("accept-encoding", "gzip")
        .json(&json!({"input": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(!response.headers().contains_key("content-encoding"));
    let mut events = SseReader::new(response);
    // The tool waits for the gate: these come while the run is still running.
    let mut early = Vec::new();
    while early.last() != Some(&"tool_call_started".to_owned()) {
        early.push(events.next().await.unwrap().event);
    }
    let chunks_while_running = traced.chunks.get();
    gate.add_permits(1);
    let rest = events.all().await;

    assert_eq!(early, ["run_started", "message", "tool_call_started"]);
    // Sent through the layers before the run went on (the events ready at once go in
    // one chunk), and the rest in chunks of their own.
    assert!(chunks_while_running >= 1, "{chunks_while_running}");
    assert!(traced.chunks.get() > chunks_while_running);
    assert_eq!(rest.last().unwrap().event, "completed");
}

#[tokio::test]
async fn a_run_past_the_timeout_gets_the_timeout_layers_status() {
    let server = layered(&opened(), &Traced::default()).await;

    let response = reqwest::Client::new()
        .post(server.url("/api/agents/hang/runs"))
        .bearer_auth("t0ken")
        .json(&json!({"input": "hello"}))
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
}
