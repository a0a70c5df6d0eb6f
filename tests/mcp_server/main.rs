//! Our MCP face (`tower_adk::mcp_server`, `adk mcp`) driven by MCP clients no one here
//! wrote: the Python SDK's client and the MCP Inspector's CLI (scripts/setup-mcp-clients),
//! over streamable HTTP (the face in this process, on a free loopback port, with a
//! clerk's and a guest's bearer tokens) and over stdio (`adk mcp FILE`, which the
//! clients start).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use crate::support::{CLERK, Face, GUEST, adk, inspector, python_client, repo_file};

/// The Python client's steps over HTTP with `token`, off the runtime's threads.
async fn python_http(face: &Face, token: &str, steps: Value) -> Vec<Value> {
    let (url, token) = (face.url.clone(), token.to_owned());
    tokio::task::spawn_blocking(move || python_client(&["http", &url, &token, &steps.to_string()]))
        .await
        .expect("the client's thread")
}

fn names(listed: &Value) -> Vec<&str> {
    let tools = listed["tools"].as_array().expect("tools");
    tools.iter().filter_map(Value::as_str).collect()
}

fn text(step: &Value) -> &str {
    step["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn python_client_sees_and_calls_only_its_roles_tools() {
    let face = Face::start().await;
    let steps = json!([
        {"op": "list"},
        {"op": "call", "tool": "refund", "arguments": {"order": 7}},
    ]);
    let guest = python_http(&face, GUEST, steps.clone()).await;
    assert_eq!(
        names(&guest[0]),
        [
            "support",
            "lookup_order",
            "report",
            "cancel_order",
            "slow",
            "slow_state",
            "resume"
        ]
    );
    assert_eq!(guest[1]["error"]["code"], -32602, "{}", guest[1]);
    assert_eq!(guest[1]["error"]["message"], "unknown tool `refund`");
    assert_eq!(face.refunds.load(std::sync::atomic::Ordering::SeqCst), 0);

    let clerk = python_http(&face, CLERK, steps).await;
    assert_eq!(
        names(&clerk[0]),
        [
            "support",
            "lookup_order",
            "refund",
            "report",
            "cancel_order",
            "slow",
            "slow_state",
            "resume"
        ]
    );
    assert_eq!(clerk[1]["result"]["isError"], false, "{}", clerk[1]);
    assert_eq!(text(&clerk[1]), "refunded");
    assert_eq!(face.refunds.load(std::sync::atomic::Ordering::SeqCst), 1);
    // The agent's tool has the message schema; the tools keep theirs.
    let schema = &clerk[0]["schemas"]["support"];
    assert_eq!(schema["required"], json!(["message"]), "{schema}");
}

#[tokio::test(flavor = "multi_thread")]
async fn python_client_gets_progress_in_order_then_the_result() {
    let face = Face::start().await;
    let steps = json!([
        {"op": "call", "tool": "report", "arguments": {}, "progress": true},
        {"op": "call", "tool": "support", "arguments": {"message": "Where is order 7?"}, "progress": true},
    ]);
    let out = python_http(&face, GUEST, steps).await;
    let messages = |step: &Value| -> Vec<String> {
        let progress = step["progress"].as_array().expect("progress");
        progress
            .iter()
            .map(|p| p["message"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let counts: Vec<f64> = (out[0]["progress"].as_array().expect("progress"))
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert_eq!(messages(&out[0]), ["one ", "two ", "three"], "{}", out[0]);
    assert_eq!(counts, [1.0, 2.0, 3.0]);
    assert_eq!(text(&out[0]), "one two three");
    assert_eq!(
        messages(&out[1]),
        ["Order 7 ", "has ", "shipped."],
        "{}",
        out[1]
    );
    assert_eq!(text(&out[1]), "Order 7 has shipped.");
}

#[tokio::test(flavor = "multi_thread")]
async fn python_client_is_told_of_an_approval_and_resumes_it() {
    let face = Face::start().await;
    let steps = json!([
        {"op": "call", "tool": "cancel_order", "arguments": {"order": 7}},
        {"op": "resume", "of": 0},
        {"op": "call", "tool": "cancel_order", "arguments": {"order": 8}},
        {"op": "resume", "of": 2, "decisions": null},
    ]);
    let mut out = python_http(&face, CLERK, steps).await;
    let interrupted = &out[0]["result"];
    assert_eq!(interrupted["isError"], true, "{interrupted}");
    let structured = &interrupted["structuredContent"];
    assert_eq!(structured["status"], "interrupted");
    assert_eq!(
        structured["interrupts"][0]["payload"]["description"],
        "Cancel this order?"
    );
    assert_eq!(structured["resume"]["tool"], "resume");
    assert_eq!(structured["resume"]["arguments"]["tool"], "cancel_order");
    assert!(text(&out[0]).starts_with("Not done"), "{}", out[0]);
    assert_eq!(out[1]["result"]["isError"], false, "{}", out[1]);
    assert_eq!(text(&out[1]), "cancelled");
    // Decisions that are not an object are bad arguments of the resume tool.
    assert_eq!(out[3]["result"]["isError"], true, "{}", out[3]);

    // The guest cannot resume the clerk's checkpoint: to it, the checkpoint is unknown.
    let resume = out.swap_remove(2)["result"]["structuredContent"]["resume"].clone();
    let steps = json!([{"op": "call", "tool": "resume", "arguments": resume["arguments"]}]);
    let guest = python_http(&face, GUEST, steps).await;
    assert_eq!(guest[0]["result"]["isError"], true, "{}", guest[0]);
    let code = &guest[0]["result"]["structuredContent"]["error"]["code"];
    assert_eq!(code, "checkpoint_unknown", "{}", guest[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn python_client_gets_errors_for_bad_arguments_and_unknown_tools() {
    let face = Face::start().await;
    let steps = json!([
        {"op": "call", "tool": "support", "arguments": {"text": "hi"}},
        {"op": "call", "tool": "no_such_tool", "arguments": {}},
        {"op": "call", "tool": "support", "arguments": {"message": "hi", "thread": ""}},
    ]);
    let out = python_http(&face, GUEST, steps).await;
    assert_eq!(out[0]["result"]["isError"], true, "{}", out[0]);
    let error = &out[0]["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "invalid_arguments", "{}", out[0]);
    assert_eq!(out[1]["error"]["code"], -32602, "{}", out[1]);
    assert_eq!(out[1]["error"]["message"], "unknown tool `no_such_tool`");
    assert_eq!(out[2]["result"]["isError"], true, "{}", out[2]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_without_a_valid_token_is_refused() {
    let face = Face::start().await;
    let client = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}});
    for token in [None, Some("not-a-token")] {
        let mut request = client
            .post(&face.url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("a response");
        assert_eq!(response.status(), 401, "{token:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn inspector_cli_lists_per_token_and_calls_over_http() {
    let face = Face::start().await;
    let url = face.url.clone();
    let (clerk, guest, call, refused) = tokio::task::spawn_blocking(move || {
        let list = |token: &str| {
            let header = format!("Authorization: Bearer {token}");
            inspector(&[
                &url,
                "--transport",
                "http",
                "--header",
                &header,
                "--method",
                "tools/list",
            ])
        };
        let header = format!("Authorization: Bearer {GUEST}");
        let call = inspector(&[
            &url,
            "--transport",
            "http",
            "--header",
            &header,
            "--method",
            "tools/call",
            "--tool-name",
            "lookup_order",
            "--tool-arg",
            "order=7",
        ]);
        let refused = inspector(&[
            &url,
            "--transport",
            "http",
            "--header",
            &header,
            "--method",
            "tools/call",
            "--tool-name",
            "refund",
            "--tool-arg",
            "order=7",
        ]);
        (list(CLERK), list(GUEST), call, refused)
    })
    .await
    .expect("the inspector's thread");
    let listed = |value: Result<Value, String>| -> Vec<String> {
        let value = value.unwrap_or_else(|e| panic!("{e}"));
        let tools = value["tools"].as_array().cloned().unwrap_or_default();
        tools
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    };
    assert!(listed(clerk).contains(&"refund".to_owned()));
    assert!(!listed(guest).contains(&"refund".to_owned()));
    let call = call.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(call["content"][0]["text"], "Order 7: shipped", "{call}");
    let refused = refused.expect_err("a guest's refund is refused");
    assert!(refused.contains("unknown tool `refund`"), "{refused}");
    assert_eq!(face.refunds.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[test]
fn inspector_cli_drives_adk_mcp_over_stdio() {
    let adk = adk();
    let file = repo_file("tests/cli/agents/desk.yaml");
    let server = [adk.as_str(), "mcp", file.as_str(), "--expose", "both"];
    let listed = inspector(&[&server[..], &["--role", "clerk", "--method", "tools/list"]].concat())
        .unwrap_or_else(|e| panic!("{e}"));
    let tools: Vec<&str> = (listed["tools"].as_array().expect("tools"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(tools, ["desk", "set_slot_city", "set_slot_room", "resume"]);

    // Without the clerk's role, the file's role filter hides the room.
    let listed = inspector(&[&server[..], &["--method", "tools/list"]].concat())
        .unwrap_or_else(|e| panic!("{e}"));
    let tools: Vec<&str> = (listed["tools"].as_array().expect("tools"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(tools, ["desk", "set_slot_city", "resume"]);

    let called = inspector(
        &[
            &server[..],
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "desk",
                "--tool-arg",
                "message=hi",
            ],
        ]
        .concat(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        called["content"][0]["text"], "Hello! Which city are you travelling to?",
        "{called}"
    );
}

#[test]
fn python_client_drives_adk_mcp_over_stdio_through_an_approval() {
    let adk = adk();
    let file = repo_file("tests/cli/agents/desk.yaml");
    let steps = json!([
        {"op": "list"},
        {"op": "call", "tool": "set_slot_room", "arguments": {"value": "double"}},
        {"op": "resume", "of": 1, "decisions": null},
        {"op": "call", "tool": "set_slot_room", "arguments": {"value": "suite"}},
        {"op": "call", "tool": "desk", "arguments": {"message": "hi"}, "progress": true},
    ])
    .to_string();
    let out = python_client(&[
        "stdio", &steps, &adk, "mcp", &file, "--expose", "both", "--role", "clerk",
    ]);
    assert_eq!(
        names(&out[0]),
        ["desk", "set_slot_city", "set_slot_room", "resume"]
    );
    let structured = &out[1]["result"]["structuredContent"];
    assert_eq!(structured["status"], "interrupted", "{}", out[1]);
    assert_eq!(out[2]["result"]["isError"], true, "{}", out[2]);
    // A value outside the schema's enum never reaches the approval.
    assert_eq!(out[3]["result"]["isError"], true, "{}", out[3]);
    assert!(text(&out[3]).contains("invalid_arguments"), "{}", out[3]);
    assert_eq!(text(&out[4]), "Hello! Which city are you travelling to?");
    assert_eq!(
        out[4]["progress"][0]["message"],
        "Hello! Which city are you travelling to?"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn another_callers_session_is_not_found() {
    let face = Face::start().await;
    let client = reqwest::Client::new();
    let post = |token: &str, session: Option<&str>, body: Value| {
        let mut request = client
            .post(&face.url)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}});
    let opened = post(CLERK, None, initialize).await.expect("a response");
    assert_eq!(opened.status(), 200);
    let session = (opened.headers().get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});

    let guest = post(GUEST, Some(&session), initialized.clone())
        .await
        .expect("a response");
    assert_eq!(guest.status(), 404);
    let guest = post(GUEST, Some(&session), list.clone())
        .await
        .expect("a response");
    assert_eq!(guest.status(), 404);

    let clerk = post(CLERK, Some(&session), initialized)
        .await
        .expect("a response");
    assert!(clerk.status().is_success(), "{}", clerk.status());
    let clerk = post(CLERK, Some(&session), list).await.expect("a response");
    assert_eq!(clerk.status(), 200);
    let body = clerk.text().await.expect("a body");
    assert!(body.contains("\"refund\""), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_the_client_gives_up_on_is_cancelled() {
    let face = Face::start().await;
    let steps = json!([
        {"op": "call", "tool": "slow", "arguments": {}, "timeout": 1},
        {"op": "sleep", "seconds": 1},
        {"op": "call", "tool": "slow_state", "arguments": {}},
    ]);
    let out = python_http(&face, GUEST, steps).await;
    assert_eq!(out[0]["gave_up"], true, "{}", out[0]);
    // Within the same session: the run was dropped on the client's `notifications/cancelled`.
    assert_eq!(
        text(&out[2]),
        "started 1, finished 0, dropped 1",
        "{}",
        out[2]
    );
}
