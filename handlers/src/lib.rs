//! Built-in handlers for tower-adk agents, and one-line constructors for the common cases.
//!
//! | constructor | hook | what it does |
//! |-------------|------|--------------|
//! | [`before_agent`] / [`after_agent`] | `before_agent` / `after_agent` | rewrites the run's config at its start, or acts on its end, with a closure that sees the run context |
//! | [`instruction`] / [`instruction_fn`] | `before_agent` | sets the instruction, statically or from the run's extensions |
//! | [`add_tools`] | `before_agent` | adds tools to the run |
//! | [`filter_tools`] | `before_agent` | keeps only the tools a closure allows (e.g. by the caller's role) |
//! | [`return_directly`] | `before_agent` | makes tools end the run with their result, in this run |
//! | [`before_model`] / [`after_model`] | `before_model` / `after_model` | rewrites the history with a closure |
//! | [`wrap_model`] | `wrap_model` | wraps each model call with an async closure |
//! | [`wrap_tool_invoke`] / [`wrap_tool_stream`] | tool wrappers | wraps each tool call with an async closure |
//! | [`model_layer`], [`tool_layer`] | wrappers | any `tower::Layer` around each model call, or each tool call (streamed ones whole) |
//! | [`CallLimits`] | all | limits the model calls, tool calls and calls per tool of a run |
//! | [`policy`] / [`policy_async`] ([`PolicyGate`]) | tool wrappers | allows, denies, rewrites or asks about each call (an approver, or a person: the run is interrupted) |
//! | [`HumanApproval`] | `before_agent`, `after_model`, tool wrappers | stops the run at the calls that need a person's approval (by tool, or by a predicate over the arguments and the caller), per call or per turn; approve, edit, reject, respond, or approve a tool for the rest of the thread |
//! | [`map_arguments`] | tool wrappers | transforms the arguments before the tool (re-validated) |
//! | [`map_output`] / [`map_output_chunks`] | tool wrappers | transforms the output after the tool |
//! | [`max_output_bytes`] / [`max_output_chars`] | tool wrappers | caps the output, marking the cut; stops a stream at the cap |
//! | [`untrusted_envelope`] | tool wrappers | marks the output as untrusted data the tool cannot break out of |
//! | [`tool_guard`] ([`ToolGuard`]) | tool wrappers | all of the above in one handler, in a fixed order |
//! | [`ToolTimeout`] | tool wrappers | a deadline per call, an idle timeout between stream chunks; default and per tool |
//! | [`ToolRetry`] | tool wrappers | retries idempotent tools on infrastructure errors, with a [`RetryPolicy`] (attempts, budget, backoff) |
//! | [`StopAtTool`] | `before_agent`, tool wrappers, `after_agent` | ends the run at a named tool's call (or its first success); a run that ends elsewhere fails |
//! | [`task_completed`] ([`TaskCompleted`]) | `before_agent`, `wrap_model`, `after_model` | adds a `task_completed` tool that ends the run with the model's closing text, asking for one if there is none |
//! | [`SlotFilling`] | `before_agent`, `after_agent`, tools | generates `set_slot_<name>` tools; ends the run once the slots are filled; the values in the result, and carried to the next run on the thread |
//! | [`Summarizer`] | `before_model` | keeps the history within a token budget: older turns replaced by a model's summary, tool calls never split from their results |
//! | [`ToolResultOffload`] | `before_agent`, `before_model`, `after_agent` | context editing: old, large tool results leave the history for a reference the model reads back with `read_tool_result` (or are cleared) |
//! | [`Fallback`] ([`FallbackLayer`]) | (a model service) | falls back to other models when one fails, before its first streamed delta too |
//! | [`PromptTemplate`] | `before_agent`, `before_model` | renders the instruction from a minijinja template: description, slots, date and time in a time zone, resumed |
//!
//! # The tool pipeline
//!
//! The tool-call handlers are usable alone; [`ToolGuard`] puts them in one handler, in
//! the documented order, by construction: the core validates the arguments, then the
//! policy, the argument transforms, the other tool wrappers, the tool, the output
//! transforms, the limit and the envelope. Register it first; see [`ToolGuard`].
//!
//! # Example
//!
//! ```
//! use tower_adk::{Agent, AgentRequest};
//! use tower_adk::testing::{text_tool, ScriptedModel, Turn};
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
//! let by_role = tower_adk::handlers::filter_tools(|ext, tool| {
//!     tool.name() != "delete" || ext.get::<Role>() == Some(&Role::Admin)
//! });
//! let request = AgentRequest::user("clean up")
//!     .with_extension(Role::Viewer)
//!     .with_handler(by_role)
//!     .with_handler(tower_adk::handlers::instruction("Be careful."));
//! agent.run(request).await?;
//!
//! let seen = &model.requests()[0];
//! assert_eq!(seen.tool_names().collect::<Vec<_>>(), ["read"]);
//! assert_eq!(seen.messages[0].content(), "Be careful.");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod add_tools;
mod approval;
mod call_limits;
mod envelope;
mod fallback;
mod guard;
mod history;
mod instruction;
mod layers;
mod map_arguments;
mod map_output;
mod model_wrap;
mod offload;
mod output_limit;
mod output_stage;
mod policy;
pub mod retry;
mod return_directly;
mod revalidate;
mod run_hooks;
mod slots;
mod stop_at_tool;
mod summarize;
mod task_completed;
#[cfg(feature = "templates")]
mod template;
pub mod timeout;
pub mod tokens;
mod tool_filter;
mod tool_wrap;

pub use crate::add_tools::{AddTools, add_tools};
pub use crate::approval::{AlwaysApprove, ApprovalRule, DecisionKind, HumanApproval};
pub use crate::call_limits::{CallLimitExceeded, CallLimits, OnLimit};
pub use crate::envelope::{DEFAULT_NOTE, UntrustedEnvelope, untrusted_envelope};
pub use crate::fallback::{Fallback, FallbackFuture, FallbackLayer};
pub use crate::guard::{ToolGuard, tool_guard};
pub use crate::history::{AfterModelFn, BeforeModelFn, after_model, before_model};
pub use crate::instruction::{Instruction, InstructionFn, instruction, instruction_fn};
pub use crate::layers::{model_layer, tool_layer};
pub use crate::map_arguments::{MapArguments, map_arguments};
pub use crate::map_output::{MapOutput, map_output, map_output_chunks};
pub use crate::model_wrap::{WrapModelFn, wrap_model};
pub use crate::offload::{READ_TOOL, STORE_KEY, ToolResultOffload};
pub use crate::output_limit::{OutputLimit, max_output_bytes, max_output_chars};
pub use crate::policy::{
    AllowAll, Approval, AsyncPolicy, Decision, Policy, PolicyGate, policy, policy_async,
};
pub use crate::retry::{RetryPolicy, ToolRetry};
pub use crate::return_directly::{ReturnDirectly, return_directly};
pub use crate::run_hooks::{AfterAgentFn, BeforeAgentFn, after_agent, before_agent};
pub use crate::slots::{Slot, SlotError, SlotFilling, SlotKind, SlotValue, SlotValues};
pub use crate::stop_at_tool::{
    StopAtTool, StopAtToolBuildError, StopAtToolBuilder, StopToolNotCalled,
};
pub use crate::summarize::{DEFAULT_PROMPT, SUMMARY_PREFIX, Summarizer};
pub use crate::task_completed::{TaskCompleted, task_completed};
#[cfg(feature = "templates")]
pub use crate::template::{PromptTemplate, Resumed, TemplateError};
pub use crate::timeout::{Timeouts, ToolTimeout};
pub use crate::tokens::{CharEstimate, TokenCounter, counter_for_model};
#[cfg(feature = "tiktoken")]
pub use crate::tokens::{Tiktoken, UnknownModel};
pub use crate::tool_filter::{ToolFilter, filter_tools};
pub use crate::tool_wrap::{
    WrapToolInvokeFn, WrapToolStreamFn, wrap_tool_invoke, wrap_tool_stream,
};
