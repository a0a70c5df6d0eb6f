//! tower-adk: LLM agents as tower `Service`s, customised per request by composable
//! handler layers.
//!
//! This facade re-exports the core ([`adk`], at the root) and the built-in handlers
//! ([`handlers`]). See the README for a tour and the examples.
//!
//! # Example
//!
//! ```
//! use tower_adk::{Agent, AgentRequest};
//! use tower_adk::testing::{ScriptedModel, Turn};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let agent = Agent::builder(ScriptedModel::new([Turn::text("Hi!")])).build()?;
//! let result = agent
//!     .run(AgentRequest::user("hello").with_handler(tower_adk::handlers::instruction("Be brief.")))
//!     .await?;
//! assert_eq!(result.final_message.content(), "Hi!");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

pub use adk::*;
pub use adk_handlers as handlers;
