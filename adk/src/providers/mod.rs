//! Real models and tools from other servers, each behind a cargo feature so that a user
//! who needs none of them compiles none of their dependencies.
//!
//! | feature | module | what it provides |
//! |---------|--------|------------------|
//! | `openai` | `openai` | a model for OpenAI-compatible chat completion servers: OpenAI, vLLM, Ollama, llama.cpp, ... |
//! | `mcp`   | `mcp`  | tools from MCP servers, over stdio (a child process) and streamable HTTP |

#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "openai")]
pub mod openai;
