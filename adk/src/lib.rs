//! The core of tower-adk: LLM agents as tower services, customised per request by
//! handlers.
//!
//! - An [`Agent`] is a `tower::Service<AgentRequest>` whose response is an [`AgentRun`]: a
//!   stream of [`AgentEvent`]s that can be awaited to its [`AgentResult`].
//! - Models ([`ModelRequest`] → [`ModelResponse`]) and tools ([`ToolRequest`] →
//!   [`ToolOutput`] or [`ToolStream`]) are tower services too, so stock tower middleware
//!   wraps them unchanged.
//! - [`Handler`]s customise each run at fixed points (see [`handler`]); they come from
//!   [`HandlerLayer`]s on the agent and from the request itself.
//! - [`output`] makes an agent's runs end with a typed answer ([`TypedAgent`]).
//! - [`compose`] makes agents of agents: an agent as a tool, handoffs, workflows;
//!   `a2a::client` (feature `a2a-client`) adds agents elsewhere that speak A2A.
//! - [`testing`] has a scripted model and small tools for tests.
//! - `eval` (feature `eval`) runs eval sets against an agent and scores them.
//! - [`wire`] is the versioned JSON form of a run's events and result; `server` (feature
//!   `server`) serves agents over HTTP with it.
//! - [`providers`] has a model for OpenAI-compatible servers (feature `openai`) and tools
//!   from MCP servers (feature `mcp`); `tracing` adds spans with `gen_ai.*` attributes
//!   (`telemetry`), and `otel` exports them over OTLP.
//! - `mcp_server` (feature `mcp-server`) serves an agent, or its tools, to MCP clients.
//!
//! # Example
//!
//! ```
//! use tower_adk::{Agent, AgentConfig, AgentRequest, Handler, RunContext};
//! use tower_adk::testing::{text_tool, ScriptedModel, Turn};
//! use serde_json::json;
//! use tower::{BoxError, ServiceExt};
//!
//! /// Greets by name: rewrites the instruction from the caller's identity.
//! struct Greeter;
//!
//! #[derive(Clone)]
//! struct UserName(String);
//!
//! impl Handler for Greeter {
//!     async fn before_agent(&self, cx: &mut RunContext, mut config: AgentConfig) -> Result<AgentConfig, BoxError> {
//!         let name = cx.extensions().get::<UserName>().map_or("friend", |u| u.0.as_str());
//!         config.set_instruction(format!("Address the user as {name}."));
//!         Ok(config)
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new([
//!     Turn::call("c1", "time", json!({})),
//!     Turn::text("Ada, it is noon."),
//! ]);
//! let agent = Agent::builder(model.clone()).tool(text_tool("time", "12:00")).build()?;
//!
//! let request = AgentRequest::user("What time is it?")
//!     .with_extension(UserName("Ada".into()))
//!     .with_handler(Greeter);
//! let result = agent.oneshot(request).await?.await?;
//!
//! assert_eq!(result.final_message.content(), "Ada, it is noon.");
//! assert_eq!(model.requests()[0].messages[0].content(), "Address the user as Ada.");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

#[cfg(feature = "a2a")]
pub mod a2a;
pub mod agent;
pub mod auth;
pub mod checkpoint;
pub mod compose;
mod config;
pub mod content;
pub mod context;
pub mod error;
#[cfg(feature = "eval")]
pub mod eval;
pub mod handler;
mod hook;
pub mod interrupt;
#[cfg(feature = "mcp-server")]
pub mod mcp_server;
pub mod message;
pub mod model;
pub mod output;
pub mod providers;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "tracing")]
pub mod telemetry;
#[cfg(not(feature = "tracing"))]
mod telemetry;
pub mod testing;
pub mod tool;
pub mod wire;

// What every user needs with this crate, at the versions it uses: `futures` to read a
// run's events, `serde` and `schemars` to derive a typed tool's arguments, `serde_json`
// for schemas and arguments.
pub use futures;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::agent::{
    Agent, AgentBuilder, AgentConfig, AgentError, AgentEvent, AgentRequest, AgentResult, AgentRun,
    AwaitRun, AwaitRunLayer, HandlerLayer, HandlerService, Run, RunResult, RunStatus, RunStep,
    ToolFailurePolicy,
};
pub use crate::content::{Content, Part};
#[allow(deprecated)]
pub use crate::context::RunState;
pub use crate::context::{History, Locals, LocalsGuard, RunContext};
pub use crate::error::{BuildError, Panicked};
pub use crate::handler::{BoxHandler, Handler, HandlerError, Hook, Hooks, ModelNext};
pub use crate::handler::{StreamNext, ToolCallNext, ToolNext};
pub use crate::message::{Message, Messages, SmolStr, ToolCall};
pub use crate::model::{
    BoxModel, MessageAccumulator, ModelDelta, ModelError, ModelOptions, ModelRequest, ModelResponse,
};
pub use crate::output::{OutputError, TypedAgent, TypedResult};
pub use crate::tool::{Finish, ToolRecord, ToolResponse, ToolStream};
pub use crate::tool::{
    Tool, ToolContext, ToolError, ToolErrorKind, ToolInfo, ToolOutput, ToolRequest,
};
/// The typed extensions of a run (re-exported from `http`).
pub use http::Extensions;
pub use tower::BoxError;
