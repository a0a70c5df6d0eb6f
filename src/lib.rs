//! LLM agents as [tower](https://docs.rs/tower) `Service`s, customised per request by
//! composable handler layers.
//!
//! - An [`Agent`] is a `Service<AgentRequest>` that answers with an [`AgentRun`]: a stream
//!   of [`AgentEvent`]s that can also be awaited for its [`AgentResult`]. [`AwaitRun`] is
//!   the same agent as a service whose response is the final result, so stock tower
//!   layers around it bound whole runs.
//! - [`Handler`]s customise each run at fixed points: `before_agent` rewrites the run's
//!   instruction and tools (e.g. by the caller's role), `before_model` / `after_model`
//!   rewrite the history, `wrap_model` and the tool wrappers wrap each call. They come
//!   from [`HandlerLayer`]s and from the request itself; [`handlers`] has the built-in ones
//!   and one-line constructors from closures and tower layers.
//! - Tools ([`Tool`], typed ones with [`Tool::typed`]) and models are tower services too:
//!   stock tower middleware wraps them unchanged, streamed tool calls included.
//! - [`testing`] has a scripted model and small tools for your tests; [`providers`] has a
//!   model for OpenAI-compatible servers (feature `openai`) and tools from MCP servers
//!   (feature `mcp`).
//! - [`futures`], [`serde`], [`schemars`] and [`serde_json`] are re-exported at the
//!   versions this crate uses. (Deriving with the re-exports needs
//!   `#[serde(crate = "tower_adk::serde")]` and `#[schemars(crate = "tower_adk::schemars")]`.)
//!
//! # Example
//!
//! ```
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use tower_adk::{Agent, AgentRequest, Tool, ToolContext};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct City {
//!     name: String,
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let weather = Tool::typed("weather", "Weather in a city", |_: ToolContext, city: City| async move {
//!     Ok(format!("sunny in {}", city.name))
//! });
//! let model = ScriptedModel::new([
//!     Turn::call("c1", "weather", json!({"name": "Oslo"})),
//!     Turn::text("It is sunny in Oslo."),
//! ]);
//! let agent = Agent::builder(model).tool(weather).build()?;
//!
//! let result = agent.run(AgentRequest::user("Weather in Oslo?")).await?;
//! assert_eq!(result.tool_records[0].content, "sunny in Oslo");
//! assert_eq!(result.final_message.content(), "It is sunny in Oslo.");
//! # Ok::<_, tower_adk::BoxError>(())
//! # }).unwrap();
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---------|---------|--------------|
//! | `validation` | yes | each call's arguments checked against the tool's JSON Schema (jsonschema) |
//! | `templates` | yes | `handlers::PromptTemplate`: instructions from minijinja templates, with dates in IANA time zones (jiff) |
//! | `tzdb-bundle` | yes | the IANA time zone database built in, for systems without one |
//! | `openai` | no | `providers::openai`: a model for OpenAI-compatible servers (reqwest, rustls) |
//! | `openai-responses` | no | `providers::openai::responses`: a model for OpenAI's Responses API, reasoning kept across turns (with `openai`) |
//! | `mcp` | no | `providers::mcp`: tools from MCP servers (rmcp) |
//! | `a2a-client` | no | `a2a::client`: remote A2A agents as tools and handoff targets, and `remote_agents:` in agent files (reqwest, with `a2a`) |
//! | `tracing` | no | a span per run, model call and tool call, with `gen_ai.*` attributes (`telemetry`) |
//! | `otel` | no | `telemetry::otlp`: the spans exported over OTLP/HTTP; the server continues a request's `traceparent` |
//! | `cassette` | no | `testing::cassette`: a real model's calls recorded to a file (secrets scrubbed) and replayed in tests, with a diff when a request drifts |
//! | `config` | no | `file`: agents described in YAML files, loaded with the program's own tools and handlers (saphyr, strsim) |
//! | `eval` | no | `eval`: eval sets run against an agent and scored, reports as JSON and HTML (regex, jsonschema); with `config`, `file::EvalSetFile` |
//!
//! The README (on the repository) has the design, the built-in handlers and the
//! benchmarks.

pub use adk::*;
pub use adk_handlers as handlers;

#[cfg(feature = "config")]
pub mod file;

/// The README's code blocks, compiled and run as doc tests: what it shows works as
/// written.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
