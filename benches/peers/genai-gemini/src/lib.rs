//! What the evaluation of genai's Gemini adapter shares: a local HTTP server that answers
//! each request with the next reply (recorded files of `tests/gemini/recorded`, served
//! byte for byte) and keeps the request bodies, and clients of both libraries pointed at it.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use genai::adapter::AdapterKind;
use genai::resolver::{AuthData, Endpoint, ServiceTargetResolver};
use genai::{ModelIden, ServiceTarget};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One reply: status, content type, body.
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Arc<Vec<u8>>,
}

impl Reply {
    /// A file of `tests/gemini/recorded`, `.sse` as an event stream.
    pub fn recorded(name: &str, status: u16) -> Self {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../tests/gemini/recorded")
            .join(name);
        let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let content_type = if name.ends_with(".sse") {
            "text/event-stream"
        } else {
            "application/json"
        };
        Reply { status, content_type, body: Arc::new(body) }
    }

    pub fn stream(body: Vec<u8>) -> Self {
        Reply { status: 200, content_type: "text/event-stream", body: Arc::new(body) }
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    /// Served again and again once `replies` is empty (the benchmark's one stream).
    repeat: Option<Reply>,
    bodies: Vec<Value>,
}

/// A server on a free port of 127.0.0.1.
pub struct Server {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl Server {
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self::with(replies.into_iter().collect(), None).await
    }

    /// A server that answers every request with `reply`.
    pub async fn repeating(reply: Reply) -> Self {
        Self::with(VecDeque::new(), Some(reply)).await
    }

    async fn with(replies: VecDeque<Reply>, repeat: Option<Reply>) -> Self {
        let state = Arc::new(Mutex::new(State { replies, repeat, bodies: Vec::new() }));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::clone(&state);
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                let state = Arc::clone(&shared);
                tokio::spawn(async move {
                    let body = read_request(&mut socket).await;
                    let reply = {
                        let mut state = state.lock().unwrap();
                        state.bodies.push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                        state.replies.pop_front().or_else(|| state.repeat.clone())
                    };
                    let reply = reply.unwrap_or(Reply {
                        status: 500,
                        content_type: "text/plain",
                        body: Arc::new(b"no reply left".to_vec()),
                    });
                    let head = format!(
                        "HTTP/1.1 {} X\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        reply.status,
                        reply.content_type,
                        reply.body.len()
                    );
                    socket.write_all(head.as_bytes()).await.unwrap();
                    socket.write_all(&reply.body).await.unwrap();
                    socket.shutdown().await.ok();
                });
            }
        });
        Server { url, state }
    }

    /// The JSON bodies received so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.state.lock().unwrap().bodies.clone()
    }
}

/// Reads one request (head and `content-length` body) and returns its body.
async fn read_request(socket: &mut tokio::net::TcpStream) -> Vec<u8> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let read = socket.read(&mut chunk).await.unwrap();
        if read == 0 {
            return Vec::new();
        }
        buffer.extend_from_slice(&chunk[..read]);
        let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse().unwrap());
        while buffer.len() < end + 4 + length {
            let read = socket.read(&mut chunk).await.unwrap();
            buffer.extend_from_slice(&chunk[..read]);
        }
        return buffer[end + 4..end + 4 + length].to_vec();
    }
}

/// A genai client whose Gemini adapter talks to `url` (as `{url}/v1beta/`).
pub fn genai_client(url: &str) -> genai::Client {
    let endpoint = format!("{url}/v1beta/");
    let resolver = ServiceTargetResolver::from_resolver_fn(
        move |target: ServiceTarget| -> Result<ServiceTarget, genai::resolver::Error> {
            Ok(ServiceTarget {
                endpoint: Endpoint::from_owned(endpoint.clone()),
                auth: AuthData::from_single("test-key"),
                model: ModelIden::new(AdapterKind::Gemini, target.model.model_name),
            })
        },
    );
    genai::Client::builder()
        .with_service_target_resolver(resolver)
        .build()
        .unwrap()
}

/// Our model on `url`.
pub fn our_model(url: &str) -> tower_adk::providers::gemini::GeminiModel {
    tower_adk::providers::gemini::GeminiModel::builder()
        .base_url(url)
        .api_key("test-key")
        .model("gemini-2.5-flash")
        .build()
        .unwrap()
}
