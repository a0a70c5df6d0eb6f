//! Agents one after the other.

use std::sync::Arc;

use tower::{BoxError, Service};

use super::chain::{NextInput, Relay};
use super::{Named, all_names, refused, resumed_agent};
use crate::agent::Agent;
use crate::agent::AgentError;
use crate::agent::AgentEvent;
use crate::agent::AgentRequest;
use crate::agent::AgentResult;
use crate::agent::AgentRun;
use crate::agent::RunStatus;
use crate::message::Messages;

/// Agents run one after the other, each on what the one before left: by default the
/// conversation so far (the request, and each agent's history without its instruction,
/// ending with its answer); see [`input_with`](Sequential::input_with).
///
/// The run's events are every agent's, in order; its result is the last agent's. An
/// agent that stops at an interrupt ends the workflow with its interrupted result;
/// resuming the workflow with it resumes that agent, and the agents after it run once
/// it completes. Every agent gets the request's extensions and handlers.
///
/// # Example
///
/// See the [module docs](super).
#[derive(Clone, Default)]
pub struct Sequential {
    steps: Arc<Vec<Named>>,
    input: NextInput,
}

impl Sequential {
    /// A workflow with no agents yet (it must get one before it runs: a run of an empty
    /// one fails with [`AgentError::Config`]).
    pub fn new() -> Self {
        Sequential::default()
    }

    /// Adds an agent, named by its own name.
    pub fn then(self, agent: Agent) -> Self {
        let name = Arc::<str>::from(agent.name());
        self.then_named(name, agent)
    }

    /// Adds any agent service (an agent behind layers, a composition), named `name`:
    /// how the interrupts of its runs are addressed (`agent:NAME/...`).
    pub fn then_named<S>(mut self, name: impl Into<Arc<str>>, agent: S) -> Self
    where
        S: Service<AgentRequest, Response = AgentRun> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        Arc::make_mut(&mut self.steps).push(Named::new(name, agent));
        self
    }

    /// What each agent after the first is given, made from the result of the one before
    /// (default: its conversation, without its instruction).
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
            refused(&request, this.steps.iter())?;
            let start = match resumed_agent(&request, this.steps.iter()) {
                Some(step) => {
                    let step = step?;
                    this.steps.iter().position(|s| std::ptr::eq(s, step)).unwrap_or(0)
                }
                None => 0,
            };
            let mut inputs = this.input.inputs(request);
            let mut last: Option<Box<AgentResult>> = None;
            for step in this.steps.iter().skip(start) {
                let input = inputs.next(last.as_deref())?;
                let mut run = Relay::new(step.start(input).await?);
                while let Some(event) = run.next().await {
                    yield event?;
                }
                // Each step's own result: a step that ends without one fails the run.
                let result = run.result()?;
                let interrupted = result.status == RunStatus::Interrupted;
                last = Some(result);
                if interrupted {
                    break;
                }
            }
            let result = last.ok_or(AgentError::Incomplete)?;
            yield AgentEvent::Completed(result);
        })
    }

    /// Every name of its agents, and of the agents they are made of.
    pub(crate) fn agent_names(&self) -> Vec<Arc<str>> {
        all_names(self.steps.iter())
    }
}

impl std::fmt::Debug for Sequential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequential")
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

super::service_from_run!(Sequential);
