//! End the run at a named tool: at its first call, or at its first successful call.

mod error;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use adk::ToolRequest;
use adk::{AgentConfig, BoxError, Finish, Handler, History, Message, RunContext};
use adk::{ToolCallNext, ToolResponse};

pub use self::error::{StopAtToolBuildError, StopToolNotCalled};

/// A handler that ends the run when the model calls one of the named tools, with that
/// call's result as the final message. Made with [`StopAtTool::builder`].
///
/// # Forms
///
/// A handler has one of two forms; configuring both is a [`StopAtToolBuildError`] from
/// [`build`](StopAtToolBuilder::build), so it is caught before any agent runs with it.
///
/// - **On call** ([`on_call`](StopAtToolBuilder::on_call)): the first turn in which the
///   model calls a stop tool is the last. The turn's other calls finish, then the run
///   completes with the stop call's result (a [`Message::Tool`]) as its final message,
///   without another model call. A call that fails (a tool error, invalid arguments, a
///   denial) ends the run too: the final message is then the failure the model would have
///   read (a tool message with `is_error` set), and the call's [record](adk::ToolRecord)
///   holds the error. In this form the call is the answer, whatever its outcome; to let
///   the model correct a failed call, use the until-success form. The stop tools are made
///   [return-directly](adk::AgentConfig::set_return_directly) in the run.
/// - **Until success** ([`until_success`](StopAtToolBuilder::until_success)): only a
///   successful call ends the run. The tool wrappers mark its output, invoked or
///   streamed, with [`Finish::WithResult`] (a streamed call finishes if its stream ends
///   without an error); an output that already says how it finishes keeps its own
///   [`Finish`]. A failed call is a tool result the model reads, and the model can try
///   again, as often as the agent's [max iterations](adk::AgentBuilder::max_iterations)
///   allow (then the run fails with [`AgentError::MaxIterations`](adk::AgentError::MaxIterations)).
///   In this form the stop tools are *not* return-directly in the run, even if the agent
///   made them so, since a failed call would then end it.
///
/// # When the run ends elsewhere
///
/// If the run ends without stopping at a stop tool (the model answers without calling
/// one, or, in the until-success form, without a call that succeeded; or another tool's
/// [`Finish`] or the agent's failure policy ends it first), the run fails with a
/// [`StopToolNotCalled`] error, the source of an [`AgentError::Handler`](adk::AgentError::Handler)
/// from this handler's `after_agent` hook. That hook runs once, when the run is about to
/// complete, whatever ended it, so it catches every way of ending (an `after_model` check
/// would see only plain answers). The model's last reply has already reached the caller
/// as events by then.
///
/// The run counts as stopped at a stop tool when the history ends with the results of a
/// turn that called one (successfully, in the until-success form). When several calls of
/// that turn finish the run, the first in the model's order wins (see [`Finish`]), so a
/// finishing call before the stop call gives the final message instead.
///
/// A stop tool must be one of the run's tools: a call of a name the run does not offer
/// is answered "unknown tool", and does not stop the run.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, Message};
/// use tower_adk::testing::{echo_tool, text_tool, ScriptedModel, Turn};
/// use tower_adk::handlers::StopAtTool;
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     Turn::call("c1", "search", json!({})),
///     Turn::call("c2", "submit", json!({"answer": 42})),
///     Turn::text("not reached"),
/// ]);
/// let agent = Agent::builder(model.clone())
///     .tool(text_tool("search", "the answer is 42"))
///     .tool(echo_tool("submit"))
///     .build()?;
/// let stop = StopAtTool::builder().on_call(["submit"]).build()?;
///
/// let result = agent.run(AgentRequest::user("find the answer").with_handler(stop)).await?;
/// assert_eq!(result.final_message, Message::tool("c2", "submit", r#"{"answer":42}"#));
/// assert_eq!(model.calls(), 2);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct StopAtTool {
    tools: Arc<BTreeSet<String>>,
    until_success: bool,
}

/// Configures a [`StopAtTool`]: the stop tools and the form. See [`StopAtTool::builder`].
///
/// # Example
///
/// ```
/// use tower_adk::handlers::StopAtTool;
///
/// let stop = StopAtTool::builder().until_success(["submit", "give_up"]).build()?;
/// assert!(stop.is_until_success());
/// assert_eq!(stop.tools().collect::<Vec<_>>(), ["give_up", "submit"]);
/// # Ok::<_, tower_adk::handlers::StopAtToolBuildError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct StopAtToolBuilder {
    on_call: BTreeSet<String>,
    until_success: BTreeSet<String>,
}

impl StopAtTool {
    /// Starts configuring a handler; name the stop tools with
    /// [`on_call`](StopAtToolBuilder::on_call) or
    /// [`until_success`](StopAtToolBuilder::until_success), then
    /// [`build`](StopAtToolBuilder::build).
    ///
    /// # Example
    ///
    /// ```
    /// let stop = tower_adk::handlers::StopAtTool::builder().on_call(["final_answer"]).build()?;
    /// assert!(!stop.is_until_success());
    /// # Ok::<_, tower_adk::handlers::StopAtToolBuildError>(())
    /// ```
    pub fn builder() -> StopAtToolBuilder {
        StopAtToolBuilder::default()
    }

    /// The stop tools, in name order.
    ///
    /// # Example
    ///
    /// ```
    /// let stop = tower_adk::handlers::StopAtTool::builder().on_call(["b", "a"]).build()?;
    /// assert_eq!(stop.tools().collect::<Vec<_>>(), ["a", "b"]);
    /// # Ok::<_, tower_adk::handlers::StopAtToolBuildError>(())
    /// ```
    pub fn tools(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(String::as_str)
    }

    /// Whether only a successful call ends the run.
    ///
    /// # Example
    ///
    /// ```
    /// let stop = tower_adk::handlers::StopAtTool::builder().until_success(["submit"]).build()?;
    /// assert!(stop.is_until_success());
    /// # Ok::<_, tower_adk::handlers::StopAtToolBuildError>(())
    /// ```
    pub fn is_until_success(&self) -> bool {
        self.until_success
    }

    /// Whether this call is one whose success the wrappers mark as finishing.
    fn marks(&self, request: &ToolRequest) -> bool {
        self.until_success && self.tools.contains(request.name.as_str())
    }

    /// Whether the history ends with the results of a turn that called a stop tool
    /// (successfully, in the until-success form).
    fn stopped(&self, messages: &[Message]) -> bool {
        messages
            .iter()
            .rev()
            .take_while(|message| !message.is_assistant())
            .any(|message| match message {
                Message::Tool { name, is_error, .. } => {
                    self.tools.contains(name.as_str()) && !(self.until_success && *is_error)
                }
                _ => false,
            })
    }
}

impl StopAtToolBuilder {
    /// Ends the run at the first call of any of these tools, successful or not (the
    /// on-call form).
    ///
    /// # Example
    ///
    /// ```
    /// let stop = tower_adk::handlers::StopAtTool::builder().on_call(["submit"]).build()?;
    /// # let _ = stop;
    /// # Ok::<_, tower_adk::handlers::StopAtToolBuildError>(())
    /// ```
    pub fn on_call<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.on_call.extend(names.into_iter().map(Into::into));
        self
    }

    /// Ends the run at the first successful call of any of these tools; a failed call
    /// lets the model try again (the until-success form).
    ///
    /// # Example
    ///
    /// ```
    /// let stop = tower_adk::handlers::StopAtTool::builder().until_success(["submit"]).build()?;
    /// # let _ = stop;
    /// # Ok::<_, tower_adk::handlers::StopAtToolBuildError>(())
    /// ```
    pub fn until_success<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.until_success.extend(names.into_iter().map(Into::into));
        self
    }

    /// Builds the handler.
    ///
    /// # Errors
    ///
    /// [`StopAtToolBuildError::BothForms`] if both [`on_call`](Self::on_call) and
    /// [`until_success`](Self::until_success) named tools;
    /// [`StopAtToolBuildError::NoTools`] if neither did.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{StopAtTool, StopAtToolBuildError};
    ///
    /// let both = StopAtTool::builder().on_call(["a"]).until_success(["b"]).build();
    /// assert!(matches!(both, Err(StopAtToolBuildError::BothForms { .. })));
    /// ```
    pub fn build(self) -> Result<StopAtTool, StopAtToolBuildError> {
        let (tools, until_success) = match (self.on_call.is_empty(), self.until_success.is_empty())
        {
            (true, true) => return Err(StopAtToolBuildError::NoTools),
            (false, false) => {
                return Err(StopAtToolBuildError::BothForms {
                    on_call: self.on_call.into_iter().collect(),
                    until_success: self.until_success.into_iter().collect(),
                });
            }
            (false, true) => (self.on_call, false),
            (true, false) => (self.until_success, true),
        };
        Ok(StopAtTool {
            tools: Arc::new(tools),
            until_success,
        })
    }
}

impl Handler for StopAtTool {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("stop_at_tool")
    }

    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        // On call, the loop ends the run at any call, failed or not; until success, the
        // wrappers below end it at a successful one, so return-directly must be off.
        for name in self.tools.iter() {
            config.set_return_directly(name.as_str(), !self.until_success);
        }
        Ok(config)
    }

    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        let marks = self.marks(&request);
        let response = next.run(request).await?;
        if marks && response.finish().is_none() {
            return Ok(response.finishing(Finish::WithResult));
        }
        Ok(response)
    }

    async fn after_agent(&self, _: &mut RunContext, history: &mut History) -> Result<(), BoxError> {
        if self.stopped(&history.messages) {
            return Ok(());
        }
        Err(StopToolNotCalled {
            tools: self.tools.iter().cloned().collect(),
            until_success: self.until_success,
        }
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        assert_send_sync::<StopAtTool>();
        assert_send_sync::<StopAtToolBuilder>();
        assert_send_sync::<StopAtToolBuildError>();
        assert_send_sync::<StopToolNotCalled>();
    }

    #[test]
    fn a_turn_counts_as_stopped_only_by_its_own_results() {
        let stop = StopAtTool::builder()
            .until_success(["submit"])
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let earlier_success = [
            Message::tool("c1", "submit", "ok"),
            Message::assistant("done without tools"),
        ];
        assert!(!stop.stopped(&earlier_success));
        let failed = [
            Message::assistant(""),
            Message::tool_error("c2", "submit", "bad"),
        ];
        assert!(!stop.stopped(&failed));
        let succeeded = [Message::assistant(""), Message::tool("c3", "submit", "ok")];
        assert!(stop.stopped(&succeeded));
    }
}
