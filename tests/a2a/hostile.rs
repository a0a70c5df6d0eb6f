//! A server that answers with something other than A2A: each answer a typed
//! [`A2aError::Protocol`] (or `Http`), never a panic. The server is a small axum app
//! whose card is valid and whose JSON-RPC endpoint answers as the test says.

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::json;
use tower_adk::a2a::client::{A2aError, RemoteAgent};
use tower_adk::a2a::{Message, Part, Role};

/// Serves a card (streaming or not) and `answer` (status, content type, body) at `/rpc`.
async fn hostile(
    streaming: bool,
    answer: (u16, &'static str, String),
) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "hostile", "description": "Answers badly", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": streaming},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    });
    let (status, content_type, body) = answer;
    let app = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || async move { axum::Json(card) }),
        )
        .route(
            "/rpc",
            post(move || async move {
                let mut headers = HeaderMap::new();
                headers.insert(header::CONTENT_TYPE, content_type.parse().unwrap());
                (StatusCode::from_u16(status).unwrap(), headers, body)
            }),
        );
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (base, task)
}

async fn first_error(streaming: bool, answer: (u16, &'static str, String)) -> A2aError {
    let (base, task) = hostile(streaming, answer).await;
    let agent = RemoteAgent::connect(&base).await.unwrap();
    let mut events = agent.send(Message::new("m1", Role::User, vec![Part::text("hi")]));
    let mut error = None;
    while let Some(event) = events.next().await {
        if let Err(e) = event {
            error = Some(e);
            break;
        }
    }
    task.abort();
    error.expect("the answer fails")
}

#[tokio::test]
async fn answers_that_are_not_a2a_are_protocol_errors() {
    let json = "application/json";
    let cases = [
        (200, json, "not json".to_owned()),
        (200, json, r#"{"jsonrpc": "2.0", "id": 1}"#.to_owned()),
        (
            200,
            json,
            r#"{"jsonrpc": "2.0", "id": 1, "result": {"neither": "task nor message"}}"#.to_owned(),
        ),
        (
            200,
            json,
            r#"{"jsonrpc": "1.0", "id": 1, "result": {}}"#.to_owned(),
        ),
    ];
    for case in cases {
        let body = case.2.clone();
        let error = first_error(false, case).await;
        assert!(
            matches!(error, A2aError::Protocol { .. }),
            "{body}: {error:?}"
        );
    }
}

#[tokio::test]
async fn a_stream_with_a_bad_event_or_a_huge_one_is_a_protocol_error() {
    let sse = "text/event-stream";
    let bad = "data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"task\": 7}}\n\n".to_owned();
    let error = first_error(true, (200, sse, bad)).await;
    assert!(matches!(error, A2aError::Protocol { .. }), "{error:?}");
    let huge = format!("data: {}\n\n", "x".repeat(9 * 1024 * 1024));
    let error = first_error(true, (200, sse, huge)).await;
    assert!(matches!(error, A2aError::Protocol { .. }), "{error:?}");
}

#[tokio::test]
async fn an_error_status_is_an_http_error_with_the_start_of_its_body() {
    let error = first_error(
        false,
        (503, "text/plain", "down for maintenance".to_owned()),
    )
    .await;
    let A2aError::Http { status, body, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!((*status, body.as_str()), (503, "down for maintenance"));
    let long = "y".repeat(10_000);
    let error = first_error(true, (500, "text/plain", long)).await;
    let A2aError::Http { body, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(
        body.chars().count() < 300,
        "the body is cut: {} chars",
        body.len()
    );
}

#[tokio::test]
async fn a_card_of_a2a_0_3_is_refused_with_a_reason() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "old", "description": "Speaks 0.3", "version": "1", "protocolVersion": "0.3.0",
        "url": format!("{base}/rpc"), "preferredTransport": "JSONRPC",
        "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
    });
    let app = Router::new().route(
        "/.well-known/agent-card.json",
        get(move || async move { axum::Json(card) }),
    );
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    let error = RemoteAgent::connect(&base).await.unwrap_err();
    task.abort();
    let A2aError::Card { reason, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(reason.contains("A2A 0.3.0"), "{reason}");
}
