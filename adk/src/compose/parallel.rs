//! Agents at the same time, their results merged.

use std::sync::Arc;

use futures::StreamExt;
use futures::stream::{self, BoxStream};
use tower::{BoxError, Service};

use super::{Named, all_names, next_request, refused, relayed, resumed_agent};
use crate::agent::Agent;
use crate::agent::AgentError;
use crate::agent::AgentEvent;
use crate::agent::AgentRequest;
use crate::agent::AgentResult;
use crate::agent::AgentRun;
use crate::agent::RunStatus;
use crate::context::Locals;
use crate::message::Message;
use crate::message::Messages;
use crate::model::UsageTotals;

/// The final message of a [`Parallel`] run, made from its branches' results.
type MergeFn = Arc<dyn Fn(&[Branch]) -> Message + Send + Sync>;

/// Agents run at the same time on the same request, their results merged into one.
///
/// The run's events are every branch's, as they come; its result has the final message
/// the merge function makes from the branches' results (default: each branch's answer
/// under its name), the request's messages followed by it, every branch's tool records
/// (branch by branch), and the sums of their iterations and model calls. It is
/// [`Interrupted`](RunStatus::Interrupted) when one of them stopped at an interrupt,
/// with the interrupts and the checkpoint of the first such branch: resuming it resumes
/// that branch alone, whose result is then the run's. Other branches that stopped at an
/// interrupt end there: their interrupts are not listed and cannot be resumed (their
/// events still showed them). It is [`Degraded`](RunStatus::Degraded) when a branch
/// was. A failing branch fails
/// the run, and the others are cancelled.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, Message};
/// use tower_adk::compose::Parallel;
/// use tower_adk::testing::{ScriptedModel, Turn};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let flights = Agent::builder(ScriptedModel::new([Turn::text("AF 1234 at 9:00")])).name("flights").build()?;
/// let hotels = Agent::builder(ScriptedModel::new([Turn::text("Hotel du Nord")])).name("hotels").build()?;
///
/// let trip = Parallel::new().branch(flights).branch(hotels).merge(|branches| {
///     let answers: Vec<&str> = branches.iter().map(|b| b.result.final_message.content()).collect();
///     Message::assistant(answers.join(" + "))
/// });
/// let result = trip.run(AgentRequest::user("Plan Paris")).await?;
/// assert_eq!(result.final_message.content(), "AF 1234 at 9:00 + Hotel du Nord");
/// assert_eq!(result.model_calls, 2);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Default)]
pub struct Parallel {
    branches: Arc<Vec<Named>>,
    merge: Option<MergeFn>,
}

/// The result of one branch of a [`Parallel`] run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Branch {
    /// The branch's name.
    pub agent: Arc<str>,
    /// Its result.
    pub result: AgentResult,
}

impl Parallel {
    /// A workflow with no branches yet (it must get one before it runs: a run of an
    /// empty one fails with [`AgentError::Config`]).
    pub fn new() -> Self {
        Parallel::default()
    }

    /// Adds a branch, named by the agent's own name.
    pub fn branch(self, agent: Agent) -> Self {
        let name = Arc::<str>::from(agent.name());
        self.branch_named(name, agent)
    }

    /// Adds any agent service as a branch named `name` (how its interrupts are
    /// addressed).
    pub fn branch_named<S>(mut self, name: impl Into<Arc<str>>, agent: S) -> Self
    where
        S: Service<AgentRequest, Response = AgentRun> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        Arc::make_mut(&mut self.branches).push(Named::new(name, agent));
        self
    }

    /// How the final message is made from the branches' results, in the order the
    /// branches were added.
    pub fn merge<F>(mut self, f: F) -> Self
    where
        F: Fn(&[Branch]) -> Message + Send + Sync + 'static,
    {
        self.merge = Some(Arc::new(f));
        self
    }

    /// Starts a run; the same as calling the service.
    pub fn run(&self, request: AgentRequest) -> AgentRun {
        let this = self.clone();
        AgentRun::from_events(async_stream::try_stream! {
            refused(&request, this.branches.iter())?;
            if let Some(branch) = resumed_agent(&request, this.branches.iter()) {
                let mut events = relayed(branch?.start(request).await?);
                while let Some(event) = events.next().await {
                    match event? {
                        Ok(event) => yield event,
                        Err(result) => yield AgentEvent::Completed(result),
                    }
                }
                return;
            }
            let input = request.messages().clone();
            let runs = this.branches.iter().enumerate().map(|(index, branch)| {
                let request = next_request(&request, input.clone());
                let branch = branch.clone();
                let start = async move { branch.start(request).await };
                stream::once(start)
                    .map(move |run| match run {
                        Ok(run) => relayed(run).map(move |e| (index, e)).boxed(),
                        Err(error) => stream::iter([(index, Err(error))]).boxed(),
                    })
                    .flatten()
                    .boxed()
            });
            let mut events = stream::select_all::<Vec<BoxStream<'static, _>>>(runs.collect());
            let mut results: Vec<Option<AgentResult>> = vec![None; this.branches.len()];
            while let Some((index, event)) = events.next().await {
                match event? {
                    Ok(event) => yield event,
                    Err(result) => {
                        if let Some(slot) = results.get_mut(index) {
                            *slot = Some(*result);
                        }
                    }
                }
            }
            let mut branches = Vec::with_capacity(results.len());
            for (branch, result) in this.branches.iter().zip(results) {
                let result = result.ok_or(AgentError::Incomplete)?;
                branches.push(Branch { agent: Arc::clone(&branch.name), result });
            }
            yield AgentEvent::Completed(Box::new(this.merged(input, &branches)));
        })
    }

    /// Every name of its branches, and of the agents they are made of.
    pub(crate) fn agent_names(&self) -> Vec<Arc<str>> {
        all_names(self.branches.iter())
    }

    /// The run's result from its branches'.
    fn merged(&self, input: Messages, branches: &[Branch]) -> AgentResult {
        let final_message = match &self.merge {
            Some(merge) => merge(branches),
            None => answers(branches),
        };
        let results = || branches.iter().map(|b| &b.result);
        // The interrupts that can be resumed: those of the first interrupted branch,
        // whose checkpoint the result carries.
        let interrupted = results().find(|r| r.status == RunStatus::Interrupted);
        let status = if interrupted.is_some() {
            RunStatus::Interrupted
        } else if results().any(|r| r.status == RunStatus::Degraded) {
            RunStatus::Degraded
        } else {
            RunStatus::Completed
        };
        let mut messages = input;
        messages.push(final_message.clone());
        AgentResult {
            status,
            final_message,
            messages,
            tool_records: results()
                .flat_map(|r| r.tool_records.iter().cloned())
                .collect(),
            iterations: results().map(|r| r.iterations).sum(),
            model_calls: results().map(|r| r.model_calls).sum(),
            usage: results().fold(UsageTotals::default(), |mut all, r| {
                all.merge(&r.usage);
                all
            }),
            cost: results()
                .filter_map(|r| r.cost.clone())
                .reduce(|mut all, cost| {
                    all.usd += cost.usd;
                    all.unpriced.extend(cost.unpriced);
                    all
                }),
            locals: Locals::default(),
            interrupts: interrupted
                .map(|r| r.interrupts.clone())
                .unwrap_or_default(),
            checkpoint: interrupted.and_then(|r| r.checkpoint.clone()),
        }
    }
}

/// Each branch's answer under its name.
fn answers(branches: &[Branch]) -> Message {
    let parts: Vec<String> = branches
        .iter()
        .map(|b| format!("{}: {}", b.agent, b.result.final_message.content()))
        .collect();
    Message::assistant(parts.join("\n\n"))
}

impl std::fmt::Debug for Parallel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parallel")
            .field("branches", &self.branches)
            .finish_non_exhaustive()
    }
}

super::service_from_run!(Parallel);
