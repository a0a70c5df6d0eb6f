//! Real models and tools from other servers, each behind a cargo feature so that a user
//! who needs none of them compiles none of their dependencies.
//!
//! | feature | module | what it provides |
//! |---------|--------|------------------|
//! | `openai` | `openai` | a model for OpenAI-compatible chat completion servers: OpenAI, vLLM, Ollama, llama.cpp, ... |
//! | `anthropic` | `anthropic` | a model for Anthropic's Messages API: Claude, with its thinking, prompt caching, images and PDFs |
//! | `openai-responses` | `openai::responses` | a model for OpenAI's Responses API (and gateways that serve it, such as LiteLLM): reasoning items kept and sent back byte for byte |
//! | `gemini` | `gemini` | Google's Gemini models, natively (the Generative Language API): thought signatures kept across turns, images and files both ways |
//! | `mcp`   | `mcp`  | tools from MCP servers, over stdio (a child process) and streamable HTTP |
//!
//! # Example
//!
//! An agent on an OpenAI-compatible server (`OPENAI_BASE_URL`, `OPENAI_API_KEY`,
//! `OPENAI_MODEL`) with the tools of an MCP server:
//!
//! ```no_run
//! # #[cfg(all(feature = "openai", feature = "mcp"))]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use tower_adk::providers::mcp::McpServer;
//! use tower_adk::providers::openai::OpenAiModel;
//! use tower_adk::{Agent, AgentRequest};
//!
//! let model = OpenAiModel::from_env()?;
//! let files = McpServer::stdio("mcp-server-filesystem", ["/srv/docs"]).name("files").connect().await?;
//! let agent = Agent::builder(model).tool_set(files).build()?;
//! let result = agent.run(AgentRequest::user("What is in the docs folder?")).await?;
//! println!("{}", result.final_message.content());
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod connection;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod future;
#[cfg(feature = "gemini")]
pub mod gemini;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod http;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "openai")]
pub mod openai;
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "a2a-client"
))]
pub mod sse;

#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
pub use self::connection::ConfigError;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
pub use self::future::ResponseFuture;
