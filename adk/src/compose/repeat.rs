//! An agent run again and again, until a condition or a stop tool.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Arc;

use serde_json::{Value, json};
use tower::{BoxError, Service};

use super::chain::{NextInput, Relay};
use super::{Named, refused};
use crate::agent::Agent;
use crate::agent::AgentConfig;
use crate::agent::AgentError;
use crate::agent::AgentEvent;
use crate::agent::AgentRequest;
use crate::agent::AgentResult;
use crate::agent::AgentRun;
use crate::agent::RunStatus;
use crate::context::RunContext;
use crate::handler::Handler;
use crate::message::Message;
use crate::message::Messages;
use crate::tool::Finish;
use crate::tool::Tool;
use crate::tool::ToolInfo;
use crate::tool::ToolOutput;
use crate::tool::ToolRequest;

/// The default bound on a [`Loop`]'s rounds.
pub const DEFAULT_MAX_ROUNDS: usize = 10;

/// Says whether a [`Loop`] stops after a round.
type UntilFn = Arc<dyn Fn(&AgentResult) -> bool + Send + Sync>;

/// An agent (often a [`Sequential`](super::Sequential): a writer and a critic) run in
/// rounds, each on what the round before left (by default its conversation, without its
/// instruction; see [`input_with`](Loop::input_with)), until:
///
/// - the [`until`](Loop::until) condition holds for a round's result, or
/// - a model called the [stop tool](Loop::stop_tool) in a round (every agent of the
///   round gets it; the run of the agent that called it ends with the `answer` it gave,
///   if any, as its final message; the rest of the round still runs, e.g. the later
///   agents of a [`Sequential`](super::Sequential) body, and the loop ends with the
///   round's result), or
/// - the round stopped at an interrupt (the loop ends with it; resuming the loop resumes
///   the round and goes on), or
/// - it made [`max_rounds`](Loop::max_rounds) rounds (default [`DEFAULT_MAX_ROUNDS`]).
///   A resumed round counts as the round it was: the loop's runs keep its number in
///   their values (checkpointed with them), and the result of a resumed round tells it
///   when its run is the one that stopped (an agent, or the last agent of the body).
///   When it cannot tell (say an earlier agent of a `Sequential` body stopped), the
///   resumed round counts as the first.
///
/// The run's events are every round's; its result is the last round's.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest};
/// use tower_adk::compose::Loop;
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     Turn::text("Draft 1"),
///     Turn::text("Draft 2"),
///     Turn::call("c1", "exit_loop", json!({"answer": "Final draft"})),
/// ]);
/// let writer = Agent::builder(model.clone()).name("writer").build()?;
///
/// let refine = Loop::new(writer).stop_tool("exit_loop").max_rounds(5);
/// let result = refine.run(AgentRequest::user("Write a haiku")).await?;
/// assert_eq!(result.final_message.content(), "Final draft");
/// assert_eq!(model.calls(), 3);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Loop {
    body: Named,
    max_rounds: usize,
    until: Option<UntilFn>,
    stop_tool: Option<Arc<str>>,
    input: NextInput,
}

impl Loop {
    /// A loop of `agent`, named by its own name.
    pub fn new(agent: Agent) -> Self {
        let name = Arc::<str>::from(agent.name());
        Loop::named(name, agent)
    }

    /// A loop of any agent service (a composition, an agent behind layers), named `name`
    /// (how the interrupts of its runs are addressed).
    pub fn named<S>(name: impl Into<Arc<str>>, agent: S) -> Self
    where
        S: Service<AgentRequest, Response = AgentRun> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        Loop {
            body: Named::new(name, agent),
            max_rounds: DEFAULT_MAX_ROUNDS,
            until: None,
            stop_tool: None,
            input: NextInput::default(),
        }
    }

    /// Stops after the first round whose result makes `f` true.
    pub fn until<F>(mut self, f: F) -> Self
    where
        F: Fn(&AgentResult) -> bool + Send + Sync + 'static,
    {
        self.until = Some(Arc::new(f));
        self
    }

    /// Gives the round's agents a tool named `name` that stops the loop.
    pub fn stop_tool(mut self, name: impl Into<Arc<str>>) -> Self {
        self.stop_tool = Some(name.into());
        self
    }

    /// The most rounds (default [`DEFAULT_MAX_ROUNDS`]; at least one is made); the loop
    /// ends with the last round's result when it gets there.
    pub fn max_rounds(mut self, max: usize) -> Self {
        self.max_rounds = max.max(1);
        self
    }

    /// What each round after the first is given, made from the result of the one
    /// before (default: its conversation, without its instruction).
    pub fn input_with<F>(mut self, f: F) -> Self
    where
        F: Fn(&AgentResult) -> Messages + Send + Sync + 'static,
    {
        self.input = NextInput::with(f);
        self
    }

    /// Starts a run; the same as calling the service.
    pub fn run(&self, request: AgentRequest) -> AgentRun {
        let this = self.clone();
        AgentRun::from_events(async_stream::try_stream! {
            // A resume always resumes the body, whichever agent in it its ids name.
            refused(&request, std::iter::once(&this.body))?;
            let mut resumed = request.resume_decisions().is_some();
            let mut inputs = this.input.inputs(request);
            let mut last: Option<Box<AgentResult>> = None;
            let mut round = 0;
            while round < this.max_rounds {
                round += 1;
                let mut input = inputs.next(last.as_deref())?;
                if let Some(name) = &this.stop_tool {
                    input.handlers_mut().push(StopTool(Arc::clone(name)).into());
                }
                if !resumed {
                    input.handlers_mut().push(RoundMark(round).into());
                }
                let mut stopped = false;
                let mut run = Relay::new(this.body.start(input).await?);
                while let Some(event) = run.next().await {
                    let event = event?;
                    stopped |= this.is_stop(&event);
                    yield event;
                }
                // The round's own result: a round that ends without one fails the run.
                let mut result = run.result()?;
                // The round a resumed round was, as its checkpointed values say.
                let marked = result.locals.remove(ROUND_KEY);
                if std::mem::take(&mut resumed) {
                    let marked = marked.and_then(|v| serde_json::from_value::<usize>(v).ok());
                    round = marked.unwrap_or(round);
                }
                let done = stopped
                    || result.status == RunStatus::Interrupted
                    || this.until.as_ref().is_some_and(|until| until(&result));
                last = Some(result);
                if done {
                    break;
                }
            }
            yield AgentEvent::Completed(last.ok_or(AgentError::Incomplete)?);
        })
    }

    /// Every name of its body, and of the agents it is made of.
    pub(crate) fn agent_names(&self) -> Vec<Arc<str>> {
        self.body.names.to_vec()
    }

    /// Whether the event is a successful call of the stop tool.
    fn is_stop(&self, event: &AgentEvent) -> bool {
        let (Some(stop), AgentEvent::ToolResult(record)) = (&self.stop_tool, event) else {
            return false;
        };
        record.is_success() && record.name == **stop
    }
}

/// Where a round's runs keep the round's number (1 for the first), so that a resumed
/// round knows which it was.
const ROUND_KEY: &str = "tower_adk.loop/round";

/// The handler that marks a round's runs with the round's number.
struct RoundMark(usize);

impl Handler for RoundMark {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("loop_round")
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        cx.locals_mut().insert(ROUND_KEY, &self.0)?;
        Ok(config)
    }
}

/// The handler that gives a round's agents the stop tool.
struct StopTool(Arc<str>);

impl Handler for StopTool {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("loop_stop_tool")
    }

    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        let info = ToolInfo::new(&*self.0, "Ends the loop: the work is done.").parameters(json!({
            "type": "object",
            "properties": {"answer": {"type": "string", "description": "The final answer."}}
        }));
        config.add_tool(Tool::from_fn(info, |call: ToolRequest| async move {
            let finish = match call.arguments.get("answer").and_then(Value::as_str) {
                Some(answer) => Finish::With(Message::assistant(answer)),
                None => Finish::WithTurnText,
            };
            Ok::<_, Infallible>(ToolOutput::new("The loop ends.").finishing(finish))
        }));
        Ok(config)
    }
}

impl std::fmt::Debug for Loop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loop")
            .field("body", &self.body)
            .field("max_rounds", &self.max_rounds)
            .field("stop_tool", &self.stop_tool)
            .finish_non_exhaustive()
    }
}

super::service_from_run!(Loop);
