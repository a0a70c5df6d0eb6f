//! The A2A face (features `a2a` and `server`), driven through a real socket by the
//! official A2A SDK's client (`a2a-sdk` 1.3.0, A2A v1.0, from Python: `clients/
//! a2a_client.py`): the card through its resolver, a blocking and a streamed message,
//! an approval that crosses the boundary (input required, then resumed), a rejection,
//! a cancel of a slow run, another principal's task; and hostile JSON-RPC with reqwest.
//!
//! `scripts/setup-a2a-clients` installs the client first (the venv is looked for in
//! `$A2A_CLIENTS_VENV`, by default `target/test-servers/a2a-clients`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hostile;
mod js;
mod sdk;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tower_adk::auth::{Access, Action};
use tower_adk::interrupt::Interrupt;
use tower_adk::server::a2a::A2a;
use tower_adk::server::{BearerTokens, ServedAgent, Server};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool, sleep_tool};
use tower_adk::{Agent, BoxError, Tool, ToolInfo, ToolOutput, ToolRequest};

/// The tokens of the two callers.
const ALICE: &str = "alice-token";
const BOB: &str = "bob-token";
/// A manager, who may decide on anyone's pending calls at the `vault`.
const MARIA: &str = "maria-token";

#[derive(Debug, Clone)]
struct User;

/// How many times a tool ran.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>);

impl Counter {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A tool that asks before it pays, and pays once approved.
fn asking_tool(paid: &Counter) -> Tool {
    let paid = paid.clone();
    let info = ToolInfo::new("pay", "Pays someone");
    Tool::from_fn(info, move |request: ToolRequest| {
        let paid = paid.clone();
        async move {
            if request.decision().is_none() {
                let payload =
                    json!({"description": "Pay Bob 5?", "allowed": ["approve", "reject"]});
                return Err(Interrupt::new(payload).into());
            }
            paid.0.fetch_add(1, Ordering::SeqCst);
            Ok::<_, BoxError>(ToolOutput::new("paid"))
        }
    })
}

/// The agents: `weather` (calls a tool, then streams "It is sunny."), `bank` (asks
/// before it pays), `slow` (a tool that takes an hour), `vault` (asks before it pays; a
/// manager, `maria`, may decide on anyone's payment).
struct Agents {
    weather: Agent,
    slow: Agent,
    paid: Counter,
    server: Server,
}

fn agents() -> Agents {
    let weather = Agent::builder(ScriptedModel::per_run([
        Turn::call("c1", "weather", json!({"city": "Oslo"})),
        Turn::stream(["It is ", "sunny."]),
    ]))
    .tool(chunk_tool("weather", &["sun", "ny"], Duration::ZERO))
    .build()
    .unwrap();
    let paid = Counter::default();
    let bank = Agent::builder(ScriptedModel::per_run([
        Turn::call("c1", "pay", json!({"to": "Bob"})),
        Turn::text("Done."),
    ]))
    .name("bank")
    .tool(asking_tool(&paid))
    .build()
    .unwrap();
    let slow = Agent::builder(ScriptedModel::per_run([
        Turn::call("c1", "wait", json!({})),
        Turn::text("Finally."),
    ]))
    .tool(sleep_tool("wait", Duration::from_secs(3600), "waited"))
    .build()
    .unwrap();
    let vault = Agent::builder(ScriptedModel::per_run([
        Turn::call("c1", "pay", json!({"to": "Bob"})),
        Turn::text("Done."),
    ]))
    .name("vault")
    .tool(asking_tool(&paid))
    .authorize(|access: &Access<'_>| {
        let manager = access.caller.subject() == "maria";
        access.is_owner() || (manager && access.action == Action::Decide)
    })
    .build()
    .unwrap();
    let tokens = BearerTokens::new()
        .token_of("alice", ALICE, User)
        .token_of("bob", BOB, User)
        .token_of("maria", MARIA, User);
    let server = Server::new()
        .agent(
            "weather",
            ServedAgent::new(weather.clone()).description("Forecasts the weather"),
        )
        .agent("bank", bank)
        .agent("slow", slow.clone())
        .agent("vault", vault)
        .identify(tokens)
        .a2a(A2a::new().root("weather").version("2.0.0"));
    Agents {
        weather,
        slow,
        paid,
        server,
    }
}

/// A server on a free port of 127.0.0.1, stopped when dropped.
struct TestServer {
    base: String,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    async fn start(server: Server) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            server.serve(listener).await.unwrap();
        });
        TestServer { base, task }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Where the SDK's venv was installed: `$A2A_CLIENTS_VENV`, else
/// `target/test-servers/a2a-clients`.
fn venv() -> PathBuf {
    match std::env::var_os("A2A_CLIENTS_VENV") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/a2a-clients"),
    }
}

/// Runs a scenario of `clients/a2a_client.py` with the venv's python; its JSON, or a
/// panic with its output if it fails.
async fn python(args: &[&str]) -> serde_json::Value {
    let python = venv().join("bin/python");
    assert!(
        python.exists(),
        "{} not found: run scripts/setup-a2a-clients (or set A2A_CLIENTS_VENV)",
        python.display()
    );
    let mut command = std::process::Command::new(python);
    command.arg(client_script("a2a_client.py")).args(args);
    output_of(command).await
}

fn client_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/a2a_server/clients")
        .join(name)
}

/// Runs a client; the JSON it printed, or a panic with its output if it fails.
async fn output_of(mut command: std::process::Command) -> serde_json::Value {
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the client failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}
