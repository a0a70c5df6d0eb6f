//! [`ServeError`]: why serving MCP clients stopped.

/// Why serving stopped before the client went away.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client's `initialize` failed: it sent something else first, asked for a
    /// protocol version the server does not speak, or the transport closed.
    #[error("the MCP client did not initialize: {0}")]
    Initialize(Box<rmcp::service::ServerInitializeError>),
    /// The task that served the connection failed.
    #[error("the MCP connection's task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The HTTP listener failed.
    #[error("the MCP HTTP server failed: {0}")]
    Io(#[from] std::io::Error),
}

impl From<rmcp::service::ServerInitializeError> for ServeError {
    fn from(error: rmcp::service::ServerInitializeError) -> Self {
        ServeError::Initialize(Box::new(error))
    }
}
