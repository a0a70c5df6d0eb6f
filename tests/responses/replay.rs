//! A local HTTP server that answers `POST /v1/responses` with recorded replies, one per
//! request in order, byte for byte, and keeps the bodies it received.

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One canned answer.
#[derive(Debug, Clone)]
pub(crate) enum Canned {
    /// A file of `recorded/`: `.sse` as `text/event-stream`, `.json` as JSON.
    File(&'static str),
    /// An error status with a JSON error body, as OpenAI sends it.
    Status(u16, &'static str),
}

#[derive(Default)]
struct Log {
    next: usize,
    bodies: Vec<Bytes>,
}

#[derive(Clone)]
struct Replies {
    canned: Arc<[Canned]>,
    log: Arc<Mutex<Log>>,
}

/// The server; stopped when dropped.
pub(crate) struct Replay {
    port: u16,
    log: Arc<Mutex<Log>>,
    task: JoinHandle<()>,
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Replay {
    /// Serves `canned` in order on a free port of 127.0.0.1; past the last, 500.
    pub(crate) async fn start(canned: impl Into<Vec<Canned>>) -> Replay {
        let log = Arc::new(Mutex::new(Log::default()));
        let replies = Replies {
            canned: canned.into().into(),
            log: Arc::clone(&log),
        };
        let app = Router::new()
            .route("/v1/responses", post(answer))
            .with_state(replies);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Replay { port, log, task }
    }

    /// The base URL of its API.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The bodies received, as sent, oldest first.
    pub(crate) fn raw_bodies(&self) -> Vec<Bytes> {
        self.log.lock().unwrap().bodies.clone()
    }

    /// The bodies received, as JSON.
    pub(crate) fn bodies(&self) -> Vec<Value> {
        let raw = self.raw_bodies();
        raw.iter()
            .map(|body| serde_json::from_slice(body).unwrap())
            .collect()
    }
}

/// The bytes of a recorded file.
pub(crate) fn recorded(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/responses/recorded")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

async fn answer(State(replies): State<Replies>, body: Bytes) -> Response {
    let canned = {
        let mut log = replies.log.lock().unwrap();
        log.bodies.push(body);
        log.next += 1;
        replies.canned.get(log.next - 1).cloned()
    };
    match canned {
        Some(Canned::File(name)) => {
            let kind = if name.ends_with(".sse") {
                "text/event-stream"
            } else {
                "application/json"
            };
            ([(header::CONTENT_TYPE, kind)], recorded(name)).into_response()
        }
        Some(Canned::Status(status, message)) => {
            let status = StatusCode::from_u16(status).unwrap();
            let body = serde_json::json!({"error": {"message": message, "type": "server_error", "param": null, "code": null}});
            (
                status,
                [(header::CONTENT_TYPE, "application/json")],
                body.to_string(),
            )
                .into_response()
        }
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "no more recorded replies",
        )
            .into_response(),
    }
}
