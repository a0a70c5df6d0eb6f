//! Models and tools backed by real servers, each behind a cargo feature so that a user who
//! needs none of them compiles none of their dependencies.
//!
//! | module | feature | what |
//! |---|---|---|
//! | `openai` | `openai` | a model for OpenAI-compatible chat completion servers: OpenAI, vLLM, Ollama, llama.cpp, ... |

#[cfg(feature = "openai")]
pub mod openai;
