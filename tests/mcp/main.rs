//! MCP tools against real servers: `@modelcontextprotocol/server-everything` (stdio and
//! streamable HTTP), `@modelcontextprotocol/server-filesystem` (stdio), and a small server
//! written with the PyPI `mcp` package (tests/mcp/servers/toolbox.py).
//!
//! Every test starts its own servers and ends them when it ends. Run
//! `scripts/setup-mcp-servers` first: a server that is missing or cannot start fails the
//! test, it never skips it.

#![cfg(feature = "mcp")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent_runs;
mod connecting;
mod listing;
mod progress;
mod reconnect;
mod sets;
#[path = "../support/mod.rs"]
mod shared;
mod support;
mod timeouts;
