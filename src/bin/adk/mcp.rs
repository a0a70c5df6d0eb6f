//! `adk mcp`: an agent file served to MCP clients ([`tower_adk::mcp_server`]): over
//! stdio by default (a desktop client or an IDE starts the command), or over
//! streamable HTTP with `--http`, until Ctrl-C (or SIGTERM).

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;

use clap::ValueEnum;
use tower_adk::auth::{Identity, Principal};
use tower_adk::file::Role;
use tower_adk::mcp_server::{MCP_PATH, McpFace};
use tower_adk::server::{Anonymous, BearerTokens};

use crate::serve::{listen, stop_asked};
use crate::{Failure, load, screen};

/// What the MCP clients get to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Expose {
    /// The agent, as one tool named after it: a message in, its reply out.
    Agent,
    /// The agent's tools themselves, each with its JSON Schema, through the file's
    /// handlers (role filter, policies, approvals).
    Tools,
    /// Both.
    Both,
}

/// How the command serves.
#[derive(Debug)]
pub(crate) struct Options<'a> {
    pub(crate) file: &'a Path,
    pub(crate) expose: Expose,
    /// Streamable HTTP on this address; stdio without it.
    pub(crate) http: Option<SocketAddr>,
    /// HTTP: `(token, role)`; none lets everyone in, with no role.
    pub(crate) tokens: Vec<(String, String)>,
    /// Stdio: the role of the one client.
    pub(crate) role: Option<String>,
}

impl Options<'_> {
    /// Loads the file and serves it until the client goes away (stdio) or a stop is
    /// asked for (HTTP).
    pub(crate) async fn serve(self) -> Result<(), Failure> {
        let agent = load::build(self.file, load::load(self.file).await?)?;
        let served = agent.served();
        let name = agent.name().to_owned();
        let face = match self.expose {
            Expose::Agent => McpFace::agent(&name, served),
            Expose::Tools => McpFace::tools(served),
            Expose::Both => McpFace::agent(&name, served.clone()).with_tools(served),
        };
        let Some(addr) = self.http else {
            // Standard output is the protocol's: what the command says goes to stderr.
            if !self.tokens.is_empty() {
                let _ = writeln!(
                    anstream::stderr(),
                    "note: tokens apply to --http; over stdio the client is the one that started the command"
                );
            }
            let mut identity = Identity::new(Principal::new("stdio"));
            if let Some(role) = &self.role {
                identity = identity.with(Role::new(role));
            }
            return face
                .identity(identity)
                .serve_stdio()
                .await
                .map_err(|error| {
                    screen::error(format_args!("{error}"));
                    Failure::Run
                });
        };
        let (listener, bound) = listen(addr).await?;
        let mut err = anstream::stderr();
        let _ = writeln!(
            err,
            "serving `{name}` to MCP clients on http://{bound}{MCP_PATH}"
        );
        let _ = writeln!(err, "Ctrl-C stops.");
        let served = if self.tokens.is_empty() {
            face.serve_http(listener, Anonymous, stop_asked()).await
        } else {
            let tokens = self
                .tokens
                .into_iter()
                .fold(BearerTokens::new(), |tokens, (token, role)| {
                    tokens.token(token, Role::new(role))
                });
            face.serve_http(listener, tokens, stop_asked()).await
        };
        served.map_err(|error| {
            screen::error(format_args!("{error}"));
            Failure::Run
        })
    }
}
