//! The native providers in a file (`openai-responses`, `anthropic`, `gemini`): the file's
//! base URL, key (from `${VAR}`), model name and reasoning settings reach each API in its
//! own form, here a loopback server that records what it is sent and answers as the API
//! does; and the settings a provider does not take are refused where they stand.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Request, State};
use axum::routing::post;
use serde_json::{Value, json};
use tower::ServiceExt;
use tower_adk::AgentRequest;
use tower_adk::file::{ProblemKind, Registry};

use super::support::{build, places, problems, read_with};

/// What the server was sent: the path, the key header it got, and the body.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    key: Option<String>,
    body: Value,
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// Records the request, then answers as the API of its path does (a whole reply).
async fn answer(State(log): State<Log>, request: Request) -> Json<Value> {
    let path = request.uri().path().to_owned();
    let headers = request.headers().clone();
    let bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .expect("a body");
    let body: Value = serde_json::from_slice(&bytes).expect("JSON");
    let key = ["x-api-key", "authorization", "x-goog-api-key"]
        .iter()
        .find_map(|name| headers.get(*name))
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    log.lock().expect("not poisoned").push(Seen {
        path: path.clone(),
        key,
        body,
    });
    Json(if path.ends_with("/v1/messages") {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
               "content": [{"type": "text", "text": "Hello from Claude."}],
               "stop_reason": "end_turn", "stop_sequence": null,
               "usage": {"input_tokens": 5, "output_tokens": 4}})
    } else if path.ends_with("/responses") {
        json!({"id": "resp_1", "object": "response", "status": "completed", "model": "m",
               "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": "Hello from Responses.", "annotations": []}]}],
               "usage": {"input_tokens": 5, "output_tokens": 4, "total_tokens": 9}})
    } else {
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello from Gemini."}]},
                               "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 4, "totalTokenCount": 9}})
    })
}

/// Runs the file `text` once against the recording server; returns the reply's text and
/// what the server was sent.
async fn run_once(text: &str, key: &str) -> (String, Seen) {
    let log = Log::default();
    let router = axum::Router::new()
        .fallback(post(answer))
        .with_state(Arc::clone(&log));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let address = listener.local_addr().expect("address");
    let server = tokio::spawn(async move { axum::serve(listener, router).await });
    let url = format!("http://{address}");
    let registry = Registry::new();
    let file = read_with(text, &registry, &[("LLM_URL", &url), ("LLM_KEY", key)])
        .unwrap_or_else(|e| panic!("{e}"));
    let agent = build(file, &registry).await;
    let result = agent
        .oneshot(AgentRequest::user("hi"))
        .await
        .expect("starts")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    server.abort();
    let seen = log.lock().expect("not poisoned").clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let reply = result.final_message.content().to_owned();
    (reply, seen.into_iter().next().expect("one request"))
}

#[tokio::test]
async fn an_anthropic_file_sends_its_key_model_and_thinking_budget() {
    let text = "\
description: You greet.
model:
  provider: anthropic
  name: claude-sonnet-4-5
  base_url: ${LLM_URL}
  api_key: ${LLM_KEY}
  stream: false
  max_tokens: 4096
  thinking_budget: 2048
  interleaved_thinking: true
";
    let (reply, seen) = run_once(text, "sk-ant-test").await;
    assert_eq!(reply, "Hello from Claude.");
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.key.as_deref(), Some("sk-ant-test"));
    assert_eq!(seen.body["model"], "claude-sonnet-4-5");
    assert_eq!(seen.body["max_tokens"], 4096);
    assert_eq!(
        seen.body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(
        seen.body["system"][0]["text"], "You greet.",
        "{}",
        seen.body
    );
}

#[tokio::test]
async fn a_responses_file_sends_its_key_model_effort_and_store() {
    let text = "\
model:
  provider: openai-responses
  name: gpt-5-mini
  base_url: ${LLM_URL}/v1
  api_key: ${LLM_KEY}
  stream: false
  reasoning_effort: high
  store: false
";
    let (reply, seen) = run_once(text, "sk-test").await;
    assert_eq!(reply, "Hello from Responses.");
    assert_eq!(seen.path, "/v1/responses");
    assert_eq!(seen.key.as_deref(), Some("Bearer sk-test"));
    assert_eq!(seen.body["model"], "gpt-5-mini");
    assert_eq!(seen.body["reasoning"]["effort"], "high", "{}", seen.body);
    assert_eq!(seen.body["store"], false);
}

#[tokio::test]
async fn a_gemini_file_sends_its_key_model_and_thinking_level() {
    let text = "\
model:
  provider: gemini
  name: gemini-3-flash-preview
  base_url: ${LLM_URL}
  api_key: ${LLM_KEY}
  stream: false
  thinking_level: low
";
    let (reply, seen) = run_once(text, "g-key").await;
    assert_eq!(reply, "Hello from Gemini.");
    assert_eq!(
        seen.path,
        "/v1beta/models/gemini-3-flash-preview:generateContent"
    );
    assert_eq!(seen.key.as_deref(), Some("g-key"));
    assert_eq!(
        seen.body["generationConfig"]["thinkingConfig"]["thinkingLevel"], "LOW",
        "{}",
        seen.body
    );
}

#[test]
fn a_setting_of_another_provider_is_refused_where_it_stands() {
    // `reasoning_effort` is the Responses API's; Anthropic's budget has a floor.
    let text = "model:\n  provider: anthropic\n  name: m\n  reasoning_effort: high\n  thinking_budget: 10\n";
    let found = problems(text);
    assert_eq!(
        places(&found),
        [
            (ProblemKind::Conflict, 4, 21),
            (ProblemKind::InvalidValue, 5, 20)
        ],
        "{found:?}"
    );
    assert!(found[0].message().contains("`reasoning_effort`"));

    let text = "model:\n  provider: gemini\n  name: m\n  thinking_level: extreme\n";
    let found = problems(text);
    assert_eq!(places(&found), [(ProblemKind::InvalidValue, 4, 19)]);
    assert!(found[0].message().contains("thinking level"), "{found:?}");
}

#[test]
fn each_provider_names_its_own_model_variable_when_the_name_is_missing() {
    for (provider, var) in [
        ("anthropic", "ANTHROPIC_MODEL"),
        ("gemini", "GEMINI_MODEL"),
        ("openai-responses", "OPENAI_MODEL"),
    ] {
        let text = format!("model:\n  provider: {provider}\n");
        let found = problems(&text);
        assert_eq!(places(&found), [(ProblemKind::MissingKey, 2, 3)]);
        assert!(found[0].message().contains(var), "{found:?}");
        read_with(&text, &Registry::new(), &[(var, "m")]).unwrap_or_else(|e| panic!("{e}"));
    }
}
