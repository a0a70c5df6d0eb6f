//! Agents served over HTTP, through a real socket with real clients (reqwest, curl):
//! JSON and streamed runs, interrupts resumed over HTTP, threads, identity and role
//! filters end to end, error codes, replay with `Last-Event-ID`, and disconnects that
//! cancel their run; the OpenAI-compatible and AG-UI routes through the `openai` package
//! and the AG-UI SDK (`protocols`); stock tower-http layers around the router (`layers`);
//! graceful shutdown (`shutdown`); the chat page in a headless Chromium (`browser`);
//! limits per principal (`limits`) and hostile input, slow clients included (`hostile`);
//! a run's usage and cost on every route (`usage`); `GET /metrics` checked by promtool
//! (`metrics`, with the `prometheus` feature).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod browser;
mod errors;
mod hostile;
mod identity;
mod layers;
mod limits;
#[cfg(feature = "prometheus")]
mod metrics;
mod owners;
mod protocols;
mod replay;
mod runs;
mod shutdown;
mod threads;
mod usage;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use futures::StreamExt;
use serde_json::{Value, json};
use tower_adk::interrupt::Interrupt;
use tower_adk::{BoxError, Tool, ToolInfo, ToolOutput, ToolRequest};

/// A server on a free port of 127.0.0.1, stopped when dropped.
struct TestServer {
    base: String,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    async fn start(router: Router) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        TestServer { base, task }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Posts a run body and reads the JSON answer with its status.
    async fn run(&self, agent: &str, body: Value) -> (u16, Value) {
        let response = reqwest::Client::new()
            .post(self.url(&format!("/agents/{agent}/runs")))
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.json().await.unwrap())
    }

    /// Posts a run body asking for SSE.
    async fn stream(&self, agent: &str, body: Value) -> reqwest::Response {
        reqwest::Client::new()
            .post(self.url(&format!("/agents/{agent}/runs")))
            .header("accept", "text/event-stream")
            .json(&body)
            .send()
            .await
            .unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One server-sent event.
#[derive(Debug, Clone)]
struct Sse {
    event: String,
    id: u64,
    data: Value,
}

/// Reads server-sent events from a response as they come.
struct SseReader {
    body: futures::stream::BoxStream<'static, reqwest::Result<axum::body::Bytes>>,
    buffer: String,
}

impl SseReader {
    fn new(response: reqwest::Response) -> Self {
        SseReader {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// The next event, or `None` at the end of the body.
    async fn next(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(event) = parse(&block) {
                    return Some(event);
                }
                continue;
            }
            let chunk = self.body.next().await?.ok()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// Every remaining event.
    async fn all(mut self) -> Vec<Sse> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event);
        }
        events
    }
}

/// An event block; `None` for a comment (a keep-alive).
fn parse(block: &str) -> Option<Sse> {
    let (mut event, mut id, mut data) = (None, None, String::new());
    for line in block.lines() {
        if let Some(value) = line.strip_prefix("event:") {
            event = Some(value.trim().to_owned());
        } else if let Some(value) = line.strip_prefix("id:") {
            id = value.trim().parse().ok();
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push_str(value.trim_start());
        }
    }
    Some(Sse {
        event: event?,
        id: id?,
        data: serde_json::from_str(&data).unwrap(),
    })
}

/// How many times each tool ran, and how many of its calls were dropped unfinished.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>);

impl Counter {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// `track`: streams "packed, ", waits for a permit of `gate`, then streams the rest.
fn track_behind(gate: &Arc<tokio::sync::Semaphore>) -> Tool {
    use futures::stream::{iter, once};

    let gate = Arc::clone(gate);
    Tool::stream_fn(ToolInfo::new("track", "Tracks an order"), move |_| {
        let gate = Arc::clone(&gate);
        let opened = once(async move { gate.acquire().await.unwrap().forget() });
        let rest = opened.flat_map(|()| iter(["shipped, ", "in transit"]));
        let chunks = iter(["packed, "]).chain(rest);
        chunks.map(|chunk| Ok::<_, std::convert::Infallible>(chunk.to_owned()))
    })
}

/// A tool that asks a person before it pays, and pays once approved.
fn asking_tool(runs: &Counter) -> Tool {
    let runs = runs.clone();
    Tool::from_fn(ToolInfo::new("pay", "Pays"), move |request: ToolRequest| {
        let runs = runs.clone();
        async move {
            if request.decision().is_none() {
                return Err(Interrupt::new(json!({"question": "Pay?"})).into());
            }
            runs.bump();
            Ok::<_, BoxError>(ToolOutput::new("paid"))
        }
    })
}
