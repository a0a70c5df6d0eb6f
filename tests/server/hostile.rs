//! Hostile input refused, always as JSON with a 4xx and a stable code: bodies too large,
//! not UTF-8, not JSON, not an object, of the wrong content type; odd path segments;
//! threads past their bounds; unknown routes and wrong methods on every path; and clients
//! that trickle their headers or their body (a raw TCP client).

use std::time::{Duration, Instant};

use http::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower_adk::Agent;
use tower_adk::server::{BearerTokens, Limits, Server};
use tower_adk::testing::{ScriptedModel, Turn};

use super::TestServer;

/// Agent `a`, which answers `Hello!`, for the holder of `t0ken`.
fn server(limits: Limits) -> Server {
    let agent = Agent::builder(ScriptedModel::per_run([Turn::text("Hello!")]))
        .build()
        .unwrap();
    let tokens = BearerTokens::new().token("t0ken", ());
    Server::new()
        .agent("a", agent)
        .identify(tokens)
        .limits(limits)
}

async fn started(limits: Limits) -> TestServer {
    TestServer::start(server(limits).into_router()).await
}

/// Sends `body` to `path` with a content type (or none), and reads the status and the
/// JSON code (`none` if the body is not an error).
async fn send(
    server: &TestServer,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> (u16, String, Value) {
    let mut request = reqwest::Client::new()
        .request(method, server.url(path))
        .bearer_auth("t0ken")
        .body(body);
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.expect("a JSON body");
    let code = body["error"]["code"].as_str().unwrap_or("none").to_owned();
    (status, code, body)
}

async fn post(server: &TestServer, body: impl Into<reqwest::Body>) -> (u16, String, Value) {
    let json = Some("application/json");
    send(server, Method::POST, "/agents/a/runs", json, body).await
}

fn message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap()
}

#[tokio::test]
async fn a_body_past_the_limit_gets_413_with_or_without_a_length() {
    let server = started(Limits::default().body_bytes(1024)).await;
    let big = json!({"input": "x".repeat(2048)}).to_string();
    let chunks: Vec<Result<String, std::io::Error>> = vec![Ok(big.clone())];
    let streamed = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    let json = Some("application/json");

    let (status, code, body) = post(&server, big.clone()).await;
    let (chunked, chunked_code, _) =
        send(&server, Method::POST, "/agents/a/runs", json, streamed).await;
    let (openai, _, openai_body) = send(
        &server,
        Method::POST,
        "/v1/chat/completions",
        json,
        big.clone(),
    )
    .await;
    let (agui, agui_code, _) = send(&server, Method::POST, "/agents/a/agui", json, big).await;
    let (fits, _, _) = post(&server, json!({"input": "hi"}).to_string()).await;

    assert_eq!((status, code.as_str()), (413, "body_too_large"));
    assert!(message(&body).contains("1024 bytes"), "{body}");
    assert_eq!((chunked, chunked_code.as_str()), (413, "body_too_large"));
    assert_eq!(openai, 413);
    assert_eq!(openai_body["error"]["code"], "body_too_large");
    assert_eq!(openai_body["error"]["type"], "invalid_request_error");
    assert_eq!((agui, agui_code.as_str()), (413, "body_too_large"));
    assert_eq!(fits, 200);
}

#[tokio::test]
async fn bodies_that_are_not_utf8_json_or_an_object_get_400_with_a_clear_message() {
    let server = started(Limits::default()).await;

    let (s1, c1, b1) = post(&server, b"{\"input\": \"\xff\xfe\"}".to_vec()).await;
    let (s2, c2, b2) = post(&server, "{\"input\": ").await;
    let (s3, c3, b3) = post(&server, "[1,2]").await;
    let (s4, c4, b4) = post(&server, "").await;
    let (s5, c5, b5) = post(&server, r#"{"input": 42}"#).await;

    assert_eq!((s1, c1.as_str()), (400, "invalid_body"));
    assert!(message(&b1).contains("not UTF-8"), "{b1}");
    assert_eq!((s2, c2.as_str()), (400, "invalid_body"));
    assert!(message(&b2).contains("not valid JSON"), "{b2}");
    assert_eq!((s3, c3.as_str()), (400, "invalid_body"));
    assert!(
        message(&b3).starts_with("the body is not a JSON object"),
        "{b3}"
    );
    assert!(message(&b3).contains(r#"{"input": "text"}"#), "{b3}");
    assert_eq!((s4, c4.as_str()), (400, "invalid_body"));
    assert!(message(&b4).contains("empty"), "{b4}");
    assert_eq!((s5, c5.as_str()), (400, "invalid_body"));
    assert!(message(&b5).contains("invalid type: integer `42`"), "{b5}");
}

#[tokio::test]
async fn a_run_with_no_message_gets_400_like_the_openai_route() {
    let server = started(Limits::default()).await;
    let json = Some("application/json");

    let (status, code, body) = post(&server, r#"{"messages": []}"#).await;
    let chat = r#"{"model": "a", "messages": []}"#;
    let (openai, openai_code, _) =
        send(&server, Method::POST, "/v1/chat/completions", json, chat).await;

    assert_eq!((status, code.as_str()), (400, "invalid_body"));
    assert!(message(&body).contains("`messages` is empty"), "{body}");
    assert_eq!((openai, openai_code.as_str()), (400, "invalid_body"));
}

#[tokio::test]
async fn json_text_forms_and_no_content_type_are_read_and_multipart_gets_415() {
    let server = started(Limits::default()).await;
    let body = r#"{"input": "hi"}"#;
    let path = "/agents/a/runs";

    let mut read = Vec::new();
    for content_type in [
        None,
        Some("application/json; charset=utf-8"),
        Some("application/x-www-form-urlencoded"), // curl -d
        Some("text/plain;charset=UTF-8"),          // fetch() with a string
    ] {
        read.push(
            send(&server, Method::POST, path, content_type, body)
                .await
                .0,
        );
    }
    let multipart = Some("multipart/form-data; boundary=xyz");
    let (status, code, _) = send(&server, Method::POST, path, multipart, body).await;
    let (xml, xml_code, _) = send(&server, Method::POST, path, Some("application/xml"), body).await;
    let chat = r#"{"model": "a", "messages": [{"role": "user", "content": "hi"}]}"#;
    let (openai, _, openai_body) = send(
        &server,
        Method::POST,
        "/v1/chat/completions",
        multipart,
        chat,
    )
    .await;

    assert_eq!(read, [200, 200, 200, 200]);
    assert_eq!((status, code.as_str()), (415, "unsupported_media_type"));
    assert_eq!((xml, xml_code.as_str()), (415, "unsupported_media_type"));
    assert_eq!(openai, 415);
    assert_eq!(openai_body["error"]["code"], "unsupported_media_type");
}

#[tokio::test]
async fn curl_d_without_a_content_type_still_runs() {
    let server = started(Limits::default()).await;
    let url = server.url("/agents/a/runs");

    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("curl")
            .args(["-s", "-H", "authorization: Bearer t0ken"])
            .args(["-d", r#"{"input": "hi"}"#])
            .arg(url)
            .output()
            .unwrap()
    })
    .await
    .unwrap();

    let body: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(body["type"], "completed", "{body}");
}

#[tokio::test]
async fn thread_names_past_their_bounds_get_400_invalid_thread() {
    let server = started(Limits::default()).await;
    let run_on = |thread: String| json!({"input": "hi", "thread": thread}).to_string();

    let (long, long_code, long_body) = post(&server, run_on("x".repeat(257))).await;
    let (control, control_code, _) = post(&server, run_on("alice\n1".to_owned())).await;
    let (empty, empty_code, _) = post(&server, run_on(String::new())).await;
    let (longest, _, _) = post(&server, run_on("x".repeat(256))).await;
    let (slashed, _, _) = post(&server, run_on("support/42".to_owned())).await;
    let get = |path: &'static str| send(&server, Method::GET, path, None, "");
    let (shown, shown_code, _) = get("/agents/a/threads/alice%0A1").await;
    let (deleted, deleted_code, _) =
        send(&server, Method::DELETE, "/agents/a/threads/%00", None, "").await;
    let (kept, _, kept_body) = get("/agents/a/threads/support%2F42").await;

    assert_eq!((long, long_code.as_str()), (400, "invalid_thread"));
    assert!(message(&long_body).contains("257 bytes"), "{long_body}");
    assert_eq!((control, control_code.as_str()), (400, "invalid_thread"));
    assert_eq!((empty, empty_code.as_str()), (400, "invalid_thread"));
    assert_eq!((longest, slashed), (200, 200));
    assert_eq!((shown, shown_code.as_str()), (400, "invalid_thread"));
    assert_eq!((deleted, deleted_code.as_str()), (400, "invalid_thread"));
    assert_eq!(
        (kept, kept_body["thread"].as_str()),
        (200, Some("support/42"))
    );
}

#[tokio::test]
async fn path_segments_and_queries_that_do_not_read_get_400_as_json() {
    let server = started(Limits::default()).await;
    let get = |path: &'static str| send(&server, Method::GET, path, None, "");

    let (agent, agent_code, _) = send(
        &server,
        Method::POST,
        "/agents/%FF/runs",
        None,
        r#"{"input": "hi"}"#,
    )
    .await;
    let (thread, thread_code, _) = get("/agents/a/threads/%C3%28").await;
    let (query, query_code, _) = get("/agents/a/threads?limit=many").await;

    assert_eq!((agent, agent_code.as_str()), (400, "invalid_path"));
    assert_eq!((thread, thread_code.as_str()), (400, "invalid_path"));
    assert_eq!((query, query_code.as_str()), (400, "invalid_query"));
}

#[tokio::test]
async fn unknown_routes_and_wrong_methods_get_json_404_and_405_on_every_path() {
    let server = TestServer::start(server(Limits::default()).page(true).into_router()).await;
    let cases = [
        (Method::GET, "/nowhere", 404, "not_found"),
        (Method::GET, "/agents/a/nowhere", 404, "not_found"),
        (Method::GET, "/agents/a/runs/r1/nowhere", 404, "not_found"),
        (Method::GET, "/v1/nowhere", 404, "not_found"),
        (Method::POST, "/agents/nobody/runs", 404, "unknown_agent"),
        (Method::GET, "/agents/a/runs", 405, "method_not_allowed"),
        (Method::PUT, "/agents/a/runs", 405, "method_not_allowed"),
        (Method::POST, "/agents", 405, "method_not_allowed"),
        (
            Method::PATCH,
            "/agents/a/threads/t1",
            405,
            "method_not_allowed",
        ),
        (Method::POST, "/agents/a/threads", 405, "method_not_allowed"),
        (Method::GET, "/agents/a/agui", 405, "method_not_allowed"),
        (
            Method::POST,
            "/agents/a/runs/r1/events",
            405,
            "method_not_allowed",
        ),
        (
            Method::GET,
            "/v1/chat/completions",
            405,
            "method_not_allowed",
        ),
        (Method::DELETE, "/v1/models", 405, "method_not_allowed"),
        (Method::POST, "/healthz", 405, "method_not_allowed"),
        (Method::POST, "/", 405, "method_not_allowed"),
    ];
    for (method, path, status, code) in cases {
        let body = r#"{"input": "hi"}"#;
        let (got, got_code, _) = send(&server, method.clone(), path, None, body).await;
        assert_eq!((got, got_code.as_str()), (status, code), "{method} {path}");
    }
}

/// A server of [`Server::serve`] on a free port of 127.0.0.1, with these limits.
async fn served(limits: Limits) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server(limits).serve(listener));
    addr
}

/// Writes `head` at once, then `trickle` a byte every 100 ms; gives what the server
/// answered and when the connection closed (or `None` if it stayed open 5 s).
async fn trickle(
    addr: std::net::SocketAddr,
    head: &str,
    trickle: &str,
) -> (String, Option<Duration>) {
    let started = Instant::now();
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let head = head.to_owned();
    let trickle = trickle.to_owned();
    let writer = tokio::spawn(async move {
        write.write_all(head.as_bytes()).await?;
        for byte in trickle.as_bytes() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            write.write_all(&[*byte]).await?;
        }
        std::future::pending::<()>().await;
        Ok::<_, std::io::Error>(())
    });
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), read.read_to_end(&mut answer)).await;
    writer.abort();
    let closed = read.is_ok().then(|| started.elapsed());
    (String::from_utf8_lossy(&answer).into_owned(), closed)
}

#[tokio::test]
async fn headers_that_trickle_in_are_cut_off_at_the_header_timeout() {
    let limits = Limits::default().header_timeout(Duration::from_millis(500));
    let addr = served(limits).await;
    let head = "GET /agents HTTP/1.1\r\nhost: x\r\n";
    let slow = "authorization: Bearer t0ken\r\nx-filler: ".to_owned() + &"y".repeat(100);

    let (answer, closed) = trickle(addr, head, &slow).await;
    let (fast, _) = trickle(
        addr,
        "GET /agents HTTP/1.1\r\nhost: x\r\nauthorization: Bearer t0ken\r\nconnection: close\r\n\r\n",
        "",
    )
    .await;

    let closed = closed.expect("the connection is closed");
    assert!(closed < Duration::from_secs(3), "{closed:?}");
    assert_eq!(answer, "", "no answer to headers that never end");
    assert!(fast.starts_with("HTTP/1.1 200"), "{fast}");
}

#[tokio::test]
async fn a_body_that_trickles_in_gets_408_at_the_body_timeout_however_steady() {
    let limits = Limits::default().body_timeout(Duration::from_millis(500));
    let addr = served(limits).await;
    let body = r#"{"input": "hi", "thread": "a-rather-long-thread-name"}"#;
    let head = format!(
        "POST /agents/a/runs HTTP/1.1\r\nhost: x\r\nauthorization: Bearer t0ken\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );

    let (answer, closed) = trickle(addr, &head, body).await;

    let closed = closed.expect("the connection is closed");
    assert!(closed < Duration::from_secs(3), "{closed:?}");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let (_, json) = answer.split_once("\r\n\r\n").unwrap();
    let json: Value = serde_json::from_str(json).unwrap();
    assert_eq!(json["error"]["code"], "body_timeout");
}
