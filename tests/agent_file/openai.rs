//! The `openai` provider: the file's base URL (from the environment), key, model name
//! and options reach an OpenAI-compatible server, here a small one on loopback that
//! records what it is sent.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use serde_json::{Value, json};
use tower::ServiceExt;
use tower_adk::AgentRequest;
use tower_adk::file::Registry;

use super::support::read_with;

type Seen = Arc<Mutex<Vec<(Option<String>, Value)>>>;

async fn completions(
    State(seen): State<Seen>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Json<Value> {
    let key = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    seen.lock().expect("not poisoned").push((key, body));
    Json(json!({
        "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello from the server."}, "finish_reason": "stop"}]
    }))
}

#[tokio::test]
async fn the_files_url_key_model_and_options_reach_the_server() {
    let seen = Seen::default();
    let router = axum::Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(Arc::clone(&seen));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let address = listener.local_addr().expect("address");
    let server = tokio::spawn(async move { axum::serve(listener, router).await });

    let text = "\
description: You greet.
model:
  provider: openai
  name: tiny-model
  base_url: ${LLM_URL}/v1
  api_key: {env: LLM_KEY}
  stream: false
  temperature: 0.3
  max_tokens: 50
";
    let url = format!("http://{address}");
    let registry = Registry::new();
    let file = read_with(
        text,
        &registry,
        &[("LLM_URL", &url), ("LLM_KEY", "sk-test")],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let agent = super::support::build(file, &registry).await;
    assert!(agent.scripted_model().is_none());

    let result = agent
        .oneshot(AgentRequest::user("hi"))
        .await
        .expect("starts")
        .await
        .expect("runs");
    assert_eq!(result.final_message.content(), "Hello from the server.");
    let seen = seen.lock().expect("not poisoned").clone();
    let (key, body) = &seen[0];
    assert_eq!(key.as_deref(), Some("Bearer sk-test"));
    assert_eq!(body["model"], "tiny-model");
    assert_eq!(
        body["temperature"].as_f64().map(|t| (t * 10.0).round()),
        Some(3.0)
    );
    assert_eq!(body["messages"][0]["content"], "You greet.");
    assert!(
        body["max_tokens"] == 50 || body["max_completion_tokens"] == 50,
        "{body}"
    );
    server.abort();
}
