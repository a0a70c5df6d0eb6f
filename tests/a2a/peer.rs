//! The scripted A2A agent of tests/a2a/peer on a2a-sdk's server, as a process on a free
//! port of 127.0.0.1, killed when its guard is dropped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long the peer may take to serve its card (the SDK imports protobuf and pydantic).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The peer's process, killed when dropped.
#[derive(Debug)]
pub(crate) struct Peer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python() -> PathBuf {
    let venv = std::env::var_os("A2A_PEER_VENV").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/a2a-peer"),
        PathBuf::from,
    );
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "{} not found: run scripts/setup-a2a-peer (or set A2A_PEER_VENV)",
        python.display()
    );
    python
}

/// A port nothing listens on (for a moment).
pub(crate) fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

impl Peer {
    /// The peer with the defaults: a streaming card, no token.
    pub(crate) async fn start() -> Peer {
        Peer::with_args(&[]).await
    }

    /// The peer started with these extra arguments (`--no-streaming`, `--token T`).
    pub(crate) async fn with_args(args: &[&str]) -> Peer {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/a2a/peer/scripted_agent.py");
        let logs = Path::new(env!("CARGO_TARGET_TMPDIR")).join("a2a-peer");
        std::fs::create_dir_all(&logs).unwrap();
        let mut last_error = String::new();
        // A port found free may be taken before the peer binds it: try a few.
        for _ in 0..3 {
            let port = free_port();
            let log = logs.join(format!("peer-{port}.log"));
            let log_file = std::fs::File::create(&log).unwrap();
            let child = Command::new(python())
                .arg(&script)
                .args(["--port", &port.to_string()])
                .args(args)
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().unwrap())
                .stderr(log_file)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start the A2A peer: {e}"));
            let mut peer = Peer { child, port, log };
            match peer.wait_ready().await {
                Ok(()) => return peer,
                Err(error) => last_error = error,
            }
        }
        panic!("the A2A peer did not start: {last_error}");
    }

    async fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        let card = format!("{}/.well-known/agent-card.json", self.url());
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("it exited with {status}:\n{}", self.log_text()));
            }
            if let Ok(response) = reqwest::get(&card).await
                && response.status().is_success()
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!(
            "no card within {START_TIMEOUT:?}:\n{}",
            self.log_text()
        ))
    }

    /// What the peer printed.
    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Its base URL.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What it recorded: `{"cancelled": [task ids], "requests": [{method, authorization}]}`.
    pub(crate) async fn record(&self) -> Value {
        let url = format!("{}/_test/record", self.url());
        reqwest::get(&url).await.unwrap().json().await.unwrap()
    }

    /// The JSON-RPC methods it was called with, in order.
    pub(crate) async fn methods(&self) -> Vec<String> {
        let record = self.record().await;
        record["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["method"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}
