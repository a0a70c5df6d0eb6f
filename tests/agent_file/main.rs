//! Agents from YAML files (`tower_adk::file`): every setting through a run with the
//! scripted model, every problem with its line and column, the registry, and the
//! example files in examples/agents/.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod errors;
mod examples;
mod hostile;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "openai")]
mod openai;
#[cfg(all(
    feature = "anthropic",
    feature = "openai-responses",
    feature = "gemini"
))]
mod providers;
mod registry;
#[cfg(feature = "server")]
mod served;
mod settings;
mod support;
