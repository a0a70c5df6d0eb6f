//! The servers the tests start as processes: fakellm (from `scripts/setup-openai-mocks`)
//! and LiteLLM's proxy (from `scripts/setup-litellm`), each on a free port of 127.0.0.1,
//! killed when its guard is dropped; and the Python of `scripts/setup-litellm`, with
//! Anthropic's SDK. A server that cannot start fails the test, naming the script to run.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a server may take to answer its first request (LiteLLM imports a lot).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// A server process, killed when dropped.
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

/// A venv's `bin` folder: `$VAR`, else `target/test-servers/{default}`.
fn venv_bin(var: &str, default: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(venv) => PathBuf::from(venv).join("bin"),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/test-servers")
            .join(default)
            .join("bin"),
    }
}

/// The Python of `scripts/setup-litellm`'s venv (with `anthropic` and `litellm`).
pub(crate) fn python() -> PathBuf {
    let python = venv_bin("LITELLM_VENV", "litellm").join("python");
    assert!(
        python.exists(),
        "{} not found: run scripts/setup-litellm (or set LITELLM_VENV)",
        python.display()
    );
    python
}

/// A folder of this test binary's own, for configs and logs.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("anthropic")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

impl Server {
    /// Starts `exe args.. {port args}` and waits until `GET {health}` answers 200.
    fn start(exe: &Path, args: &[&str], port_args: fn(u16) -> Vec<String>, health: &str) -> Server {
        let name = exe.file_name().unwrap().to_string_lossy().into_owned();
        let mut last_error = String::new();
        // A port found free may be taken before the server binds it: try a few.
        for _ in 0..3 {
            let port = free_port();
            let log = scratch("logs").join(format!("{name}-{port}.log"));
            let log_file = std::fs::File::create(&log).unwrap();
            let child = Command::new(exe)
                .args(args)
                .args(port_args(port))
                .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                .env("LITELLM_TELEMETRY", "False")
                // An OpenAI model's `/v1/messages` goes to the backend's chat completions
                // (by default LiteLLM sends it to the Responses API, which the
                // OpenAI-compatible servers here do not serve).
                .env(
                    "LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES",
                    "true",
                )
                .env("NO_PROXY", "127.0.0.1")
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().unwrap())
                .stderr(log_file)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
            let mut server = Server { child, port, log };
            match server.wait_ready(health) {
                Ok(()) => return server,
                Err(error) => last_error = error,
            }
        }
        panic!("{name} did not start: {last_error}");
    }

    fn wait_ready(&mut self, health: &str) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("it exited with {status}:\n{}", self.log_text()));
            }
            if let Ok((200, _)) = self.try_http("GET", health) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!(
            "no answer within {START_TIMEOUT:?}:\n{}",
            self.log_text()
        ))
    }

    /// What the server printed.
    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Its base URL, without a path.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// An admin call without a body: `(status, JSON body)`.
    pub(crate) fn http(&self, method: &str, path: &str) -> (u16, Value) {
        self.try_http(method, path)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    fn try_http(&self, method: &str, path: &str) -> Result<(u16, Value), String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        )
        .map_err(|e| e.to_string())?;
        let mut response = Vec::new();
        stream
            .read_to_end(&mut response)
            .map_err(|e| e.to_string())?;
        let response = String::from_utf8_lossy(&response);
        let (head, body) = response.split_once("\r\n\r\n").ok_or("no response head")?;
        let status = (head.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or("no status")?;
        Ok((status, serde_json::from_str(body).unwrap_or(Value::Null)))
    }
}

/// fakellm, scripted by a YAML file of rules; it serves `/v1/messages`.
pub(crate) fn fakellm(name: &str, rules: &str) -> Server {
    let exe = venv_bin("OPENAI_MOCKS_VENV", "openai").join("fakellm");
    assert!(
        exe.exists(),
        "{} not found: run scripts/setup-openai-mocks",
        exe.display()
    );
    let path = scratch("fakellm").join(format!("{name}.yaml"));
    std::fs::write(&path, rules).unwrap();
    let path = path.to_str().unwrap();
    Server::start(
        &exe,
        &["serve", "--config", path],
        |port| {
            vec![
                "--host".into(),
                "127.0.0.1".into(),
                "--port".into(),
                port.to_string(),
            ]
        },
        "/_fakellm/stats",
    )
}

/// LiteLLM's proxy with this config file's text (its `model_list`).
pub(crate) fn litellm(name: &str, config: &str) -> Server {
    let exe = venv_bin("LITELLM_VENV", "litellm").join("litellm");
    assert!(
        exe.exists(),
        "{} not found: run scripts/setup-litellm",
        exe.display()
    );
    let path = scratch("litellm").join(format!("{name}.yaml"));
    std::fs::write(&path, config).unwrap();
    let path = path.to_str().unwrap();
    Server::start(
        &exe,
        &[
            "--config",
            path,
            "--host",
            "127.0.0.1",
            "--num_workers",
            "1",
        ],
        |port| vec!["--port".into(), port.to_string()],
        "/health/liveliness",
    )
}
