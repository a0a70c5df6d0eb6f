//! [`McpServer`]: the description of an MCP server to take tools from (how to reach it,
//! which of its tools, the timeouts and retries), and the connect that turns it into a
//! [`ToolSet`].

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::connection::{Connection, ConnectionConfig};
use super::error::McpError;
use super::tool::mcp_tool;
use super::transport::{Http, Stdio, Transport};
use crate::tool::ToolSet;

/// How long connecting (starting the server, the handshake, listing its tools) may take
/// by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one tool call may take by default.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// How many times a failed connect is retried by default.
pub const DEFAULT_CONNECT_RETRIES: u32 = 2;

/// How long the first retry of a failed connect waits by default; each further retry
/// waits twice as long as the one before.
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(200);

/// An MCP server to take tools from: how to reach it, and the rules for its tools.
///
/// Build one with [`McpServer::stdio`] or [`McpServer::http`], set what differs from the
/// defaults, then [`connect`](McpServer::connect) to get its tools as a [`ToolSet`]. See
/// the [module docs](super) for what calls do when the server is slow, fails or dies.
///
/// # Example
///
/// ```no_run
/// use std::time::Duration;
/// use tower_adk::providers::mcp::McpServer;
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let tools = McpServer::stdio("python", ["weather_server.py"])
///     .name("weather")
///     .env("WEATHER_API_URL", "http://127.0.0.1:8080")
///     .exclude(["set_alert"])
///     .connect_retries(3)
///     .connect_timeout(Duration::from_secs(10))
///     .call_timeout(Duration::from_secs(20))
///     .connect()
///     .await?;
/// assert_eq!(tools.name(), "weather");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpServer {
    name: String,
    transport: Transport,
    /// The include or exclude list: the set that [`connect`](McpServer::connect) fills
    /// with the server's tools.
    tools: ToolSet,
    connect_retries: u32,
    retry_backoff: Duration,
    connect_timeout: Duration,
    call_timeout: Duration,
    stream_progress: bool,
}

impl McpServer {
    /// A server that runs as a child process of this one and speaks MCP over its stdin
    /// and stdout, started with `program` and `args`.
    ///
    /// Start the server's own executable (`node path/to/server.js`, `python server.py`)
    /// rather than a launcher such as `npx` or `sh -c`: when the connection ends the
    /// process is killed, and a launcher's children would outlive it. The server's
    /// stderr goes to this process's stderr unless [`quiet`](McpServer::quiet).
    ///
    /// The server is named after `program` and `args` until [`name`](McpServer::name) is
    /// set.
    pub fn stdio<P, I, A>(program: P, args: I) -> Self
    where
        P: Into<OsString>,
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        let program = program.into();
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let name = std::iter::once(&program)
            .chain(&args)
            .map(|part| part.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        McpServer::new(
            name,
            Transport::Stdio(Stdio {
                program,
                args,
                env: Vec::new(),
                current_dir: None,
                quiet: false,
            }),
        )
    }

    /// A server that speaks MCP's streamable HTTP transport at `url` (for example
    /// `http://127.0.0.1:3001/mcp`).
    ///
    /// The server is named after its URL until [`name`](McpServer::name) is set.
    pub fn http(url: impl Into<String>) -> Self {
        let url = url.into();
        McpServer::new(
            url.clone(),
            Transport::Http(Http {
                url,
                bearer_token: None,
            }),
        )
    }

    fn new(name: String, transport: Transport) -> Self {
        McpServer {
            name,
            transport,
            tools: ToolSet::new(String::new(), []),
            connect_retries: DEFAULT_CONNECT_RETRIES,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            stream_progress: true,
        }
    }

    /// The server's name: the name of its [`ToolSet`], and the name errors use.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Offers only these tools of the server. Giving both an include and an exclude list,
    /// or naming a tool the server does not have, makes
    /// [`AgentBuilder::build`](crate::AgentBuilder::build) fail (see [`ToolSet`]).
    pub fn include<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = self.tools.include(names);
        self
    }

    /// Offers every tool of the server but these; see [`include`](McpServer::include).
    pub fn exclude<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = self.tools.exclude(names);
        self
    }

    /// How many times a failed connect is retried (default
    /// [`DEFAULT_CONNECT_RETRIES`]), when connecting first and whenever a call finds the
    /// connection lost. Retries wait [`retry_backoff`](McpServer::retry_backoff), doubling.
    pub fn connect_retries(mut self, retries: u32) -> Self {
        self.connect_retries = retries;
        self
    }

    /// How long the first retry of a failed connect waits (default
    /// [`DEFAULT_RETRY_BACKOFF`]); each further retry waits twice as long.
    pub fn retry_backoff(mut self, backoff: Duration) -> Self {
        self.retry_backoff = backoff;
        self
    }

    /// How long one connect attempt (starting the server, the handshake and, the first
    /// time, listing its tools) may take (default [`DEFAULT_CONNECT_TIMEOUT`]).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one tool call may take once sent (default [`DEFAULT_CALL_TIMEOUT`]).
    /// A call that takes longer is cancelled on the server and answered with a
    /// model-visible error of kind [`Timeout`](crate::ToolErrorKind::Timeout).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Whether the tools stream the server's progress notifications as chunks before
    /// their result (default `true`). Off, the tools only return their result whole.
    pub fn stream_progress(mut self, stream: bool) -> Self {
        self.stream_progress = stream;
        self
    }

    /// Sets an environment variable for the server's process (stdio servers only; the
    /// process inherits this process's environment otherwise).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let Transport::Stdio(stdio) = &mut self.transport {
            stdio.env.push((key.into(), value.into()));
        }
        self
    }

    /// The working directory of the server's process (stdio servers only).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Transport::Stdio(stdio) = &mut self.transport {
            stdio.current_dir = Some(dir.into());
        }
        self
    }

    /// Discards what the server's process writes to stderr (stdio servers only).
    pub fn quiet(mut self) -> Self {
        if let Transport::Stdio(stdio) = &mut self.transport {
            stdio.quiet = true;
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request (HTTP servers only).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        if let Transport::Http(http) = &mut self.transport {
            http.bearer_token = Some(Arc::from(token.into()));
        }
        self
    }

    /// Connects to the server and lists its tools, retrying within the
    /// [retry budget](McpServer::connect_retries).
    ///
    /// Each tool of the server becomes a [`Tool`](crate::Tool) with the server's name,
    /// description and input schema; the set carries the include or exclude list, checked
    /// when the agent is built. The tools share the connection, which ends (and a stdio
    /// server's process is killed) when the last of them is dropped.
    ///
    /// # Errors
    ///
    /// An [`McpError`]: [`Spawn`](McpError::Spawn) if the process cannot be started, else
    /// [`Unavailable`](McpError::Unavailable) with the last attempt's error once every
    /// attempt has failed.
    pub async fn connect(self) -> Result<ToolSet, McpError> {
        let McpServer {
            name,
            transport,
            tools: set,
            connect_retries,
            retry_backoff,
            connect_timeout,
            call_timeout,
            stream_progress,
        } = self;
        let config = ConnectionConfig {
            name,
            transport,
            connect_retries,
            retry_backoff,
            connect_timeout,
            call_timeout,
        };
        let (connection, listed) = Connection::open(config).await?;
        let tools = listed
            .into_iter()
            .map(|tool| mcp_tool(&connection, tool, stream_progress));
        Ok(set.with_tools(connection.server(), tools))
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let transport = match &self.transport {
            Transport::Stdio(_) => "stdio",
            Transport::Http(_) => "streamable HTTP",
        };
        let (include, exclude) = self.tools.lists();
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("transport", &transport)
            .field("include", include)
            .field("exclude", exclude)
            .field("connect_retries", &self.connect_retries)
            .field("connect_timeout", &self.connect_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("stream_progress", &self.stream_progress)
            .finish_non_exhaustive()
    }
}
