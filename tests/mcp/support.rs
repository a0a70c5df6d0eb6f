//! Where the test servers are, and HTTP servers that the tests start and kill.
//!
//! `scripts/setup-mcp-servers` installs the servers under `target/test-servers/mcp` (or
//! `$MCP_TEST_SERVERS`). A server that is missing or does not start fails the test, with
//! the command that fixes it.

use std::fs::File;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tower_adk::Tool;
use tower_adk::providers::mcp::McpServer;

/// How long an HTTP test server may take to start listening.
const HTTP_START_TIMEOUT: Duration = Duration::from_secs(30);

fn servers_dir() -> PathBuf {
    std::env::var_os("MCP_TEST_SERVERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/mcp"),
        PathBuf::from,
    )
}

fn installed(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup-mcp-servers first",
        path.display()
    );
    path
}

/// `@modelcontextprotocol/server-everything`'s entry point.
pub(crate) fn everything_js() -> PathBuf {
    installed(
        servers_dir()
            .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    )
}

/// `@modelcontextprotocol/server-filesystem`'s entry point.
pub(crate) fn filesystem_js() -> PathBuf {
    installed(
        servers_dir()
            .join("node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
    )
}

/// The venv's python, with the `mcp` package.
pub(crate) fn python() -> PathBuf {
    installed(servers_dir().join("venv/bin/python"))
}

/// A script in tests/mcp/servers/.
pub(crate) fn script(name: &str) -> PathBuf {
    installed(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/mcp/servers")
            .join(name),
    )
}

/// server-everything over stdio.
pub(crate) fn everything() -> McpServer {
    McpServer::stdio("node", [everything_js().into_os_string(), "stdio".into()])
        .name("everything")
        .quiet()
}

/// The python toolbox server (tests/mcp/servers/toolbox.py) over stdio.
pub(crate) fn toolbox() -> McpServer {
    McpServer::stdio(python(), [script("toolbox.py")])
        .name("toolbox")
        .quiet()
}

/// server-filesystem over stdio, allowed to see `dir` only.
pub(crate) fn filesystem(dir: &Path) -> McpServer {
    McpServer::stdio("node", [filesystem_js(), dir.to_path_buf()])
        .name("files")
        .quiet()
}

/// A server process started by a test, killed when dropped.
pub(crate) struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    /// server-everything's streamable HTTP transport on a free port.
    pub(crate) fn everything() -> Self {
        Self::start_on_free_port(|port| {
            let mut command = Command::new("node");
            command
                .arg(everything_js())
                .arg("streamableHttp")
                .env("PORT", port.to_string());
            command
        })
    }

    /// server-everything's streamable HTTP transport on `port`.
    pub(crate) fn everything_on(port: u16) -> Self {
        let mut command = Command::new("node");
        command
            .arg(everything_js())
            .arg("streamableHttp")
            .env("PORT", port.to_string());
        Self::start(command, port).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The python toolbox over streamable HTTP on a free port.
    pub(crate) fn toolbox() -> Self {
        Self::start_on_free_port(|port| {
            let mut command = Command::new(python());
            command
                .arg(script("toolbox.py"))
                .arg("http")
                .arg(port.to_string());
            command
        })
    }

    /// The MCP endpoint; 127.0.0.1 only, though server-everything binds every interface.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Starts the server on a free port, trying another port if the first is taken.
    fn start_on_free_port(command: impl Fn(u16) -> Command) -> Self {
        let mut last = String::new();
        for _ in 0..3 {
            let port = free_port();
            match Self::start(command(port), port) {
                Ok(server) => return server,
                Err(error) => last = error,
            }
        }
        panic!("the HTTP test server did not start: {last}")
    }

    /// Starts `command` and waits until something accepts connections on `port`.
    fn start(mut command: Command, port: u16) -> Result<Self, String> {
        let log_path = std::env::temp_dir().join(format!("tower-adk-mcp-test-{port}.log"));
        let log = File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("could not start {command:?}: {e}"))?;
        let mut server = HttpServer { child, port };
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                let mut log = String::new();
                let _ = File::open(&log_path).and_then(|mut f| f.read_to_string(&mut log));
                return Err(format!("{command:?} exited with {status}: {log}"));
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(server);
            }
            if started.elapsed() > HTTP_START_TIMEOUT {
                return Err(format!(
                    "{command:?} did not listen on port {port} within {HTTP_START_TIMEOUT:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the server now, and waits until it is gone.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

/// The tool named `name` of a list.
pub(crate) fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool `{name}` in {tools:?}"))
}

pub(crate) use crate::shared::tool_result;
