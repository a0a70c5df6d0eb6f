//! A local HTTP server that answers each request with the next recorded reply, byte for
//! byte, and keeps what it was sent: the path, the API key header and the JSON body.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;

/// One reply: a status, a content type and the bytes of a file under `recorded/`.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
}

impl Reply {
    /// A recorded file, served as it is: `.sse` as an event stream, `.json` as JSON,
    /// with `status`.
    pub(crate) fn file(name: &str, status: u16) -> Self {
        let path = recorded(name);
        let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let content_type = if name.ends_with(".sse") {
            "text/event-stream"
        } else {
            "application/json; charset=UTF-8"
        };
        Reply {
            status,
            content_type,
            body,
        }
    }

    /// A recorded stream, 200.
    pub(crate) fn stream(name: &str) -> Self {
        Reply::file(name, 200)
    }

    /// Bytes given here (for the OpenAI reply of the fallback test, and made-up edge
    /// cases).
    pub(crate) fn bytes(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status,
            content_type,
            body: body.into(),
        }
    }
}

/// The path of a file under `tests/gemini/recorded`.
pub(crate) fn recorded(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/gemini/recorded")
        .join(name)
}

/// What the server was sent.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) path: String,
    pub(crate) api_key: Option<String>,
    pub(crate) body: Value,
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Request>,
}

/// The running server; it stops when dropped (its task is aborted).
pub(crate) struct Replay {
    url: String,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Replay {
    /// Starts a server on a free port of 127.0.0.1 that serves `replies` in order (and
    /// 500 once they are used up).
    pub(crate) async fn start(replies: impl IntoIterator<Item = Reply>) -> Self {
        let state = Arc::new(Mutex::new(State {
            replies: replies.into_iter().collect(),
            requests: Vec::new(),
        }));
        let shared = Arc::clone(&state);
        let app = Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let state = Arc::clone(&shared);
            async move { answer(&state, &uri, &headers, &body) }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Replay { url, state, task }
    }

    /// The base URL, for `GeminiModelBuilder::base_url`.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// What the server was sent so far, in order.
    pub(crate) fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn answer(state: &Mutex<State>, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Response {
    let mut state = state.lock().unwrap();
    state.requests.push(Request {
        path: uri.to_string(),
        api_key: (headers.get("x-goog-api-key")).map(|v| v.to_str().unwrap_or_default().to_owned()),
        body: serde_json::from_slice(body).unwrap_or(Value::Null),
    });
    let reply = state
        .replies
        .pop_front()
        .unwrap_or_else(|| Reply::bytes(500, "text/plain", "the replay server has no reply left"));
    Response::builder()
        .status(StatusCode::from_u16(reply.status).unwrap())
        .header("content-type", reply.content_type)
        .body(Body::from(reply.body))
        .unwrap()
}
