//! Limit the model calls and tool calls of a run.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use adk::model::ToolChoice;
use adk::{BoxError, Handler, Locals, ModelNext, ModelRequest, ModelResponse, RunContext};
use adk::{History, ToolError, ToolErrorKind, ToolRequest};
use adk::{ToolCallNext, ToolResponse};
use serde::{Deserialize, Serialize};

/// What happens when a run reaches one of its [`CallLimits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnLimit {
    /// End the run gracefully: the call over the limit is not made, and the model is
    /// called once more without tools for a final answer (when the model-call limit is
    /// reached, its last allowed call is the one made without tools).
    #[default]
    EndRun,
    /// Fail the run with a [`CallLimitExceeded`] error (inside
    /// [`AgentError::Handler`](adk::AgentError::Handler)).
    Error,
    /// Answer each tool call over the limit with a model-visible
    /// [`ToolErrorKind::LimitReached`] result and go on. For the model-call limit this
    /// behaves like [`OnLimit::EndRun`].
    AnswerModel,
}

/// A run reached one of its call limits (with [`OnLimit::Error`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the run reached its limit of {limit} {what}")]
pub struct CallLimitExceeded {
    /// What was limited: "model calls", "tool calls" or "calls of tool `name`".
    pub what: String,
    /// The limit.
    pub limit: usize,
}

/// Limits the model calls of a run, its tool calls, and its calls per tool name.
///
/// The counts are per run: every run starts from zero, however many share the agent.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, ToolErrorKind};
/// use tower_adk::testing::{text_tool, ScriptedModel, Turn};
/// use tower_adk::handlers::{CallLimits, OnLimit};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     Turn::call("c1", "search", json!({})).with_call("c2", "search", json!({})),
///     Turn::text("One search was enough."),
/// ]);
/// let agent = Agent::builder(model).tool(text_tool("search", "found")).build()?;
/// let limits = CallLimits::new().per_tool("search", 1).on_limit(OnLimit::AnswerModel);
///
/// let result = agent.run(AgentRequest::user("search twice").with_handler(limits)).await?;
/// let kinds: Vec<_> = result.tool_records.iter().map(|r| r.error.as_ref().map(|e| e.kind())).collect();
/// assert_eq!(kinds, [None, Some(ToolErrorKind::LimitReached)]);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallLimits {
    model_calls: Option<usize>,
    tool_calls: Option<usize>,
    per_tool: BTreeMap<String, usize>,
    on_limit: OnLimit,
}

/// The counts of one run, kept in its run-local values (under [`CallLimits::LOCALS_KEY`]),
/// so a checkpoint keeps them and a resumed run goes on counting from them.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Counts {
    model_calls: usize,
    tool_calls: usize,
    per_tool: BTreeMap<String, usize>,
    /// Set when the run must end: the next model call is made without tools.
    wind_down: bool,
}

impl Counts {
    fn of(locals: &Locals) -> Result<Self, BoxError> {
        Ok(locals.get(CallLimits::LOCALS_KEY)?.unwrap_or_default())
    }

    fn save(&self, locals: &mut Locals) -> Result<(), BoxError> {
        Ok(locals.insert(CallLimits::LOCALS_KEY, self)?)
    }
}

impl CallLimits {
    /// The run-local value that holds a run's counts.
    pub const LOCALS_KEY: &'static str = "call_limits";

    /// No limits yet.
    pub fn new() -> Self {
        CallLimits::default()
    }

    /// At most `max` model calls per run.
    pub fn model_calls(mut self, max: usize) -> Self {
        self.model_calls = Some(max);
        self
    }

    /// At most `max` tool calls per run, all tools together.
    pub fn tool_calls(mut self, max: usize) -> Self {
        self.tool_calls = Some(max);
        self
    }

    /// At most `max` calls of the tool `name` per run.
    pub fn per_tool(mut self, name: impl Into<String>, max: usize) -> Self {
        self.per_tool.insert(name.into(), max);
        self
    }

    /// What happens at a limit (default [`OnLimit::EndRun`]).
    pub fn on_limit(mut self, on_limit: OnLimit) -> Self {
        self.on_limit = on_limit;
        self
    }

    /// Counts one tool call; the error says which limit it is over.
    fn admit_tool_call(&self, counts: &mut Counts, name: &str) -> Result<(), CallLimitExceeded> {
        if let Some(limit) = self.tool_calls.filter(|max| counts.tool_calls >= *max) {
            return Err(CallLimitExceeded {
                what: "tool calls".into(),
                limit,
            });
        }
        let used = counts.per_tool.get(name).copied().unwrap_or(0);
        if let Some(&limit) = self.per_tool.get(name).filter(|max| used >= **max) {
            return Err(CallLimitExceeded {
                what: format!("calls of tool `{name}`"),
                limit,
            });
        }
        counts.tool_calls += 1;
        *counts.per_tool.entry(name.to_owned()).or_default() += 1;
        Ok(())
    }

    /// What a tool call over a limit gets instead of the tool's answer.
    fn refuse(&self, counts: &mut Counts, exceeded: CallLimitExceeded) -> BoxError {
        match self.on_limit {
            OnLimit::Error => exceeded.into(),
            OnLimit::EndRun => {
                counts.wind_down = true;
                ToolError::new(
                    ToolErrorKind::LimitReached,
                    format!("{exceeded}; answer now without tools"),
                )
                .into()
            }
            OnLimit::AnswerModel => {
                ToolError::new(ToolErrorKind::LimitReached, exceeded.to_string()).into()
            }
        }
    }

    /// Counts a tool call in the run's values, or refuses it.
    fn check_tool_call(&self, request: &ToolRequest) -> Result<(), BoxError> {
        let mut locals = request.locals();
        let mut counts = Counts::of(&locals)?;
        let admitted = self
            .admit_tool_call(&mut counts, &request.name)
            .map_err(|exceeded| self.refuse(&mut counts, exceeded));
        counts.save(&mut locals)?;
        admitted
    }
}

impl Handler for CallLimits {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("call_limits")
    }

    async fn before_model(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        let mut counts = Counts::of(cx.locals())?;
        if let Some(limit) = self.model_calls {
            if counts.model_calls >= limit {
                return Err(CallLimitExceeded {
                    what: "model calls".into(),
                    limit,
                }
                .into());
            }
            // The last allowed call must produce the answer, unless the limit is an error.
            if counts.model_calls + 1 == limit && self.on_limit != OnLimit::Error {
                counts.wind_down = true;
            }
        }
        counts.model_calls += 1;
        counts.save(cx.locals_mut())
    }

    async fn wrap_model(
        &self,
        mut request: ModelRequest,
        next: ModelNext,
    ) -> Result<ModelResponse, BoxError> {
        if Counts::of(&request.locals())?.wind_down {
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
        if Counts::of(cx.locals())?.wind_down {
            // A model that calls tools anyway is not obeyed: the run ends with its text.
            if let Some(calls) = history.messages.last_mut().and_then(|m| m.tool_calls_mut()) {
                calls.clear();
            }
        }
        Ok(())
    }

    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        self.check_tool_call(&request)?;
        next.run(request).await
    }
}
