//! Starting the mock servers, scripting them, and reading what they received.
//!
//! Each test starts its own server on a free port of 127.0.0.1 and the server dies with
//! the test's [`Server`] guard. A server that cannot start fails the test: run
//! `scripts/setup-openai-mocks` first (the venv is looked for in `$OPENAI_MOCKS_VENV`,
//! by default `target/test-servers/openai`).
//!
//! The admin calls (scripting llmock, resetting fakellm) go through a tiny blocking HTTP
//! client over `std::net`, so the tests need no HTTP client of their own.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tower_adk::providers::openai::{OpenAiModel, OpenAiModelBuilder};

/// How long a server may take to answer its first request.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A mock server process, killed when dropped.
#[derive(Debug)]
pub(crate) struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The venv's `bin` folder.
fn venv_bin() -> PathBuf {
    match std::env::var_os("OPENAI_MOCKS_VENV") {
        Some(venv) => PathBuf::from(venv).join("bin"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/openai/bin"),
    }
}

/// A folder of this test binary's own, for configs and logs.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("openai-servers")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

impl Server {
    /// Starts `program args..` with `--host 127.0.0.1 --port {free port}` and waits until
    /// `GET {health}` answers 200. Panics (failing the test) if it cannot start.
    fn start(program: &str, args: &[&str], health: &str) -> Server {
        let exe = venv_bin().join(program);
        assert!(
            exe.exists(),
            "{} not found: run scripts/setup-openai-mocks (or set OPENAI_MOCKS_VENV)",
            exe.display()
        );
        Server::start_with(&exe, args, &[], health, START_TIMEOUT)
    }

    /// Starts `exe args..` with `envs` and `--host 127.0.0.1 --port {free port}`, and waits
    /// up to `timeout` until `GET {health}` answers 200. Panics (failing the test) if it
    /// cannot start.
    pub(crate) fn start_with(
        exe: &Path,
        args: &[&str],
        envs: &[(&str, &str)],
        health: &str,
        timeout: Duration,
    ) -> Server {
        let program = exe.file_name().unwrap().to_string_lossy();
        // A port found free may be taken before the server binds it: try a few.
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port();
            let log = scratch("logs").join(format!("{program}-{port}.log"));
            let log_file = std::fs::File::create(&log).unwrap();
            let child = Command::new(exe)
                .args(args)
                .envs(envs.iter().copied())
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().unwrap())
                .stderr(log_file)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
            let mut server = Server { child, port, log };
            match server.wait_ready(health, timeout) {
                Ok(()) => return server,
                Err(error) => last_error = error,
            }
        }
        panic!("{program} did not start: {last_error}");
    }

    fn wait_ready(&mut self, health: &str, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("it exited with {status}:\n{}", self.log_text()));
            }
            if let Ok((200, _)) = self.try_http("GET", health, None) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "no answer within {timeout:?}:\n{}",
            self.log_text()
        ))
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The base URL of its OpenAI API.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// A model builder pointed at this server (model name `gpt-4o-mini`).
    pub(crate) fn builder(&self) -> OpenAiModelBuilder {
        OpenAiModel::builder()
            .base_url(self.base_url())
            .model("gpt-4o-mini")
            .api_key("sk-test")
    }

    /// A model on this server, streaming or not.
    pub(crate) fn model(&self, stream: bool) -> OpenAiModel {
        self.builder().stream(stream).build().unwrap()
    }

    /// An admin call: `(status, JSON body)`.
    pub(crate) fn http(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        self.try_http(method, path, body.as_ref())
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    fn try_http(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        let body = body.map(Value::to_string).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .map_err(|e| e.to_string())?;
        let mut response = Vec::new();
        stream
            .read_to_end(&mut response)
            .map_err(|e| e.to_string())?;
        let response = String::from_utf8_lossy(&response);
        let (head, body) = response.split_once("\r\n\r\n").ok_or("no response head")?;
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or("no status")?;
        Ok((status, serde_json::from_str(body).unwrap_or(Value::Null)))
    }
}

/// An llmock server: answers offered tools with a tool call, then text once a tool result
/// comes back; scripted over HTTP.
#[derive(Debug)]
pub(crate) struct Llmock(pub(crate) Server);

impl Llmock {
    pub(crate) fn start() -> Llmock {
        // `static` text: the same prompt gets the same answer.
        Llmock(Server::start(
            "llmock",
            &[
                "serve",
                "--log-level",
                "warning",
                "--response-style",
                "static",
            ],
            "/health",
        ))
    }

    /// Queues behaviours (`{"type": "reply", ...}`, `{"type": "fail", ...}`, ...).
    pub(crate) fn script(&self, behaviors: Value) -> &Self {
        let (status, body) = self.0.http(
            "POST",
            "/_llmock/scenario",
            Some(json!({"behaviors": behaviors})),
        );
        assert_eq!(status, 201, "scripting llmock failed: {body}");
        self
    }

    /// The bodies of the chat completion requests it received, oldest first.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.requests_to("/v1/chat/completions")
    }

    /// The bodies of the requests to `path` it received, oldest first.
    pub(crate) fn requests_to(&self, path: &str) -> Vec<Value> {
        let (_, journal) = self.0.http("GET", "/_llmock/requests", None);
        journal["requests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["path"] == path)
            .map(|r| r["body"].clone())
            .collect()
    }
}

impl std::ops::Deref for Llmock {
    type Target = Server;

    fn deref(&self) -> &Server {
        &self.0
    }
}

/// A fakellm server, scripted by a YAML file of rules.
#[derive(Debug)]
pub(crate) struct Fakellm(pub(crate) Server);

impl Fakellm {
    pub(crate) fn start(name: &str, config: &str) -> Fakellm {
        let path = scratch("fakellm").join(format!("{name}.yaml"));
        std::fs::write(&path, config).unwrap();
        let path = path.to_str().unwrap().to_owned();
        Fakellm(Server::start(
            "fakellm",
            &["serve", "--config", &path],
            "/_fakellm/stats",
        ))
    }

    /// Forgets every conversation (turn counts, tool results seen).
    pub(crate) fn reset(&self) {
        let (status, body) = self.0.http("POST", "/_fakellm/reset", None);
        assert_eq!(status, 200, "{body}");
    }

    /// `{rule name: times matched}`.
    pub(crate) fn matched(&self) -> Value {
        self.0.http("GET", "/_fakellm/stats", None).1["by_rule"].clone()
    }
}

impl std::ops::Deref for Fakellm {
    type Target = Server;

    fn deref(&self) -> &Server {
        &self.0
    }
}
