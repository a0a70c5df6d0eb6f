//! Agents and their tools served to MCP clients (feature `mcp-server`): desktop apps,
//! IDEs, the MCP Inspector, other agents, over stdio or streamable HTTP, with rmcp's
//! server side.
//!
//! An [`McpFace`] exposes an agent as one tool ([`McpFace::agent`]: `{"message",
//! "thread"?}` in, the agent's reply out), or the agent's tools themselves
//! ([`McpFace::tools`]: each with its name, description and JSON Schema), or both. It
//! serves them on stdin and stdout ([`McpFace::serve_stdio`]) or over HTTP
//! ([`McpFace::into_router`], [`McpFace::serve_http`]).
//!
//! # Example
//!
//! ```
//! use tower_adk::Agent;
//! use tower_adk::mcp_server::McpFace;
//! use tower_adk::server::{BearerTokens, Server};
//! use tower_adk::testing::{ScriptedModel, Turn, text_tool};
//!
//! #[derive(Clone)]
//! struct Role(&'static str);
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder(ScriptedModel::per_run([Turn::text("Order 7 has shipped.")]))
//!     .tool(text_tool("lookup_order", "shipped"))
//!     .build()?;
//! // The agent as the tool `support`, and its tool `lookup_order` as itself.
//! let face = McpFace::agent("support", agent.clone()).with_tools(agent);
//! let tokens = BearerTokens::new().token("t0ken", Role("clerk"));
//! // `POST /mcp` next to the agents' own routes.
//! let app = Server::new().into_router().merge(face.into_router(tokens));
//! # let _ = app;
//! // Or, for a desktop client that starts the program: face.serve_stdio().await?
//! # Ok(())
//! # }
//! ```
//!
//! # Which tools a caller sees and may call
//!
//! Every call is a run of the agent through the layers of its
//! [`ServedAgent`] (a role filter, a policy, an approval),
//! with the caller's [`Identity`] in its extensions: over HTTP the one the router's
//! [`Identify`] gives each request (as on the server's own routes: a request it refuses
//! gets 401), over stdio the one the program [fixes](McpFace::identity) (default:
//! anonymous).
//!
//! `tools/list` shows the agents' tools, the tools the caller's runs of the
//! [exposed agent](McpFace::tools) have (its `before_agent` hooks run for the caller,
//! without a model call, as for the server's `GET /agents`), and the resume tool. A
//! `tools/call` of one of the agent's tools is a run in which a stand-in for the model
//! makes that one call: the loop refuses a tool outside the caller's run (the JSON-RPC
//! error "invalid params", `unknown tool`, the same as for a tool that does not exist;
//! it never runs), checks the arguments against the tool's schema, and the tool
//! wrappers wrap the call. The real model is never called for it; the stand-in's turns
//! go through the `wrap_model` hooks like the model's (a limit on model calls counts
//! them), and the call returns directly, so the run ends with it.
//!
//! Over HTTP a session (`Mcp-Session-Id`) belongs to the principal that opened it:
//! another caller naming it gets 404, as for a session that does not exist.
//!
//! # Results
//!
//! | the run | the call's result |
//! |---|---|
//! | an agent's reply | its text |
//! | a tool's output | its text, then its images |
//! | a tool's failure (bad arguments, an error, a denial, a timeout) | `isError`, with the model-visible text |
//! | arguments that do not fit an agent's or the resume tool's schema | `isError`, with structured content `{"error": {"code": "invalid_arguments", "message"}}` |
//! | a run that fails or cannot start (a busy thread, an unknown checkpoint) | `isError`, with structured content `{"error": {"code", "message"}}` in the server's codes |
//!
//! # Progress
//!
//! A client that sends a `progressToken` with its call gets what the run streams as
//! `notifications/progress`, in order, before the result: an agent's text deltas, a
//! tool's output chunks, each as the notification's `message`, its `progress` counting
//! 1, 2, 3...
//!
//! # Interrupts
//!
//! A call whose run stops for a decision (an approval) answers `isError: true` (its
//! work is not done; a client that reads only `isError` does not take it as done) with
//! a text that says what waits and how to go on, and structured content:
//!
//! ```json
//! {"status": "interrupted",
//!  "interrupts": [{"id": "support/call/c1", "call": {...}, "payload": {...}}],
//!  "resume": {"tool": "resume",
//!             "arguments": {"tool": "support", "checkpoint": "thread@2#run",
//!                           "decisions": {"support/call/c1": {"type": "approve"}}}}}
//! ```
//!
//! Calling the resume tool (named `resume`, or as [`McpFace::resume_tool`] says) with
//! those arguments, the decisions changed as the person decided, continues the run and
//! answers as the first call would have. A checkpoint belongs to the caller whose run
//! wrote it: another caller's resume finds nothing. (MCP's elicitation is not used: few
//! clients support it, and a checkpoint outlives the connection.)

mod agent_call;
mod caller;
mod direct_call;
mod error;
mod handler;
mod http;
mod listing;
mod outcome;
mod progress;
mod resume;
mod session;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use axum::Router;
use rmcp::ServiceExt;
use rmcp::model::Implementation;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use self::caller::Callers;
pub use self::error::ServeError;
use self::handler::FaceHandler;
pub use self::http::MCP_PATH;
use crate::auth::Identity;
use crate::server::{Identify, ServedAgent};

/// The name of the resume tool unless [`McpFace::resume_tool`] says otherwise.
pub const DEFAULT_RESUME_TOOL: &str = "resume";

/// Agents and their tools as an MCP server; see the [module docs](self).
pub struct McpFace {
    exposed: Exposed,
    identity: Identity,
}

/// What a face exposes, shared by its connections.
#[derive(Debug)]
pub(crate) struct Exposed {
    /// Each agent as one tool, by the tool's name.
    pub(crate) agents: BTreeMap<String, ServedAgent>,
    /// The agent whose tools are exposed.
    pub(crate) tools: Option<ServedAgent>,
    pub(crate) resume_tool: String,
    pub(crate) implementation: Implementation,
    pub(crate) instructions: Option<String>,
}

impl McpFace {
    /// Exposes `agent` as one tool named `name`, described by the agent's description
    /// (see [`ServedAgent::description`]), taking `{"message": "...", "thread": "..."}`
    /// (the thread optional) and answering with the agent's reply.
    pub fn agent(name: impl Into<String>, agent: impl Into<ServedAgent>) -> Self {
        let name = name.into();
        let face = McpFace::empty(&name);
        face.with_agent(name, agent)
    }

    /// Exposes the tools of `agent`'s runs, each as an MCP tool with its name,
    /// description and JSON Schema, called through the agent's layers and handlers.
    pub fn tools(agent: impl Into<ServedAgent>) -> Self {
        let agent = agent.into();
        let face = McpFace::empty(agent.agent().name());
        face.with_tools(agent)
    }

    fn empty(name: &str) -> Self {
        McpFace {
            exposed: Exposed {
                agents: BTreeMap::new(),
                tools: None,
                resume_tool: DEFAULT_RESUME_TOOL.to_owned(),
                implementation: Implementation::new(name, env!("CARGO_PKG_VERSION")),
                instructions: None,
            },
            identity: Identity::anonymous(),
        }
    }

    /// Exposes another agent as one tool named `name` (one of the same name is
    /// replaced). Its tool hides one of the [exposed tools](McpFace::with_tools) of the
    /// same name.
    pub fn with_agent(mut self, name: impl Into<String>, agent: impl Into<ServedAgent>) -> Self {
        self.exposed.agents.insert(name.into(), agent.into());
        self
    }

    /// Exposes the tools of `agent`'s runs (those of an agent exposed before are
    /// replaced).
    pub fn with_tools(mut self, agent: impl Into<ServedAgent>) -> Self {
        self.exposed.tools = Some(agent.into());
        self
    }

    /// Names the resume tool (default [`DEFAULT_RESUME_TOOL`]); an exposed tool of the
    /// same name hides it.
    pub fn resume_tool(mut self, name: impl Into<String>) -> Self {
        self.exposed.resume_tool = name.into();
        self
    }

    /// The server's name and version in its `initialize` answer (default: the first
    /// agent's name and this crate's version).
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.exposed.implementation = Implementation::new(name, version);
        self
    }

    /// What the server tells its clients about itself in its `initialize` answer.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.exposed.instructions = Some(instructions.into());
        self
    }

    /// Who calls over stdio (default: [anonymous](Identity::anonymous)): a stdio server
    /// is started by its one client, so the program says whose it is (its role for a
    /// role filter, say). HTTP callers are identified per request instead.
    pub fn identity(mut self, identity: Identity) -> Self {
        self.identity = identity;
        self
    }

    /// Serves one client on stdin and stdout until it closes them. Nothing else may
    /// write to stdout meanwhile.
    ///
    /// # Errors
    ///
    /// The client did not initialize, or the connection's task failed.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves one client on a byte stream (newline-delimited JSON-RPC, as on stdio) until
    /// it closes it.
    ///
    /// # Errors
    ///
    /// The client did not initialize, or the connection's task failed.
    pub async fn serve_io<R, W>(self, read: R, write: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let handler = FaceHandler {
            exposed: Arc::new(self.exposed),
            callers: Callers::Fixed(self.identity),
        };
        let running = handler.serve((read, write)).await?;
        running.waiting().await?;
        Ok(())
    }

    /// The streamable HTTP endpoint at [`MCP_PATH`] (`/mcp`), each request identified by
    /// `identify`, to serve alone or merge into an app (such as the
    /// [`Server`](crate::server::Server)'s router). Its sessions stay open until their
    /// clients close them; [`serve_http`](McpFace::serve_http) closes them on shutdown.
    ///
    /// Following rmcp, it answers only requests whose `Host` is a loopback name
    /// (against DNS rebinding); behind a proxy, pass the host through as loopback.
    pub fn into_router(self, identify: impl Identify) -> Router {
        http::router(Arc::new(self.exposed), identify, CancellationToken::new())
    }

    /// Serves the streamable HTTP endpoint on `listener` until `stop` completes, then
    /// closes the open sessions and returns once the connections are closed.
    ///
    /// # Errors
    ///
    /// The listener's.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::Agent;
    /// use tower_adk::mcp_server::McpFace;
    /// use tower_adk::server::Anonymous;
    /// use tower_adk::testing::{ScriptedModel, Turn};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let agent = Agent::builder(ScriptedModel::per_run([Turn::text("Hello!")])).build()?;
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// println!("MCP at http://{}/mcp", listener.local_addr()?);
    /// // In a program: `async { let _ = tokio::signal::ctrl_c().await; }`.
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let serving = tokio::spawn(McpFace::agent("greeter", agent).serve_http(
    ///     listener,
    ///     Anonymous,
    ///     async { let _ = stopped.await; },
    /// ));
    /// let _ = stop.send(());
    /// serving.await??;
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        identify: impl Identify,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let sessions = CancellationToken::new();
        let router = http::router(Arc::new(self.exposed), identify, sessions.clone());
        let stopped = async move {
            stop.await;
            sessions.cancel();
        };
        axum::serve(listener, router)
            .with_graceful_shutdown(stopped)
            .await?;
        Ok(())
    }
}

impl fmt::Debug for McpFace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpFace")
            .field("agents", &self.exposed.agents.keys().collect::<Vec<_>>())
            .field("tools", &self.exposed.tools.is_some())
            .field("resume_tool", &self.exposed.resume_tool)
            .field("identity", &self.identity.principal())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn the_face_and_its_serving_futures_can_move_to_other_tasks() {
        let agent = crate::agent::Agent::builder(crate::testing::ScriptedModel::default())
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let face = McpFace::agent("a", agent.clone()).with_tools(agent);
        assert_send_sync(&face);
        let (read, write) = tokio::io::duplex(64);
        assert_send(&face.serve_io(read, write));
    }

    #[tokio::test]
    async fn a_client_that_closes_before_initializing_is_an_initialize_error() {
        let agent = crate::agent::Agent::builder(crate::testing::ScriptedModel::default())
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let (ours, theirs) = tokio::io::duplex(1024);
        drop(theirs);
        let (read, write) = tokio::io::split(ours);
        let served = McpFace::agent("a", agent).serve_io(read, write).await;
        assert!(
            matches!(served, Err(ServeError::Initialize(_))),
            "{served:?}"
        );
    }
}
