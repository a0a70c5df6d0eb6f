//! A built-in `task_completed` tool: the model says it is done, and the run completes
//! with its closing text.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Arc;

use adk::model::ToolChoice;
use adk::{AgentConfig, BoxError, Finish, Handler, Locals, Message, ModelNext, ModelRequest};
use adk::{History, ModelResponse, RunContext, Tool, ToolInfo, ToolOutput, ToolRequest};

/// A handler that gives the model a `task_completed` tool to end the run with, and
/// completes the run with the model's closing text when it is called.
///
/// - **The tool**: `task_completed` takes no parameters; its description is replaceable
///   with [`description`](TaskCompleted::description). The handler adds it to every run
///   (in `before_agent`), replacing any tool of that name. Its result, which the model
///   never needs, is a neutral `"ok"`.
/// - **Called with text** ("Your table is booked."): the turn's other tool calls still
///   run, then the run completes ([`RunStatus::Completed`](adk::RunStatus::Completed))
///   with that text as its final message (an assistant message), without another model
///   call (the tool finishes the run with [`Finish::WithTurnText`]).
/// - **Called without text**: the turn's other calls run, then the model is called once
///   more, with no tools offered ([`ToolChoice::None`]) and a one-turn system message
///   asking for a short closing line (replaceable with
///   [`closing_prompt`](TaskCompleted::closing_prompt)). The run completes with that
///   reply as its final message; any tool calls in it are dropped (in `after_model`), so
///   it cannot call `task_completed` again.
///
/// The one-turn system message is added in `wrap_model`, to that model call's request
/// only: it comes after the history (after the turn's tool results), never enters the
/// history itself, so the run's result and later calls don't hold it, and other
/// handlers' history hooks never see it. Wrappers registered after this handler (inner
/// ones) see it in the request. The extra call counts toward the agent's max iterations.
///
/// When other calls of the turn finish the run too, the first in the model's order wins
/// (see [`Finish`]).
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, Message, RunStatus};
/// use tower_adk::testing::{text_tool, ScriptedModel, Turn};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     Turn::call("c1", "book", json!({}))
///         .with_call("c2", "task_completed", json!({}))
///         .with_text("Your table for two is booked."),
/// ]);
/// let agent = Agent::builder(model.clone()).tool(text_tool("book", "booked")).build()?;
///
/// let request = AgentRequest::user("book a table").with_handler(tower_adk::handlers::task_completed());
/// let result = agent.run(request).await?;
///
/// assert_eq!(result.status, RunStatus::Completed);
/// assert_eq!(result.final_message, Message::assistant("Your table for two is booked."));
/// assert_eq!(result.tool_records[0].content, "booked"); // the other call ran
/// assert_eq!(model.requests()[0].tool_names().collect::<Vec<_>>(), ["book", "task_completed"]);
/// assert_eq!(model.calls(), 1);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct TaskCompleted {
    tool: Tool,
    closing_prompt: Arc<str>,
}

/// A [`TaskCompleted`] handler with the default description and closing prompt.
///
/// # Example
///
/// ```
/// let handler = tower_adk::handlers::task_completed();
/// assert_eq!(handler.tool().name(), "task_completed");
/// ```
pub fn task_completed() -> TaskCompleted {
    TaskCompleted::new()
}

/// Whether the run is asking the model for its closing line: from the reply that called
/// `task_completed` without text to the closing reply. Kept in the run-local values
/// (under [`TaskCompleted::LOCALS_KEY`]), so a checkpoint keeps it.
fn closing(locals: &Locals) -> bool {
    matches!(
        locals.get::<bool>(TaskCompleted::LOCALS_KEY),
        Ok(Some(true))
    )
}

impl TaskCompleted {
    /// The name of the tool.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(tower_adk::handlers::TaskCompleted::TOOL_NAME, "task_completed");
    /// ```
    pub const TOOL_NAME: &'static str = "task_completed";

    /// The run-local value that says the run is asking for a closing line.
    pub const LOCALS_KEY: &'static str = "task_completed.closing";

    /// The tool's description unless replaced.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::TaskCompleted;
    /// assert_eq!(TaskCompleted::new().tool().info().description, TaskCompleted::DEFAULT_DESCRIPTION);
    /// ```
    pub const DEFAULT_DESCRIPTION: &'static str = "Call this when the user's task is \
        complete. Write your closing message to the user in the same reply.";

    /// The one-turn system message of the extra model call unless replaced.
    ///
    /// # Example
    ///
    /// ```
    /// assert!(tower_adk::handlers::TaskCompleted::DEFAULT_CLOSING_PROMPT.contains("closing line"));
    /// ```
    pub const DEFAULT_CLOSING_PROMPT: &'static str = "Write a short closing line for the user.";

    /// The tool's result.
    const RESULT: &'static str = "ok";

    /// A handler with the default description and closing prompt, the same as
    /// [`task_completed`].
    ///
    /// # Example
    ///
    /// ```
    /// let handler = tower_adk::handlers::TaskCompleted::new();
    /// # let _ = handler;
    /// ```
    pub fn new() -> Self {
        TaskCompleted {
            tool: completion_tool(Self::DEFAULT_DESCRIPTION),
            closing_prompt: Arc::from(Self::DEFAULT_CLOSING_PROMPT),
        }
    }

    /// Replaces the tool's description, which tells the model when to call it.
    ///
    /// # Example
    ///
    /// ```
    /// let handler = tower_adk::handlers::task_completed()
    ///     .description("Call this once the booking is confirmed, with a goodbye.");
    /// assert!(handler.tool().info().description.starts_with("Call this once"));
    /// ```
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool = completion_tool(description);
        self
    }

    /// Replaces the one-turn system message that asks the model for a closing line when
    /// it called the tool without text.
    ///
    /// # Example
    ///
    /// ```
    /// let handler = tower_adk::handlers::task_completed().closing_prompt("Say goodbye in one line.");
    /// # let _ = handler;
    /// ```
    pub fn closing_prompt(mut self, prompt: impl Into<Arc<str>>) -> Self {
        self.closing_prompt = prompt.into();
        self
    }

    /// The `task_completed` tool the handler adds to each run.
    ///
    /// # Example
    ///
    /// ```
    /// let handler = tower_adk::handlers::task_completed();
    /// assert_eq!(handler.tool().info().parameters["properties"], serde_json::json!({}));
    /// ```
    pub fn tool(&self) -> &Tool {
        &self.tool
    }
}

impl Default for TaskCompleted {
    fn default() -> Self {
        TaskCompleted::new()
    }
}

/// The tool: it finishes the run with the turn's text, unless the turn had none and the
/// run is about to ask for a closing line.
fn completion_tool(description: impl Into<String>) -> Tool {
    Tool::from_fn(
        ToolInfo::new(TaskCompleted::TOOL_NAME, description),
        |request: ToolRequest| async move {
            let output = ToolOutput::new(TaskCompleted::RESULT);
            if closing(&request.locals()) {
                return Ok::<_, Infallible>(output);
            }
            Ok(output.finishing(Finish::WithTurnText))
        },
    )
}

/// Whether the model's reply calls `task_completed` and has no text to close with.
fn completes_without_text(reply: &Message) -> bool {
    reply.content().trim().is_empty()
        && reply
            .tool_calls()
            .iter()
            .any(|call| call.name == TaskCompleted::TOOL_NAME)
}

impl Handler for TaskCompleted {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("task_completed")
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        let _ = cx;
        config.add_tool(self.tool.clone());
        Ok(config)
    }

    async fn wrap_model(
        &self,
        mut request: ModelRequest,
        next: ModelNext,
    ) -> Result<ModelResponse, BoxError> {
        if closing(&request.locals()) {
            request
                .messages
                .push(Message::system(&*self.closing_prompt));
            request.tools = Arc::from([]);
            request.options.tool_choice = ToolChoice::None;
        }
        next.run(request).await
    }

    async fn after_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        if closing(cx.locals()) {
            cx.locals_mut().remove(Self::LOCALS_KEY);
            // The closing reply ends the run, whatever it asks for.
            // (Checked first: `last_mut` copies the history if it is shared.)
            let has_calls = history
                .messages
                .last()
                .is_some_and(|m| !m.tool_calls().is_empty());
            if has_calls
                && let Some(calls) = history
                    .messages
                    .last_mut()
                    .and_then(Message::tool_calls_mut)
            {
                calls.clear();
            }
        } else if history.messages.last().is_some_and(completes_without_text) {
            cx.locals_mut().insert(Self::LOCALS_KEY, &true)?;
        }
        Ok(())
    }
}
