//! [`McpError`]: what went wrong with an MCP server, in connecting to it or in a call;
//! during a run it reaches the model as the source of a tool error.

use std::time::Duration;

use tower::BoxError;

/// What went wrong with an MCP server: connecting to it, or a call.
///
/// [`McpServer::connect`](super::McpServer::connect) returns it when the server's tools
/// cannot be had. During a run, a call that fails for one of these reasons becomes a
/// model-visible tool error of kind [`Failed`](crate::ToolErrorKind::Failed) whose
/// [`source`](std::error::Error::source) is this error, so a tool wrapper (or a retry
/// policy) can `downcast_ref::<McpError>()` it. A call that times out is a tool error of kind
/// [`Timeout`](crate::ToolErrorKind::Timeout) instead, and a result the server flags with
/// `isError` is one of kind `Failed` with the server's own text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's process could not be started (no such program, no permission).
    /// Not retried: starting it again would fail the same way.
    #[error("could not start MCP server `{server}`: {source}")]
    Spawn {
        /// The server's name.
        server: String,
        /// Why the process did not start.
        #[source]
        source: std::io::Error,
    },
    /// The server did not complete the MCP handshake: the process exited, the URL did not
    /// answer, or the other end does not speak MCP.
    #[error("could not connect to MCP server `{server}`: {source}")]
    Handshake {
        /// The server's name.
        server: String,
        /// What the MCP client reported.
        #[source]
        source: BoxError,
    },
    /// Connecting (starting, the handshake, listing the tools) took longer than the
    /// server's [connect timeout](super::McpServer::connect_timeout).
    #[error("MCP server `{server}` did not connect within {timeout:?}")]
    ConnectTimeout {
        /// The server's name.
        server: String,
        /// The connect timeout.
        timeout: Duration,
    },
    /// The server did not list its tools.
    #[error("MCP server `{server}` did not list its tools: {source}")]
    ListTools {
        /// The server's name.
        server: String,
        /// What the MCP client reported.
        #[source]
        source: BoxError,
    },
    /// Every connect attempt failed; `source` is the last attempt's error.
    #[error("MCP server `{server}` is unavailable after {attempts} connect attempt(s): {source}")]
    Unavailable {
        /// The server's name.
        server: String,
        /// How many attempts were made: one plus the retry budget.
        attempts: u32,
        /// Why the last attempt failed.
        #[source]
        source: Box<McpError>,
    },
    /// The connection was lost during a call (the server's process died, the HTTP
    /// server went away); the next call connects again.
    #[error("MCP server `{server}` closed the connection during the call")]
    Disconnected {
        /// The server's name.
        server: String,
    },
    /// The server answered the call with a JSON-RPC error instead of a result.
    #[error("MCP server `{server}` answered with error {code}: {message}")]
    Protocol {
        /// The server's name.
        server: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The call failed in the MCP client for another reason (an answer of the wrong type,
    /// a cancelled request).
    #[error("calling `{tool}` on MCP server `{server}` failed: {source}")]
    Call {
        /// The server's name.
        server: String,
        /// The tool called.
        tool: String,
        /// What the MCP client reported.
        #[source]
        source: BoxError,
    },
    /// The server answered with something this client does not handle (a request for
    /// more input, a task instead of a result).
    #[error(
        "MCP server `{server}` answered `{tool}` with {what}, which tower-adk does not support"
    )]
    Unsupported {
        /// The server's name.
        server: String,
        /// The tool called.
        tool: String,
        /// What the server sent.
        what: &'static str,
    },
}

impl McpError {
    /// The name of the server concerned.
    pub fn server(&self) -> &str {
        match self {
            McpError::Spawn { server, .. }
            | McpError::Handshake { server, .. }
            | McpError::ConnectTimeout { server, .. }
            | McpError::ListTools { server, .. }
            | McpError::Unavailable { server, .. }
            | McpError::Disconnected { server }
            | McpError::Protocol { server, .. }
            | McpError::Call { server, .. }
            | McpError::Unsupported { server, .. } => server,
        }
    }

    /// Whether connecting timed out (for [`Unavailable`](McpError::Unavailable), whether
    /// the last attempt did).
    pub fn is_timeout(&self) -> bool {
        match self {
            McpError::ConnectTimeout { .. } => true,
            McpError::Unavailable { source, .. } => source.is_timeout(),
            _ => false,
        }
    }

    /// Whether the server could not be reached or was lost: a later call may succeed, as it
    /// connects again.
    pub fn is_connection(&self) -> bool {
        matches!(
            self,
            McpError::Handshake { .. }
                | McpError::ConnectTimeout { .. }
                | McpError::Unavailable { .. }
                | McpError::Disconnected { .. }
        )
    }
}
