//! `adk mcp`: an agent file served to MCP clients, over stdio (JSON-RPC lines on stdin
//! and stdout, and nothing else on stdout) and over streamable HTTP (its address on
//! stderr, tokens as `adk serve` takes them, a stop on SIGINT). The real clients'
//! tests are in tests/mcp_server.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use crate::support::{PATIENCE, adk};

/// The command, killed if a failed test left it running.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for_exit(child: &mut Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(start.elapsed() < PATIENCE, "adk mcp did not stop");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn mcp_over_stdio_answers_json_rpc_and_stops_when_stdin_closes() {
    let mut server = Stopped(
        adk()
            .args(["mcp", "tests/cli/agents/desk.yaml", "--expose", "tools"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("adk starts"),
    );
    let mut stdin = server.0.stdin.take().expect("piped");
    let mut lines = BufReader::new(server.0.stdout.take().expect("piped")).lines();
    // A line that is not JSON-RPC is skipped; the session goes on.
    writeln!(stdin, "not json").expect("write");
    let mut send = |message: Value| writeln!(stdin, "{message}").expect("write");
    let mut read = || -> Value {
        let line = lines.next().expect("a line").expect("text");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };

    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let initialized = read();
    assert_eq!(
        initialized["result"]["serverInfo"]["name"], "desk",
        "{initialized}"
    );
    assert!(initialized["result"]["capabilities"]["tools"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    // No role: the file's role filter shows only the city's slot.
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let listed = read();
    let names: Vec<&str> = (listed["result"]["tools"].as_array().expect("tools"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["set_slot_city", "resume"], "{listed}");

    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "set_slot_city", "arguments": {"value": "Oslo"}}}),
    );
    let called = read();
    assert_eq!(called["id"], 3);
    assert_eq!(called["result"]["isError"], false, "{called}");
    let text = called["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("Oslo"), "{called}");

    send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "set_slot_room", "arguments": {"value": "double"}}}),
    );
    let refused = read();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    send(json!({"jsonrpc": "2.0", "id": 5, "method": "no/such/method"}));
    let unknown = read();
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

    drop(stdin);
    assert!(wait_for_exit(&mut server.0).success());
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_lets_in_only_token_holders_and_stops_on_ctrl_c() {
    let mut server = Stopped(
        adk()
            .args(["mcp", "tests/cli/agents/desk.yaml", "--http", "127.0.0.1:0"])
            .env("ADK_TOKENS", "t0ken-clerk=clerk")
            .stderr(Stdio::piped())
            .spawn()
            .expect("adk starts"),
    );
    let stderr = server.0.stderr.take().expect("piped");
    let mut lines = BufReader::new(stderr).lines();
    let first = lines.next().expect("a line").expect("text");
    let url = first
        .split_once(" on ")
        .map(|(_, url)| url.trim().to_owned())
        .unwrap_or_else(|| panic!("no address in {first:?}"));
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );

    let client = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}});
    let post = |token: Option<&str>| {
        let mut request = client
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(post(None).await.expect("a response").status(), 401);
    let answered = post(Some("t0ken-clerk")).await.expect("a response");
    assert_eq!(answered.status(), 200);
    let body = answered.text().await.expect("a body");
    assert!(body.contains("\"serverInfo\""), "{body}");

    let interrupt = Command::new("kill")
        .args(["-INT", &server.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupt.success());
    assert_eq!(wait_for_exit(&mut server.0).code(), Some(0));
}
