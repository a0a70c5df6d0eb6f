//! genai 0.6.5's Anthropic adapter on Anthropic's recorded streams (the files of
//! `tests/anthropic/recorded/`, replayed byte for byte by a loopback server that keeps the
//! request bodies), beside tower-adk's `AnthropicModel` on the same bytes.
//!
//! Each finding is checked: a loss is asserted as a loss, so if genai stops losing it the
//! binary fails and the finding must be revisited. Then the cost per streamed event of
//! both clients, over the same server. Prints one JSON line per finding and measurement.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use genai::adapter::AdapterKind;
use genai::chat::{
    Binary, ChatMessage, ChatOptions, ChatRequest, ChatStreamEvent, ContentPart, MessageContent,
    Tool, ToolResponse,
};
use genai::resolver::{AuthData, Endpoint, ServiceTargetResolver};
use genai::{Client, ModelIden, ServiceTarget};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tower::ServiceExt;
use tower_adk::Message;
use tower_adk::model::{ModelDelta, ModelRequest};
use tower_adk::providers::anthropic::AnthropicModel;

const MODEL: &str = "claude-test";

// --- The loopback server ---

#[derive(Clone)]
struct Reply {
    status: u16,
    content_type: &'static str,
    headers: Vec<(&'static str, &'static str)>,
    body: Arc<Vec<u8>>,
}

impl Reply {
    fn stream(body: Vec<u8>) -> Reply {
        Reply {
            status: 200,
            content_type: "text/event-stream",
            headers: Vec::new(),
            body: Arc::new(body),
        }
    }

    fn recorded(file: &str) -> Reply {
        Reply::stream(recorded(file))
    }
}

fn recorded(file: &str) -> Vec<u8> {
    let root = std::env::var_os("REPO_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.."));
    let path = root.join("tests/anthropic/recorded").join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Answers each POST with the next reply (or, with `repeat`, always the same one) and
/// keeps the bodies.
#[derive(Clone)]
struct Server {
    port: u16,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    repeat: Option<Reply>,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Server {
    async fn start(replies: Vec<Reply>, repeat: Option<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = Server {
            port: listener.local_addr().unwrap().port(),
            replies: Arc::new(Mutex::new(replies.into())),
            repeat,
            bodies: Arc::default(),
        };
        let shared = server.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let shared = shared.clone();
                tokio::spawn(async move { shared.serve(stream).await });
            }
        });
        server
    }

    async fn serve(&self, stream: tokio::net::TcpStream) {
        let mut reader = BufReader::new(stream);
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            let mut length = 0;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).await.unwrap_or(0) == 0 {
                    return;
                }
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).await.is_err() {
                return;
            }
            if let Ok(json) = serde_json::from_slice(&body) {
                self.bodies.lock().unwrap().push(json);
            }
            let reply = match &self.repeat {
                Some(reply) => Some(reply.clone()),
                None => self.replies.lock().unwrap().pop_front(),
            };
            let reply = reply.unwrap_or(Reply {
                status: 500,
                content_type: "application/json",
                headers: Vec::new(),
                body: Arc::new(b"{}".to_vec()),
            });
            let mut head = format!(
                "HTTP/1.1 {} X\r\ncontent-type: {}\r\ncontent-length: {}\r\n",
                reply.status,
                reply.content_type,
                reply.body.len()
            );
            for (name, value) in &reply.headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let stream = reader.get_mut();
            if stream.write_all(head.as_bytes()).await.is_err()
                || stream.write_all(&reply.body).await.is_err()
            {
                return;
            }
        }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

// --- genai ---

fn genai_client(server: &Server) -> Client {
    let base = format!("{}/v1/", server.base_url());
    let resolver = ServiceTargetResolver::from_resolver_fn(
        move |target: ServiceTarget| -> Result<ServiceTarget, genai::resolver::Error> {
            Ok(ServiceTarget {
                endpoint: Endpoint::from_owned(base.clone()),
                auth: AuthData::from_single("sk-ant-test"),
                model: ModelIden::new(AdapterKind::Anthropic, target.model.model_name),
            })
        },
    );
    Client::builder()
        .with_service_target_resolver(resolver)
        .build()
}

fn options() -> ChatOptions {
    ChatOptions::default()
        .with_capture_content(true)
        .with_capture_reasoning_content(true)
        .with_capture_tool_calls(true)
        .with_capture_usage(true)
}

/// What genai's stream handed out.
#[derive(Debug, Default)]
struct Streamed {
    text: String,
    reasoning: String,
    signatures: Vec<String>,
    tool_calls: Vec<genai::chat::ToolCall>,
    prompt_tokens: Option<i32>,
    ended: bool,
    error: Option<String>,
    all: String,
}

async fn genai_stream(client: &Client, request: ChatRequest) -> Streamed {
    let mut out = Streamed::default();
    let response = match client
        .exec_chat_stream(MODEL, request, Some(&options()))
        .await
    {
        Ok(response) => response,
        Err(error) => {
            out.error = Some(format!("{error:?}"));
            return out;
        }
    };
    let mut stream = response.stream;
    while let Some(event) = stream.next().await {
        match event {
            Ok(event) => {
                out.all.push_str(&format!("{event:?}\n"));
                match event {
                    ChatStreamEvent::Chunk(chunk) => out.text.push_str(&chunk.content),
                    ChatStreamEvent::ReasoningChunk(chunk) => {
                        out.reasoning.push_str(&chunk.content)
                    }
                    ChatStreamEvent::ThoughtSignatureChunk(chunk) => {
                        out.signatures.push(chunk.content)
                    }
                    ChatStreamEvent::End(end) => {
                        out.ended = true;
                        out.prompt_tokens =
                            end.captured_usage.as_ref().and_then(|u| u.prompt_tokens);
                        if let Some(content) = end.captured_content {
                            out.tool_calls = content.into_tool_calls();
                        }
                    }
                    _ => {}
                }
            }
            Err(error) => {
                out.error = Some(format!("{error:?}"));
                break;
            }
        }
    }
    out
}

/// One finding: what was checked, and what genai does.
fn finding(feature: &str, carried: bool, evidence: &str) {
    println!(
        "{}",
        json!({"peer": "genai", "version": "0.6.5", "workload": "anthropic-findings", "finding": feature, "carried": carried, "evidence": evidence})
    );
}

/// The thinking blocks of a request body's messages.
fn thinking_blocks(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    (messages.iter())
        .filter_map(|m| m["content"].as_array().cloned())
        .flatten()
        .filter(|b| matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
        .collect()
}

async fn findings() {
    // 1. Thinking: streamed, then sent back with its signature (Anthropic answers 400
    //    to a tool loop whose thinking does not come back).
    let server = Server::start(
        vec![
            Reply::recorded("interleaved_1.sse"),
            Reply::recorded("interleaved_2.sse"),
        ],
        None,
    )
    .await;
    let client = genai_client(&server);
    let calculator = Tool::new("calculator")
        .with_schema(json!({"type": "object", "properties": {"expression": {"type": "string"}}}));
    let question =
        ChatRequest::new(vec![ChatMessage::user("150 units at $50?")]).with_tools(vec![calculator]);
    let first = genai_stream(&client, question.clone()).await;
    let signature = "EuYBCkQYAiJAk3Nw1Ls4yYbmZ0eHzVx+interleaved/one==";
    assert_eq!(
        first.signatures,
        [signature],
        "genai streams the signature: {first:?}"
    );
    assert!(first.reasoning.starts_with("The user wants"), "{first:?}");
    assert_eq!(
        first.tool_calls.len(),
        1,
        "input_json_delta assembled: {first:?}"
    );
    finding(
        "input_json_delta (tool arguments as they stream)",
        true,
        "the call's arguments assembled from the deltas",
    );
    // The best a genai user can send back: the reasoning, its signature, the call.
    let call = first.tool_calls[0].clone();
    let turn = MessageContent::from_parts(vec![
        ContentPart::ReasoningContent(first.reasoning.clone()),
        ContentPart::ThoughtSignature(signature.to_owned()),
        ContentPart::ToolCall(call.clone()),
    ]);
    let request = question
        .append_message(ChatMessage::assistant(turn))
        .append_message(ToolResponse::new(call.call_id, "7500"));
    let _ = genai_stream(&client, request).await;
    let sent = &server.bodies()[1];
    assert!(
        thinking_blocks(sent).is_empty(),
        "genai now sends thinking back: {sent}"
    );
    assert!(!sent.to_string().contains(signature));
    finding(
        "thinking blocks with their signature sent back",
        false,
        "the assistant turn is sent as [tool_use] only: the ReasoningContent and ThoughtSignature parts are dropped by the adapter (adapter_shared.rs: `ContentPart::ThoughtSignature(_) => {}`), so Claude with thinking on refuses turn 2",
    );

    // 2. Redacted thinking: its data reaches no event.
    let server = Server::start(vec![Reply::recorded("redacted_thinking.sse")], None).await;
    let streamed = genai_stream(
        &genai_client(&server),
        ChatRequest::new(vec![ChatMessage::user("hi")]),
    )
    .await;
    assert!(streamed.ended && streamed.error.is_none(), "{streamed:?}");
    assert!(
        !streamed.all.contains("EmwKAhgBEgy3va3pzix"),
        "genai now keeps redacted thinking: {}",
        streamed.all
    );
    finding(
        "redacted_thinking",
        false,
        "the block's `data` reaches no event (`unhandled content type: redacted_thinking`), so it cannot go back",
    );

    // 3. Thinking between the calls of one reply: its place.
    finding(
        "interleaved thinking (order of blocks)",
        false,
        "nothing of the thinking goes back (finding 1), so neither does its place between tool_use blocks",
    );

    // 4. An `overloaded_error` event in the stream.
    let server = Server::start(vec![Reply::recorded("overloaded.sse")], None).await;
    let streamed = genai_stream(
        &genai_client(&server),
        ChatRequest::new(vec![ChatMessage::user("hi")]),
    )
    .await;
    assert!(
        streamed.error.is_none(),
        "genai now fails on an error event: {streamed:?}"
    );
    assert_eq!(streamed.text, "Hello");
    assert!(!streamed.ended);
    finding(
        "overloaded_error event as a typed retryable error",
        false,
        "the event is logged as an unknown message type and skipped: the stream ends after \"Hello\" with no error and no End event",
    );

    // 5. A 529 answer with retry-after.
    let mut overloaded = Reply::stream(recorded("overloaded_529.json"));
    overloaded.status = 529;
    overloaded.content_type = "application/json";
    overloaded.headers = vec![("retry-after", "3")];
    let server = Server::start(vec![overloaded], None).await;
    let streamed = genai_stream(
        &genai_client(&server),
        ChatRequest::new(vec![ChatMessage::user("hi")]),
    )
    .await;
    let error = streamed.error.clone().unwrap_or_default();
    assert!(error.contains("529"), "{streamed:?}");
    assert!(
        !error.to_lowercase().contains("retry-after"),
        "genai now keeps the wait: {error}"
    );
    finding(
        "529 / 429 as typed retryable errors with retry-after",
        false,
        "genai::Error::WebStream, the status only in its text `cause` (\"HTTP error. Status: 529 ...\"): no overloaded or rate-limited kind, nothing retryable to test, the retry-after header not kept",
    );

    // 6. Usage: message_delta's counts are cumulative (Anthropic's streaming guide).
    let server = Server::start(vec![Reply::recorded("cumulative_usage.sse")], None).await;
    let streamed = genai_stream(
        &genai_client(&server),
        ChatRequest::new(vec![ChatMessage::user("hi")]),
    )
    .await;
    assert_eq!(streamed.prompt_tokens, Some(2679 + 10682), "{streamed:?}");
    finding(
        "usage with cache reads and writes",
        false,
        "cache reads and writes are carried, but message_delta's cumulative input_tokens are added to message_start's: 13361 prompt tokens for the published stream's 10682",
    );

    // 7. Images and PDFs, cache_control.
    let server = Server::start(vec![Reply::recorded("basic.sse")], None).await;
    let parts = MessageContent::from_parts(vec![
        ContentPart::from_text("What are these?"),
        ContentPart::Binary(Binary::from_base64("image/png", "iVBORw0KGgo=", None)),
        ContentPart::Binary(Binary::from_url(
            "image/jpeg",
            "https://example.com/cat.jpg",
            None,
        )),
        ContentPart::Binary(Binary::from_base64("application/pdf", "JVBERi0=", None)),
    ]);
    let message = ChatMessage::user(parts).with_options(genai::chat::CacheControl::Ephemeral);
    let _ = genai_stream(&genai_client(&server), ChatRequest::new(vec![message])).await;
    let sent = server.bodies()[0]["messages"][0]["content"].clone();
    let kinds: Vec<_> = sent
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].clone())
        .collect();
    assert_eq!(
        kinds,
        [json!("text"), json!("image"), json!("document")],
        "{sent}"
    );
    assert!(!sent.to_string().contains("cat.jpg"));
    assert!(sent.to_string().contains("cache_control"));
    finding(
        "images and PDFs",
        false,
        "base64 images and PDFs become image and document blocks, but an image URL is dropped (`Anthropic doesn't support images from URL`); a tool result is text only (ToolResponse.content: String), so a tool's image cannot reach Claude",
    );
    finding(
        "cache_control",
        true,
        "message-level cache_control (CacheControl::Ephemeral) lands on the message's last block",
    );
}

// --- Cost per event ---

/// A stream of `n` text deltas in Anthropic's grammar (the shape of benches/sse_anthropic.rs).
fn long_stream(n: usize) -> Vec<u8> {
    let words = [
        " The", " weather", " in", " Zürich", " is", " 21", "°C", " and", " sunny", ".",
    ];
    let mut body = String::new();
    let mut event =
        |name: &str, data: String| body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    event("message_start", r#"{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":87,"output_tokens":1}}}"#.into());
    event(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
            .into(),
    );
    for i in 0..n {
        let word = words[i % words.len()];
        event(
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{word}"}}}}"#
            ),
        );
    }
    event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.into(),
    );
    event("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":412}}"#.into());
    event("message_stop", r#"{"type":"message_stop"}"#.into());
    body.into_bytes()
}

#[inline(never)]
async fn drain_genai(client: &Client) -> usize {
    let request = ChatRequest::new(vec![ChatMessage::user("go")]);
    let response = client
        .exec_chat_stream(MODEL, request, Some(&options()))
        .await
        .unwrap();
    let mut stream = response.stream;
    let mut text = 0;
    while let Some(event) = stream.next().await {
        if let ChatStreamEvent::Chunk(chunk) = event.unwrap() {
            text += chunk.content.len();
        }
    }
    text
}

#[inline(never)]
async fn drain_ours(model: &AnthropicModel) -> usize {
    let request = ModelRequest::new(vec![Message::user("go")].into());
    let response = model.clone().oneshot(request).await.unwrap();
    let mut stream = response.into_stream();
    let mut text = 0;
    while let Some(delta) = stream.next().await {
        if let ModelDelta::Text(chunk) = delta.unwrap() {
            text += chunk.len();
        }
    }
    text
}

/// The median time of `samples` runs of `f`, after one warm-up run.
async fn median<F, Fut>(samples: usize, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    f().await;
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let start = Instant::now();
        std::hint::black_box(f().await);
        times.push(start.elapsed());
    }
    times.sort();
    times[samples / 2]
}

async fn cost() {
    const EVENTS: usize = 20_000;
    let body = long_stream(EVENTS);
    let server = Server::start(Vec::new(), Some(Reply::stream(body))).await;
    let client = genai_client(&server);
    let ours = AnthropicModel::builder()
        .base_url(server.base_url())
        .api_key("sk-ant-test")
        .model(MODEL)
        .build()
        .unwrap();
    assert_eq!(
        drain_genai(&client).await,
        drain_ours(&ours).await,
        "the same text"
    );
    let samples = 15;
    // Alternate the two, so that the machine's other load falls on both.
    let mut genai_times = Vec::new();
    let mut our_times = Vec::new();
    for _ in 0..3 {
        genai_times.push(median(samples, || drain_genai(&client)).await);
        our_times.push(median(samples, || drain_ours(&ours)).await);
    }
    genai_times.sort();
    our_times.sort();
    let per = |d: Duration| d.as_nanos() as f64 / EVENTS as f64;
    let (genai_ns, ours_ns) = (per(genai_times[1]), per(our_times[1]));
    for (peer, version, ns) in [
        ("genai", "0.6.5", genai_ns),
        ("tower-adk", "this checkout", ours_ns),
    ] {
        println!(
            "{}",
            json!({"peer": peer, "version": version, "workload": "anthropic-stream", "events": EVENTS,
                   "ns_per_event": (ns * 10.0).round() / 10.0, "ratio_to_tower_adk": ((ns / ours_ns) * 100.0).round() / 100.0})
        );
    }
}

/// Drains the stream `RUNS` times with one client, untimed: for callgrind, which counts
/// the instructions of `drain_genai` or `drain_ours` (see `run`).
async fn count(which: &str) {
    const EVENTS: usize = 20_000;
    const RUNS: usize = 5;
    let server = Server::start(Vec::new(), Some(Reply::stream(long_stream(EVENTS)))).await;
    let client = genai_client(&server);
    let ours = AnthropicModel::builder()
        .base_url(server.base_url())
        .model(MODEL)
        .build()
        .unwrap();
    for _ in 0..RUNS {
        match which {
            "genai" => std::hint::black_box(drain_genai(&client).await),
            _ => std::hint::black_box(drain_ours(&ours).await),
        };
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_default();
    match what.as_str() {
        "count" => return count(&args.next().unwrap_or_default()).await,
        "cost" => {}
        _ => findings().await,
    }
    if what != "findings" {
        cost().await;
    }
}
