//! Hostile and malformed JSON-RPC: each gets its A2A code (or the status every route
//! answers with), never a panic, never another caller's data.

use serde_json::{Value, json};
use tower_adk::server::Limits;

use super::{ALICE, TestServer, agents};

async fn post(
    server: &TestServer,
    token: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(server.url("/agents/weather/a2a"))
        .header("content-type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn code_of(server: &TestServer, body: Value) -> (Value, i64) {
    let (status, answer) = post(server, Some(ALICE), body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    let code = answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error: {answer}"));
    (answer, code)
}

#[tokio::test]
async fn malformed_requests_get_their_json_rpc_codes() {
    let server = TestServer::start(agents().server).await;
    let (status, answer) = post(&server, Some(ALICE), "{\"jsonrpc\": ").await;
    assert_eq!(
        (status, answer["error"]["code"].as_i64()),
        (200, Some(-32700))
    );
    assert_eq!(answer["id"], Value::Null);

    for (body, code) in [
        (json!([1, 2]), -32600),
        (json!("SendMessage"), -32600),
        (
            json!({"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}),
            -32600,
        ),
        (
            json!({"jsonrpc": "2.0", "id": true, "method": "GetTask"}),
            -32600,
        ),
        (json!({"jsonrpc": "2.0", "id": 1}), -32600),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "Nope", "params": {}}),
            -32601,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {}}),
            -32601,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": [1]}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": 7}}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "m"}}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": [{"text": "hi"}], "contextId": ""}}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "no-such-task"}}),
            -32001,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": "no-such-task"}}),
            -32001,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "t"}}),
            -32004,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig", "params": {}}),
            -32003,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"taskId": "nope", "parts": [{"text": "hi"}]}}}),
            -32001,
        ),
    ] {
        let (answer, got) = code_of(&server, body.clone()).await;
        assert_eq!(got, code, "{body} -> {answer}");
    }
    let (answer, _) = code_of(
        &server,
        json!({"jsonrpc": "2.0", "id": "x-1", "method": "Nope"}),
    )
    .await;
    assert_eq!(answer["id"], "x-1", "the id is echoed");
}

#[tokio::test]
async fn a_version_other_than_1_is_refused() {
    let server = TestServer::start(agents().server).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}});
    let answer: Value = reqwest::Client::new()
        .post(server.url("/agents/weather/a2a"))
        .bearer_auth(ALICE)
        .header("a2a-version", "0.3")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["error"]["code"], -32009);
}

#[tokio::test]
async fn no_token_is_401_and_a_body_past_the_limit_is_413() {
    let agents = agents();
    let server = TestServer::start(agents.server.limits(Limits::default().body_bytes(1024))).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}});
    let (status, _) = post(&server, None, body.to_string()).await;
    assert_eq!(status, 401);
    let (status, _) = post(&server, Some("wrong"), body.to_string()).await;
    assert_eq!(status, 401);
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": [{"text": "x".repeat(4096)}]}}});
    let (status, answer) = post(&server, Some(ALICE), huge.to_string()).await;
    assert_eq!(status, 413, "{answer}");
    // The card needs no token.
    let card = reqwest::get(server.url("/agents/weather/.well-known/agent-card.json"))
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    let unknown = reqwest::get(server.url("/agents/nope/.well-known/agent-card.json"))
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
}

#[tokio::test]
async fn a_server_without_a2a_has_no_a2a_routes() {
    let server = TestServer::start(tower_adk::server::Server::new()).await;
    let card = reqwest::get(server.url("/.well-known/agent-card.json"))
        .await
        .unwrap();
    assert_eq!(card.status(), 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streaming_client_that_goes_away_cancels_the_run_and_the_task() {
    use futures::StreamExt;
    let agents = agents();
    let slow = agents.slow.clone();
    let server = TestServer::start(agents.server).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
        "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "Take your time"}]}}});
    let response = reqwest::Client::new()
        .post(server.url("/agents/slow/a2a"))
        .bearer_auth(ALICE)
        .json(&body)
        .send()
        .await
        .unwrap();
    let mut stream = response.bytes_stream();
    let mut read = String::new();
    while !read.contains("statusUpdate") {
        read.push_str(std::str::from_utf8(&stream.next().await.unwrap().unwrap()).unwrap());
    }
    let task: Value = read
        .lines()
        .find_map(|line| {
            let data: Value = serde_json::from_str(line.strip_prefix("data: ")?).ok()?;
            Some(data["result"]["task"].clone()).filter(|t| !t.is_null())
        })
        .unwrap();
    drop(stream);
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}});
    let mut state = Value::Null;
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let answer: Value = reqwest::Client::new()
            .post(server.url("/agents/slow/a2a"))
            .bearer_auth(ALICE)
            .json(&get)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        state = answer["result"]["status"]["state"].clone();
        if state == "TASK_STATE_CANCELED" {
            break;
        }
    }
    assert_eq!(state, "TASK_STATE_CANCELED", "{task}");
    let context = task["contextId"].as_str().unwrap();
    for _ in 0..50 {
        if slow.last_checkpoint(context).await.unwrap().is_some() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the run left no checkpoint");
}
