//! Graceful shutdown: a drain refuses new runs and flips readiness, lets the runs in
//! flight finish within its deadline, and cancels the rest, a durable one leaving a
//! checkpoint that another server resumes.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use serde_json::{Value, json};
use tower_adk::server::{Drained, Server, Shutdown};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, BoxError, Tool, ToolInfo, ToolOutput};

use super::{Counter, SseReader, TestServer};

/// A server on a free port of 127.0.0.1 that shuts down gracefully on its [`Shutdown`].
struct Draining {
    base: String,
    shutdown: Shutdown,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Draining {
    async fn start(server: Server) -> Self {
        let shutdown = server.shutdown_handle();
        let router: Router = server.into_router();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let signal = shutdown.signal();
        let serving = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(signal)
                .await
        });
        Draining {
            base,
            shutdown,
            serving,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Starts a drain on a task of its own.
    fn drain(&self, deadline: Duration) -> tokio::task::JoinHandle<Drained> {
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move { shutdown.drain(deadline).await })
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = reqwest::Client::new()
            .post(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.json().await.unwrap())
    }

    async fn stream(&self, body: Value) -> SseReader {
        let response = reqwest::Client::new()
            .post(self.url("/agents/a/runs"))
            .header("accept", "text/event-stream")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        SseReader::new(response)
    }

    /// Waits (a hang guard, not a timing assertion) until `/readyz` answers 503.
    async fn not_ready(&self) -> Value {
        hang_guard(async {
            loop {
                let response = reqwest::get(self.url("/readyz")).await.unwrap();
                if response.status() == 503 {
                    return response.json().await.unwrap();
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
    }

    /// Waits until the server stopped serving.
    async fn stopped(self) {
        hang_guard(self.serving).await.unwrap().unwrap();
    }
}

async fn hang_guard<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), future)
        .await
        .expect("hang guard")
}

/// A tool that waits for the gate to open, counting its calls.
fn gated_tool(gate: &Arc<tokio::sync::Semaphore>, calls: &Counter) -> Tool {
    let (gate, calls) = (Arc::clone(gate), calls.clone());
    Tool::from_fn(ToolInfo::new("wait", "Waits"), move |_| {
        let (gate, calls) = (Arc::clone(&gate), calls.clone());
        async move {
            calls.bump();
            let _permit = gate.acquire().await?;
            Ok::<_, BoxError>(ToolOutput::new("opened"))
        }
    })
}

/// A tool that hangs on its first call and answers the next ones.
fn hangs_once_tool(calls: &Counter) -> Tool {
    let calls = calls.clone();
    Tool::from_fn(ToolInfo::new("wait", "Waits"), move |_| {
        let calls = calls.clone();
        async move {
            calls.bump();
            if calls.get() == 1 {
                std::future::pending::<()>().await;
            }
            Ok::<_, BoxError>(ToolOutput::new("opened"))
        }
    })
}

fn waiting_model() -> ScriptedModel {
    ScriptedModel::per_run([Turn::call("c1", "wait", json!({})), Turn::text("Done.")])
}

async fn wait_for_calls(calls: &Counter, n: usize) {
    hang_guard(async {
        while calls.get() < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn a_drain_refuses_new_runs_and_lets_a_run_in_flight_finish_within_its_deadline() {
    let (gate, calls) = (Arc::new(tokio::sync::Semaphore::new(0)), Counter::default());
    let agent = Agent::builder(waiting_model())
        .tool(gated_tool(&gate, &calls))
        .build()
        .unwrap();
    let server = Draining::start(Server::new().agent("a", agent)).await;
    assert_eq!(
        reqwest::get(server.url("/readyz")).await.unwrap().status(),
        200
    );
    let mut events = server.stream(json!({"input": "go"})).await;
    while events.next().await.unwrap().event != "tool_call_started" {}

    let drain = server.drain(Duration::from_secs(600));
    let ready = server.not_ready().await;
    let (status, refused) = server.post("/agents/a/runs", json!({"input": "new"})).await;
    let (openai_status, openai) = server
        .post(
            "/v1/chat/completions",
            json!({"model": "a", "messages": [{"role": "user", "content": "new"}]}),
        )
        .await;
    let (agui_status, agui) = server
        .post(
            "/agents/a/agui",
            json!({"threadId": "t", "runId": "r", "messages": []}),
        )
        .await;
    gate.add_permits(1);
    let rest = events.all().await;
    let drained = hang_guard(drain).await.unwrap();

    assert_eq!(ready["error"]["code"], "shutting_down");
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (503, Some("shutting_down"))
    );
    assert_eq!(
        (openai_status, openai["error"]["code"].as_str()),
        (503, Some("shutting_down"))
    );
    assert_eq!(
        (agui_status, agui["error"]["code"].as_str()),
        (503, Some("shutting_down"))
    );
    let last = rest.last().unwrap();
    assert_eq!(last.event, "completed");
    assert_eq!(last.data["final_message"]["content"], "Done.");
    assert_eq!((drained.in_flight, drained.cancelled), (1, 0));
    assert_eq!(drained.unfinished, 0);
    assert_eq!(calls.get(), 1); // the refused runs started nothing
    server.stopped().await;
}

#[tokio::test]
async fn at_the_deadline_a_durable_run_is_cancelled_and_another_server_resumes_its_checkpoint() {
    let calls = Counter::default();
    let agent = Agent::builder(waiting_model())
        .name("a")
        .tool(hangs_once_tool(&calls))
        .durable(true)
        .build()
        .unwrap();
    let server = Draining::start(Server::new().agent("a", agent.clone())).await;
    let mut events = server.stream(json!({"input": "go"})).await;
    while events.next().await.unwrap().event != "tool_call_started" {}

    let drained = hang_guard(server.drain(Duration::from_millis(50)))
        .await
        .unwrap();
    let rest = events.all().await;
    server.stopped().await;

    assert_eq!(
        (drained.in_flight, drained.cancelled, drained.unfinished),
        (1, 1, 0)
    );
    let last = rest.last().unwrap();
    assert_eq!(last.event, "error");
    assert_eq!(last.data["code"], "cancelled");
    let checkpoint = last.data["checkpoint"].as_str().unwrap().to_owned();
    let thread = checkpoint.split('@').next().unwrap().to_owned();

    // Later, another server with the same agent (and so the same store).
    let later = TestServer::start(Server::new().agent("a", agent).into_router()).await;
    let recorded: Value = reqwest::get(later.url(&format!("/agents/a/threads/{thread}")))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (status, resumed) = later
        .run("a", json!({"resume": {"checkpoint": checkpoint}}))
        .await;

    assert_eq!(recorded["status"], "failed");
    assert_eq!(recorded["checkpoint"], checkpoint.as_str());
    assert_eq!(
        (status, resumed["status"].as_str()),
        (200, Some("completed"))
    );
    assert_eq!(resumed["final_message"]["content"], "Done.");
    assert_eq!(resumed["tool_records"][0]["content"], "opened");
    assert_eq!(calls.get(), 2);
}

#[tokio::test]
async fn at_the_deadline_runs_without_a_thread_end_with_cancelled_on_every_route() {
    let calls = Counter::default();
    let hangs = Tool::from_fn(ToolInfo::new("wait", "Waits"), {
        let calls = calls.clone();
        move |_| {
            calls.bump();
            std::future::pending::<Result<ToolOutput, BoxError>>()
        }
    });
    let agent = Agent::builder(waiting_model()).tool(hangs).build().unwrap();
    let server = Arc::new(Draining::start(Server::new().agent("a", agent)).await);
    let json_run = tokio::spawn({
        let server = Arc::clone(&server);
        async move { server.post("/agents/a/runs", json!({"input": "go"})).await }
    });
    let agui = reqwest::Client::new()
        .post(server.url("/agents/a/agui"))
        .json(&json!({"threadId": "t", "runId": "r", "messages": [{"id": "m1", "role": "user", "content": "go"}]}))
        .send()
        .await
        .unwrap();
    wait_for_calls(&calls, 2).await;

    let drained = hang_guard(server.drain(Duration::from_millis(50)))
        .await
        .unwrap();
    let (status, body) = hang_guard(json_run).await.unwrap();
    let agui = agui.text().await.unwrap();

    assert_eq!((drained.in_flight, drained.cancelled), (2, 2));
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (503, Some("cancelled"))
    );
    assert!(body["error"].get("checkpoint").is_none(), "{body}");
    let last: Value = serde_json::from_str(
        agui.lines()
            .rev()
            .find_map(|line| line.strip_prefix("data: "))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (last["type"].as_str(), last["code"].as_str()),
        (Some("RUN_ERROR"), Some("cancelled"))
    );
    Arc::into_inner(server).unwrap().stopped().await;
}
