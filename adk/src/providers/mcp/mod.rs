//! Tools from MCP servers (feature `mcp`), over stdio or streamable HTTP.
//!
//! An [`McpServer`] says how to reach a [Model Context Protocol] server and what to take
//! from it; [`McpServer::connect`] connects with the official Rust SDK, `rmcp`, and
//! returns the server's tools as a [`ToolSet`](crate::tool::ToolSet) for
//! [`AgentBuilder::tool_set`](crate::AgentBuilder::tool_set). Each tool keeps the
//! server's name, description and JSON Schema, and is an ordinary [`Tool`](crate::Tool):
//! handlers filter it, wrap it and time it like any other.
//!
//! # Example
//!
//! ```no_run
//! use std::time::Duration;
//! use tower_adk::providers::mcp::McpServer;
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use tower_adk::{Agent, AgentRequest};
//! use serde_json::json;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let files = McpServer::stdio("node", ["server-filesystem/dist/index.js", "/srv/docs"])
//!     .name("files")
//!     .include(["read_text_file", "list_directory"])
//!     .call_timeout(Duration::from_secs(10))
//!     .connect()
//!     .await?;
//! let search = McpServer::http("http://127.0.0.1:3001/mcp").name("search").connect().await?;
//!
//! let model = ScriptedModel::new([
//!     Turn::call("c1", "list_directory", json!({"path": "/srv/docs"})),
//!     Turn::text("There are two documents."),
//! ]);
//! let agent = Agent::builder(model).tool_set(files).tool_set(search).build()?;
//! let result = agent.run(AgentRequest::user("What is in the docs?")).await?;
//! println!("{}", result.tool_records[0].content);
//! # Ok(())
//! # }
//! ```
//!
//! # What the model sees
//!
//! | the server sends | the tool call's result |
//! |------------------|------------------------|
//! | a result | its text blocks, one per line (images, audio and binary resources named in brackets); its structured content as JSON if it has no content blocks |
//! | a result with `isError` | a tool error of kind [`Failed`](crate::ToolErrorKind::Failed) with the server's text |
//! | a JSON-RPC error | a tool error: [`InvalidArguments`](crate::ToolErrorKind::InvalidArguments) for "invalid params", else [`Failed`](crate::ToolErrorKind::Failed) with the code and message ([`McpError::Protocol`]) |
//! | nothing within the [call timeout](McpServer::call_timeout) | a tool error of kind [`Timeout`](crate::ToolErrorKind::Timeout); the server is told to cancel the call |
//! | progress notifications | stream chunks, one line each (the message, or `progress N/TOTAL`), before the result's text |
//!
//! # When the server dies
//!
//! A server's tools share one connection. If it is lost (the process exits, the HTTP
//! server goes away), the calls in flight fail with a model-visible
//! [`McpError::Disconnected`], and the run goes on. The next call connects again, with up
//! to [`connect_retries`](McpServer::connect_retries) retries; if they all fail, that call
//! fails with [`McpError::Unavailable`], and the call after it tries again. Concurrent calls
//! that find the connection lost wait for the same reconnect. Every wait is bounded: by
//! the connect timeout, the retry budget and the call timeout.
//!
//! The tool list is read once, at [`connect`](McpServer::connect); a reconnect does not
//! read it again, and `notifications/tools/list_changed` is ignored.
//!
//! [Model Context Protocol]: https://modelcontextprotocol.io

mod connection;
mod content;
mod error;
mod progress;
mod server;
mod tool;
mod transport;

pub use self::error::McpError;
pub use self::server::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_RETRIES, DEFAULT_CONNECT_TIMEOUT, DEFAULT_RETRY_BACKOFF,
    McpServer,
};
