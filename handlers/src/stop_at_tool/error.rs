//! The errors of [`StopAtTool`](super::StopAtTool): a configuration its builder refuses
//! ([`StopAtToolBuildError`]), and a run that ended without stopping at one of its stop
//! tools ([`StopToolNotCalled`]).

use std::fmt;

/// Why a [`StopAtToolBuilder`](super::StopAtToolBuilder) could not build a
/// [`StopAtTool`](super::StopAtTool).
///
/// [`build`](super::StopAtToolBuilder::build) checks the configuration when the handler is
/// made, so a wrong one is caught before any agent runs with it.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::{StopAtTool, StopAtToolBuildError};
///
/// let error = StopAtTool::builder().on_call(["submit"]).until_success(["submit"]).build().unwrap_err();
/// assert!(matches!(error, StopAtToolBuildError::BothForms { .. }));
/// assert!(error.to_string().contains("both"));
///
/// let error = StopAtTool::builder().build().unwrap_err();
/// assert_eq!(error, StopAtToolBuildError::NoTools);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StopAtToolBuildError {
    /// Both forms were configured: stopping at any call
    /// ([`on_call`](super::StopAtToolBuilder::on_call)) and stopping at a successful call
    /// ([`until_success`](super::StopAtToolBuilder::until_success)). A handler has one form.
    #[error(
        "stop-at-tool is configured with both forms: on call of {} and until success of {}; choose one",
        Names(on_call),
        Names(until_success)
    )]
    BothForms {
        /// The tools given to `on_call`.
        on_call: Vec<String>,
        /// The tools given to `until_success`.
        until_success: Vec<String>,
    },
    /// No stop tool was named, so every run would fail.
    #[error("stop-at-tool names no tool to stop at")]
    NoTools,
}

/// A run ended without stopping at one of its stop tools: the model answered without
/// calling one, or (in the until-success form) without a call that succeeded, or
/// something else ended the run first.
///
/// It is the source of the run's [`AgentError::Handler`](adk::AgentError::Handler), from the
/// `after_agent` hook of the [`StopAtTool`](super::StopAtTool) handler.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, Hook};
/// use tower_adk::testing::{text_tool, ScriptedModel, Turn};
/// use tower_adk::handlers::{StopAtTool, StopToolNotCalled};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([Turn::text("Here is my answer, no tool needed.")]);
/// let agent = Agent::builder(model).tool(text_tool("submit", "saved")).build()?;
/// let stop = StopAtTool::builder().on_call(["submit"]).build()?;
///
/// let error = agent.run(AgentRequest::user("go").with_handler(stop)).await.unwrap_err();
/// let failed = error.as_handler().unwrap();
/// assert_eq!(failed.hook(), Hook::AfterAgent);
/// let source = std::error::Error::source(failed).unwrap();
/// let not_called = source.downcast_ref::<StopToolNotCalled>().unwrap();
/// assert_eq!(not_called.tools, ["submit"]);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error(
    "the run ended without {} of a stop tool ({})",
    if *.until_success { "a successful call" } else { "a call" },
    Names(tools)
)]
pub struct StopToolNotCalled {
    /// The stop tools, in name order.
    pub tools: Vec<String>,
    /// Whether the handler was in the until-success form.
    pub until_success: bool,
}

/// Tool names as `` `a`, `b` `` in messages.
struct Names<'a>(&'a [String]);

impl fmt::Display for Names<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{name}`")?;
        }
        Ok(())
    }
}
