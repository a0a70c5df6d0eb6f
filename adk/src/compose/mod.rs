//! Agents made of agents: an agent as another's tool, handoffs, and workflows.
//!
//! An agent is a `tower::Service<AgentRequest, Response = AgentRun>`, and so is
//! everything here: a composition takes agents (an [`Agent`], an agent behind tower
//! layers, or another composition) and answers each request with one [`AgentRun`], whose
//! events are those of the agents it runs, in order, and whose result is the
//! composition's. So compositions nest, take tower layers, and stand wherever an agent
//! service does (an [`AwaitRun`](crate::AwaitRun), another composition). A server route
//! takes an [`Agent`], not a composition.
//!
//! A composition refuses, with [`AgentError::Config`] and before running anything, a
//! request on a thread (its agents run a request each and none of them would hold the
//! thread: give the thread to an agent itself), and a workflow refuses to run with no
//! agents or with two agents of the same name.
//!
//! - [`AgentTool`] (or [`Agent::as_tool`]) makes an agent a streaming [`Tool`] of another:
//!   the caller's extensions (identity, role) pass down, its events reach the caller's
//!   run as the call's chunks and as [`SubAgentEvent`]s, its final answer is the tool
//!   result, and its interrupts surface as the caller's (nested ids, resumed through the
//!   caller).
//! - [`Handoffs`] gives an agent a `transfer_to_<name>` tool per target; when the model
//!   calls one, the conversation moves on to that agent, with the history that a
//!   [`HandoffHistory`] chooses.
//! - [`Sequential`], [`Parallel`] and [`Loop`] run agents one after the other, at the
//!   same time (results merged), or again and again until a condition or a stop tool.
//!
//! # Example
//!
//! ```
//! use tower_adk::{Agent, AgentRequest};
//! use tower_adk::compose::Sequential;
//! use tower_adk::testing::{ScriptedModel, Turn};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let writer = Agent::builder(ScriptedModel::new([Turn::text("Draft: tower is nice.")]))
//!     .name("writer")
//!     .build()?;
//! let editor = ScriptedModel::new([Turn::text("Tower is a library of modular services.")]);
//! let editor_agent = Agent::builder(editor.clone()).name("editor").build()?;
//!
//! let pipeline = Sequential::new().then(writer).then(editor_agent);
//! let result = pipeline.run(AgentRequest::user("Write about tower.")).await?;
//!
//! assert_eq!(result.final_message.content(), "Tower is a library of modular services.");
//! // The editor saw the conversation so far: the request and the writer's draft.
//! let seen = &editor.requests()[0].messages;
//! assert_eq!(seen.last().unwrap().content(), "Draft: tower is nice.");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Interrupts
//!
//! A sub-agent's interrupts surface through the [`AgentTool`] call that ran it, and a
//! resume of the caller resumes into it (see [`AgentTool`]). A workflow or a handoff whose
//! agent stops at an interrupt ends with that agent's interrupted result; resume it by
//! sending the resume request to the same composition: it goes to the agent the
//! interrupt ids name (`agent:NAME/...`), and the composition goes on from there.

mod agent_tool;
mod chain;
mod handoff;
mod parallel;
mod repeat;
mod sequential;

use std::convert::Infallible;
use std::future::Ready;
use std::sync::Arc;

use futures::Stream;
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Service, ServiceExt};

pub use self::agent_tool::{AgentTool, SubAgentEvent};
pub use self::handoff::{Handoff, HandoffHistory, Handoffs, HistoryFn, TRANSFER_PREFIX};
pub use self::parallel::{Branch, Parallel};
pub use self::repeat::{DEFAULT_MAX_ROUNDS, Loop};
pub use self::sequential::Sequential;
#[cfg(doc)]
use crate::agent::Agent;
use crate::agent::AgentError;
use crate::agent::AgentEvent;
use crate::agent::AgentRequest;
use crate::agent::AgentRun;
use crate::interrupt::{CallAnswers, InterruptAddress, Resumed};
#[cfg(doc)]
use crate::tool::Tool;

/// Any agent, boxed: a service that answers an [`AgentRequest`] with an [`AgentRun`].
pub type BoxAgent = BoxCloneSyncService<AgentRequest, AgentRun, BoxError>;

/// Boxes an agent service: an [`Agent`], an agent behind tower layers, or a composition.
///
/// ```
/// use tower_adk::{Agent, AgentRequest};
/// use tower_adk::compose::{BoxAgent, Sequential, boxed};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower::ServiceExt;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let agent = |text: &str| Agent::builder(ScriptedModel::new([Turn::text(text)])).build();
/// let agents: Vec<BoxAgent> = vec![boxed(agent("one")?), boxed(Sequential::new().then(agent("two")?))];
/// let mut answers = Vec::new();
/// for agent in agents {
///     let result = agent.oneshot(AgentRequest::user("hello")).await?.await?;
///     answers.push(result.final_message.content().to_owned());
/// }
/// assert_eq!(answers, ["one", "two"]);
/// # Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
/// # }).unwrap();
/// ```
pub fn boxed<S>(agent: S) -> BoxAgent
where
    S: Service<AgentRequest, Response = AgentRun> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    BoxCloneSyncService::new(agent.map_err(Into::into))
}

/// An agent of a composition, with the name its interrupts are addressed by.
#[derive(Clone)]
pub(crate) struct Named {
    pub(crate) name: Arc<str>,
    /// Its name and the names of the agents it is made of, when it is a composition
    /// (not behind a layer): the names its interrupt ids may start with.
    pub(crate) names: Arc<[Arc<str>]>,
    pub(crate) agent: BoxAgent,
}

/// The names of the agents a composition (or an [`Agent`]) is made of, found by its type.
fn contained_names(agent: &dyn std::any::Any) -> Vec<Arc<str>> {
    if let Some(agent) = agent.downcast_ref::<crate::agent::Agent>() {
        vec![Arc::from(agent.name())]
    } else if let Some(sequential) = agent.downcast_ref::<Sequential>() {
        sequential.agent_names()
    } else if let Some(parallel) = agent.downcast_ref::<Parallel>() {
        parallel.agent_names()
    } else if let Some(repeat) = agent.downcast_ref::<Loop>() {
        repeat.agent_names()
    } else if let Some(handoffs) = agent.downcast_ref::<Handoffs>() {
        handoffs.agent_names()
    } else {
        remote_names(agent)
    }
}

/// The name a remote A2A agent addresses its interrupts by.
#[cfg(feature = "a2a-client")]
fn remote_names(agent: &dyn std::any::Any) -> Vec<Arc<str>> {
    match agent.downcast_ref::<crate::a2a::client::RemoteAgent>() {
        Some(remote) => vec![Arc::from(remote.name())],
        None => Vec::new(),
    }
}

#[cfg(not(feature = "a2a-client"))]
fn remote_names(_: &dyn std::any::Any) -> Vec<Arc<str>> {
    Vec::new()
}

/// Every name of these agents, for a composition made of them.
pub(crate) fn all_names<'a>(agents: impl IntoIterator<Item = &'a Named>) -> Vec<Arc<str>> {
    agents
        .into_iter()
        .flat_map(|named| named.names.iter().cloned())
        .collect()
}

/// Refuses, before anything runs, a request on a thread, and a workflow with no agents
/// or with two agents of the same name.
pub(crate) fn refused<'a>(
    request: &AgentRequest,
    agents: impl IntoIterator<Item = &'a Named>,
) -> Result<(), AgentError> {
    use crate::error::BuildError;
    if let Some(thread) = request.thread() {
        return Err(AgentError::Config(BuildError::CompositionOnThread(
            thread.to_owned(),
        )));
    }
    let mut seen: Vec<&str> = Vec::new();
    for named in agents {
        if seen.contains(&&*named.name) {
            return Err(AgentError::Config(BuildError::DuplicateAgent(
                named.name.to_string(),
            )));
        }
        seen.push(&named.name);
    }
    if seen.is_empty() {
        return Err(AgentError::Config(BuildError::EmptyWorkflow));
    }
    Ok(())
}

impl Named {
    pub(crate) fn new<S>(name: impl Into<Arc<str>>, agent: S) -> Self
    where
        S: Service<AgentRequest, Response = AgentRun> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        let name = name.into();
        let mut names = contained_names(&agent);
        if !names.contains(&name) {
            names.insert(0, Arc::clone(&name));
        }
        Named {
            name,
            names: names.into(),
            agent: boxed(agent),
        }
    }

    /// Starts a run of the agent.
    pub(crate) async fn start(&self, request: AgentRequest) -> Result<AgentRun, AgentError> {
        self.agent
            .clone()
            .oneshot(request)
            .await
            .map_err(AgentError::Agent)
    }
}

impl std::fmt::Debug for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// The agent a resume request is for: the one its decisions' interrupt ids name, among
/// `agents`. `None` for a request that resumes nothing.
pub(crate) fn resumed_agent<'a>(
    request: &AgentRequest,
    agents: impl IntoIterator<Item = &'a Named>,
) -> Option<Result<&'a Named, AgentError>> {
    let decisions = request.resume_decisions()?;
    let addresses: Vec<InterruptAddress> =
        decisions.keys().filter_map(|id| id.parse().ok()).collect();
    let names: Vec<&str> = addresses.iter().map(InterruptAddress::agent).collect();
    let found = agents
        .into_iter()
        .find(|named| names.iter().any(|n| named.names.iter().any(|m| **m == **n)));
    Some(found.ok_or_else(|| {
        let names = names.join(", ");
        let error = if names.is_empty() {
            "a resume without decisions names no agent of this composition".to_owned()
        } else {
            format!("no agent of this composition is named {names}")
        };
        AgentError::Agent(error.into())
    }))
}

/// The caller's extensions as an agent it runs should see them: its identity, role and
/// values, without what belongs to the caller's own run (its resume and its decisions).
pub(crate) fn passed_down(extensions: &http::Extensions) -> http::Extensions {
    let mut extensions = extensions.clone();
    extensions.remove::<Resumed>();
    extensions.remove::<CallAnswers>();
    extensions
}

/// A copy of a request's extensions and handlers, for one more agent of a composition.
pub(crate) fn next_request(
    from: &AgentRequest,
    messages: crate::message::Messages,
) -> AgentRequest {
    let mut request = AgentRequest::new(messages);
    *request.extensions_mut() = passed_down(from.extensions());
    request.copy_handlers_from(from);
    request
}

/// What a composition's service answers: a run, at once.
pub(crate) type Answer = Ready<Result<AgentRun, Infallible>>;

/// `Service<AgentRequest>` for a composition with a `run(&self, AgentRequest) ->
/// AgentRun` method: always ready (its agents are called with `oneshot` when the run gets
/// to them), answering with the run at once.
macro_rules! service_from_run {
    ($composition:ty) => {
        impl tower::Service<crate::agent::AgentRequest> for $composition {
            type Response = crate::agent::AgentRun;
            type Error = std::convert::Infallible;
            type Future = crate::compose::Answer;

            /// Always ready: its agents are called with `oneshot` when the run gets to them.
            fn poll_ready(
                &mut self,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Result<(), std::convert::Infallible>> {
                std::task::Poll::Ready(Ok(()))
            }

            fn call(&mut self, request: crate::agent::AgentRequest) -> crate::compose::Answer {
                std::future::ready(Ok(self.run(request)))
            }
        }
    };
}
pub(crate) use service_from_run;

/// A run's conversation, as the next agent of a workflow sees it: its history without
/// its instruction.
pub(crate) fn conversation(result: &crate::agent::AgentResult) -> crate::message::Messages {
    result
        .messages
        .iter()
        .filter(|m| !matches!(m, crate::message::Message::System { .. }))
        .cloned()
        .collect()
}

/// Reads a run to its end, handing on every event but its `Completed`, whose result
/// comes last, as `Err`. (The workflows' bodies read their agents' runs with it.)
pub(crate) fn relayed(
    run: AgentRun,
) -> impl Stream<Item = Result<Result<AgentEvent, Box<crate::agent::AgentResult>>, AgentError>> + Send
{
    use futures::StreamExt;
    run.map(|event| {
        event.map(|event| match event {
            AgentEvent::Completed(result) => Err(result),
            event => Ok(event),
        })
    })
}
