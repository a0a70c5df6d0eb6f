//! The real MCP clients (scripts/setup-mcp-clients), our face served in this process
//! over HTTP on a free loopback port, and `adk mcp` for stdio.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tower_adk::handlers::{ApprovalRule, HumanApproval};
use tower_adk::mcp_server::McpFace;
use tower_adk::server::{BearerTokens, ServedAgent};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool, text_tool};
use tower_adk::{Agent, HandlerLayer, Tool, ToolInfo, ToolOutput};

/// How long a client may take before the test calls it hung (a slow, shared machine).
pub(crate) const PATIENCE: Duration = Duration::from_secs(120);

pub(crate) const CLERK: &str = "clerk-token";
pub(crate) const GUEST: &str = "guest-token";

/// The caller's role, from its bearer token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Role {
    Clerk,
    Guest,
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn installed(variable: &str, default: &str, what: &str) -> PathBuf {
    let path = std::env::var_os(variable).map_or_else(|| repo(default), PathBuf::from);
    assert!(
        path.exists(),
        "{what} is not installed at {}: run scripts/setup-mcp-clients",
        path.display()
    );
    path
}

/// The Python SDK's client driver: `client.py ARGS` in the setup script's venv.
pub(crate) fn python_client(args: &[&str]) -> Vec<Value> {
    let venv = installed(
        "MCP_CLIENTS_VENV",
        "target/test-servers/mcp-clients/venv",
        "the Python MCP client",
    );
    let mut command = Command::new(venv.join("bin/python"));
    command
        .arg(repo("tests/mcp_server/clients/client.py"))
        .args(args);
    let output = finished(command);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the Python client failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The MCP Inspector's CLI: `index.js ARGS`, whose JSON output is returned (or, when it
/// fails, its output as a string, for the test to read).
pub(crate) fn inspector(args: &[&str]) -> Result<Value, String> {
    let dir = installed(
        "MCP_INSPECTOR_DIR",
        "target/test-servers/mcp-clients/inspector",
        "the MCP Inspector CLI",
    );
    let build = dir.join("node_modules/@modelcontextprotocol/inspector-cli/build");
    let mut command = Command::new("node");
    // inspector-cli 1.0.3 finds its own package.json relative to the working directory.
    command.current_dir(&build).arg("index.js").args(args);
    let output = finished(command);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("{stdout}\n{stderr}"));
    }
    serde_json::from_str(stdout.trim()).map_err(|e| format!("{e}: {stdout}\n{stderr}"))
}

/// Runs `command` to its end within [`PATIENCE`], killing it if it hangs.
fn finished(mut command: Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} starts: {e}"));
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > PATIENCE {
            let _ = child.kill();
            panic!("{command:?} did not finish within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// The built `adk`.
pub(crate) fn adk() -> String {
    env!("CARGO_BIN_EXE_adk").to_owned()
}

/// A file of the repository, by its path from the root, as a string.
pub(crate) fn repo_file(path: &str) -> String {
    repo(path).display().to_string()
}

/// The face served over HTTP on a free loopback port, until dropped; it counts the
/// calls that reached `refund`.
pub(crate) struct Face {
    pub(crate) url: String,
    pub(crate) refunds: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Face {
    /// An agent with a lookup, a clerks-only refund (counted), a streamed report and a
    /// cancellation that waits for approval, exposed as itself (`support`) and as its
    /// tools; a clerk's and a guest's bearer tokens.
    pub(crate) async fn start() -> Face {
        let refunds = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&refunds);
        let refund = Tool::from_fn(ToolInfo::new("refund", "Refunds an order."), move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, std::convert::Infallible>(ToolOutput::new("refunded")) }
        });
        let (slow, slow_state) = slow_tools();
        let model = ScriptedModel::per_run([Turn::stream(["Order 7 ", "has ", "shipped."])]);
        let agent = Agent::builder(model)
            .name("support")
            .tool(text_tool("lookup_order", "Order 7: shipped"))
            .tool(refund)
            .tool(chunk_tool(
                "report",
                &["one ", "two ", "three"],
                Duration::from_millis(20),
            ))
            .tool(text_tool("cancel_order", "cancelled"))
            .tool(slow)
            .tool(slow_state)
            .build()
            .expect("an agent");
        let clerks_refund = tower_adk::handlers::filter_tools(|ext, tool| {
            tool.name() != "refund" || ext.get::<Role>() == Some(&Role::Clerk)
        });
        let approval = HumanApproval::new().tool(
            "cancel_order",
            ApprovalRule::new().description("Cancel this order?"),
        );
        let served = ServedAgent::new(agent)
            .description("Answers questions about orders.")
            .layer(HandlerLayer::new(approval))
            .layer(HandlerLayer::new(clerks_refund));
        let tokens = BearerTokens::new()
            .token(CLERK, Role::Clerk)
            .token(GUEST, Role::Guest);
        let face = McpFace::agent("support", served.clone()).with_tools(served);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let addr = listener.local_addr().expect("an address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(face.serve_http(listener, tokens, async {
            let _ = stopped.await;
        }));
        Face {
            url: format!("http://{addr}/mcp"),
            refunds,
            stop: Some(stop),
        }
    }
}

impl Drop for Face {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// `slow`, a call that takes a minute, and `slow_state`, which says where the last call
/// of `slow` is: `running`, `finished`, or `dropped` (its run was cancelled).
fn slow_tools() -> (Tool, Tool) {
    #[derive(Default)]
    struct State {
        started: AtomicUsize,
        finished: AtomicUsize,
        dropped: AtomicUsize,
    }
    struct Dropped(Arc<State>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
    let state = Arc::new(State::default());
    let called = Arc::clone(&state);
    let slow = Tool::from_fn(ToolInfo::new("slow", "Takes a minute."), move |_| {
        let state = Arc::clone(&called);
        async move {
            state.started.fetch_add(1, Ordering::SeqCst);
            let guard = Dropped(Arc::clone(&state));
            tokio::time::sleep(Duration::from_secs(60)).await;
            std::mem::forget(guard);
            state.finished.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>(ToolOutput::new("done"))
        }
    });
    let slow_state = Tool::from_fn(ToolInfo::new("slow_state", "Where `slow` is."), move |_| {
        let (started, finished, dropped) = (
            state.started.load(Ordering::SeqCst),
            state.finished.load(Ordering::SeqCst),
            state.dropped.load(Ordering::SeqCst),
        );
        async move {
            let text = format!("started {started}, finished {finished}, dropped {dropped}");
            Ok::<_, std::convert::Infallible>(ToolOutput::new(text))
        }
    });
    (slow, slow_state)
}
