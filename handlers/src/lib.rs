//! Built-in handlers for tower-adk agents, and one-line constructors for the common cases.
//!
//! | constructor | hook | what it does |
//! |-------------|------|--------------|
//! | [`instruction`] / [`instruction_fn`] | `before_agent` | sets the instruction, statically or from the run's extensions |
//! | [`add_tools`] | `before_agent` | adds tools to the run |
//! | [`filter_tools`] | `before_agent` | keeps only the tools a closure allows (e.g. by the caller's role) |
//! | [`return_directly`] | `before_agent` | makes tools end the run with their result, in this run |
//! | [`before_model`] / [`after_model`] | `before_model` / `after_model` | rewrites the history with a closure |
//! | [`wrap_model`] | `wrap_model` | wraps each model call with an async closure |
//! | [`wrap_tool_invoke`] / [`wrap_tool_stream`] | tool wrappers | wraps each tool call with an async closure |
//! | [`model_layer`], [`tool_layer`], [`tool_stream_layer`] | wrappers | any `tower::Layer` around each model or tool call |
//! | [`ToolTimeout`] | tool wrappers | a deadline per call, an idle timeout between stream chunks; default and per tool |
//! | [`ToolRetry`] | tool wrappers | retries idempotent tools on infrastructure errors, with a [`RetryPolicy`] (attempts, budget, backoff) |
//!
//! # Example
//!
//! ```
//! use adk::{Agent, AgentRequest};
//! use adk::testing::{text_tool, ScriptedModel, Turn};
//!
//! #[derive(Clone, PartialEq)]
//! enum Role { Admin, Viewer }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new([Turn::text("ok")]);
//! let agent = Agent::builder(model.clone())
//!     .tool(text_tool("read", "data"))
//!     .tool(text_tool("delete", "gone"))
//!     .build()?;
//!
//! // Viewers don't see `delete`; this one line runs on every request.
//! let by_role = adk_handlers::filter_tools(|ext, tool| {
//!     tool.name() != "delete" || ext.get::<Role>() == Some(&Role::Admin)
//! });
//! let request = AgentRequest::user("clean up")
//!     .with_extension(Role::Viewer)
//!     .with_handler(by_role)
//!     .with_handler(adk_handlers::instruction("Be careful."));
//! agent.run(request).await?;
//!
//! let seen = &model.requests()[0];
//! assert_eq!(seen.tool_names().collect::<Vec<_>>(), ["read"]);
//! assert_eq!(seen.messages[0].content(), "Be careful.");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod add_tools;
mod history;
mod instruction;
mod layers;
mod model_wrap;
pub mod retry;
mod return_directly;
pub mod timeout;
mod tool_filter;
mod tool_wrap;

pub use crate::add_tools::{AddTools, add_tools};
pub use crate::history::{AfterModelFn, BeforeModelFn, after_model, before_model};
pub use crate::instruction::{Instruction, InstructionFn, instruction, instruction_fn};
pub use crate::layers::{model_layer, tool_layer, tool_stream_layer};
pub use crate::model_wrap::{WrapModelFn, wrap_model};
pub use crate::retry::{RetryPolicy, ToolRetry};
pub use crate::return_directly::{ReturnDirectly, return_directly};
pub use crate::timeout::{Timeouts, ToolTimeout};
pub use crate::tool_filter::{ToolFilter, filter_tools};
pub use crate::tool_wrap::{
    WrapToolInvokeFn, WrapToolStreamFn, wrap_tool_invoke, wrap_tool_stream,
};
