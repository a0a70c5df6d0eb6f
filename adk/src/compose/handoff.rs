//! Handoffs: the model moves the conversation on to another agent.

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::json;
use tower::{BoxError, Service};

use super::{Named, all_names, next_request, refused, resumed_agent};
use crate::agent::AgentConfig;
use crate::agent::AgentEvent;
use crate::agent::AgentRequest;
use crate::agent::AgentResult;
use crate::agent::AgentRun;
use crate::context::RunContext;
use crate::handler::Handler;
use crate::message::Message;
use crate::message::Messages;
use crate::tool::Finish;
use crate::tool::Tool;
use crate::tool::ToolInfo;
use crate::tool::ToolOutput;

/// The prefix of the tools that hand off: `transfer_to_<name>`.
pub const TRANSFER_PREFIX: &str = "transfer_to_";

/// An agent that can hand the conversation off to others: it gets one
/// `transfer_to_<name>` tool per target; when its model calls one, its run ends there,
/// and the target agent goes on with the conversation, seeing the history that the
/// [`HandoffHistory`] chooses (default: all of it, without the transfer call). The run's
/// events are the first agent's, then the target's; its result is the target's.
///
/// It is itself an agent service, so a target may be another `Handoffs` (a chain of
/// transfers), and it takes tower layers. The transfer tools are added to the first
/// agent's runs by a request handler pushed last, after the request's and the layers'
/// handlers, so those handlers do not see them and cannot filter them out: to keep an
/// agent from handing off to a target, leave the target out.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest};
/// use tower_adk::compose::Handoffs;
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let triage = ScriptedModel::new([Turn::call("c1", "transfer_to_billing", json!({}))]);
/// let billing = ScriptedModel::new([Turn::text("Your refund is on its way.")]);
/// let desk = Handoffs::new("triage", Agent::builder(triage.clone()).build()?)
///     .to("billing", "Refunds and invoices", Agent::builder(billing.clone()).build()?);
///
/// let result = desk.run(AgentRequest::user("I want a refund")).await?;
/// assert_eq!(result.final_message.content(), "Your refund is on its way.");
/// assert_eq!(triage.requests()[0].tool_names().collect::<Vec<_>>(), ["transfer_to_billing"]);
/// // Billing saw the user's message, not the transfer.
/// assert_eq!(billing.requests()[0].messages.len(), 1);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct Handoffs {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone)]
struct Inner {
    first: Named,
    targets: Vec<(Named, String)>,
    history: HandoffHistory,
}

/// A handoff as the [`HandoffHistory`] sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Handoff {
    /// The agent that handed off.
    pub from: Arc<str>,
    /// The agent that takes over.
    pub to: Arc<str>,
    /// Why, as the model said (the transfer call's `reason`), if it did.
    pub reason: Option<String>,
}

/// A function that makes the history the agent that takes over sees.
pub type HistoryFn = Arc<dyn Fn(&Handoff, Messages) -> Messages + Send + Sync>;

/// What history the agent that takes over sees. It gets the first agent's history
/// without its instruction and without the transfer call (and its result).
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum HandoffHistory {
    /// All of it (the default).
    #[default]
    Full,
    /// Its last `n` messages (never starting with a tool result cut from its call).
    Last(usize),
    /// What a function makes of it (e.g. a summary as one user message).
    With(HistoryFn),
}

impl HandoffHistory {
    /// The history a function makes: `HandoffHistory::with(|handoff, history| ...)`.
    ///
    /// ```
    /// use tower_adk::Message;
    /// use tower_adk::compose::HandoffHistory;
    ///
    /// // The next agent sees a one-line summary instead of the conversation.
    /// let summary = HandoffHistory::with(|handoff, history| {
    ///     let said: Vec<&str> = history
    ///         .iter()
    ///         .filter(|m| matches!(m, Message::User { .. }))
    ///         .map(Message::content)
    ///         .collect();
    ///     vec![Message::user(format!("{} handed over. The user said: {}", handoff.from, said.join(" / ")))].into()
    /// });
    /// # let _ = summary;
    /// ```
    pub fn with<F>(f: F) -> Self
    where
        F: Fn(&Handoff, Messages) -> Messages + Send + Sync + 'static,
    {
        HandoffHistory::With(Arc::new(f))
    }

    fn apply(&self, handoff: &Handoff, history: Messages) -> Messages {
        match self {
            HandoffHistory::Full => history,
            HandoffHistory::Last(n) => {
                let mut start = history.len().saturating_sub(*n);
                while history
                    .get(start)
                    .is_some_and(|m| m.tool_call_id().is_some())
                {
                    start += 1;
                }
                history[start..].iter().cloned().collect()
            }
            HandoffHistory::With(f) => f(handoff, history),
        }
    }
}

impl fmt::Debug for HandoffHistory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandoffHistory::Full => f.write_str("Full"),
            HandoffHistory::Last(n) => f.debug_tuple("Last").field(n).finish(),
            HandoffHistory::With(_) => f.write_str("With(..)"),
        }
    }
}

impl Handoffs {
    /// The agent that starts each conversation; `name` is how its interrupts are
    /// addressed (make it the agent's name).
    pub fn new<S>(name: impl Into<Arc<str>>, agent: S) -> Self
    where
        S: Service<AgentRequest, Response = AgentRun> + Clone + Send + Sync + 'static,
        S::Error: Into<tower::BoxError>,
        S::Future: Send + 'static,
    {
        Handoffs {
            inner: Arc::new(Inner {
                first: Named::new(name, agent),
                targets: Vec::new(),
                history: HandoffHistory::Full,
            }),
        }
    }

    /// A target: the model sees a `transfer_to_<name>` tool described by `description`.
    /// (`name` must make a valid tool name: ASCII letters, digits, `_` and `-`.)
    pub fn to<S>(mut self, name: impl Into<Arc<str>>, description: &str, agent: S) -> Self
    where
        S: Service<AgentRequest, Response = AgentRun> + Clone + Send + Sync + 'static,
        S::Error: Into<tower::BoxError>,
        S::Future: Send + 'static,
    {
        let target = (Named::new(name, agent), description.to_owned());
        Arc::make_mut(&mut self.inner).targets.push(target);
        self
    }

    /// What history the agent that takes over sees (default [`HandoffHistory::Full`]).
    pub fn history(mut self, history: HandoffHistory) -> Self {
        Arc::make_mut(&mut self.inner).history = history;
        self
    }

    /// Starts a run; the same as calling the service.
    pub fn run(&self, request: AgentRequest) -> AgentRun {
        let inner = Arc::clone(&self.inner);
        AgentRun::from_events(async_stream::try_stream! {
            refused(&request, inner.agents())?;
            let mut template = next_request(&request, Messages::new());
            let agents = std::iter::once(&inner.first).chain(inner.targets.iter().map(|t| &t.0));
            // A resume goes to the agent its interrupts name.
            let current = match resumed_agent(&request, agents) {
                Some(agent) => agent?.clone(),
                None => inner.first.clone(),
            };
            let mut request = request;
            if current.name == inner.first.name {
                request.handlers_mut().push(Transfers(Arc::clone(&inner)).into());
            }
            let run = current.start(request).await?;
            let mut run = run;
            let mut result = None;
            while let Some(event) = run.next().await {
                match event? {
                    AgentEvent::Completed(done) => result = Some(done),
                    event => yield event,
                }
            }
            let result = result.ok_or(crate::agent::AgentError::Incomplete)?;
            // A run stopped at an interrupt hands off only once resumed and its turn
            // is done: its pending approvals are asked first.
            let target = (current.name == inner.first.name
                && result.status != crate::agent::RunStatus::Interrupted)
                .then(|| inner.transfer(&current, &result))
                .flatten();
            match target {
                None => yield AgentEvent::Completed(result),
                Some((target, handoff)) => {
                    let history = inner.history.apply(&handoff, handed_over(&result));
                    *template.messages_mut() = history;
                    let mut next = target.start(template).await?;
                    while let Some(event) = next.next().await {
                        yield event?;
                    }
                }
            }
        })
    }
}

impl Handoffs {
    /// Every name of its agents, and of the agents they are made of.
    pub(crate) fn agent_names(&self) -> Vec<Arc<str>> {
        all_names(self.inner.agents())
    }
}

impl Inner {
    /// The first agent, then the targets.
    fn agents(&self) -> impl Iterator<Item = &Named> {
        std::iter::once(&self.first).chain(self.targets.iter().map(|t| &t.0))
    }

    /// The target the first agent's run transferred to, if it did.
    fn transfer<'a>(&'a self, from: &Named, result: &AgentResult) -> Option<(&'a Named, Handoff)> {
        let record = result
            .tool_records
            .iter()
            .rev()
            .find(|r| r.is_success() && r.name.starts_with(TRANSFER_PREFIX))?;
        let name = record.name.strip_prefix(TRANSFER_PREFIX)?;
        let (target, _) = self.targets.iter().find(|(t, _)| &*t.name == name)?;
        let reason = serde_json::from_str::<serde_json::Value>(&record.arguments)
            .ok()
            .and_then(|a| a.get("reason")?.as_str().map(str::to_owned));
        let handoff = Handoff {
            from: Arc::clone(&from.name),
            to: Arc::clone(&target.name),
            reason,
        };
        Some((target, handoff))
    }
}

/// The first agent's history without its instruction and without the transfer calls
/// and their results.
fn handed_over(result: &AgentResult) -> Messages {
    let is_transfer = |name: &str| name.starts_with(TRANSFER_PREFIX);
    let mut history = Vec::with_capacity(result.messages.len());
    for message in result.messages.iter() {
        match message {
            Message::System { .. } => {}
            Message::Tool { name, .. } if is_transfer(name) => {}
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let calls: Vec<_> = tool_calls
                    .iter()
                    .filter(|c| !is_transfer(&c.name))
                    .cloned()
                    .collect();
                if !content.is_empty() || !calls.is_empty() {
                    history.push(Message::assistant_with_calls(content.clone(), calls));
                }
            }
            other => history.push(other.clone()),
        }
    }
    history.into()
}

/// The handler that gives the first agent's runs a transfer tool per target.
struct Transfers(Arc<Inner>);

impl Handler for Transfers {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("handoffs")
    }

    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        for (target, description) in &self.0.targets {
            config.add_tool(transfer_tool(&target.name, description));
        }
        Ok(config)
    }
}

/// `transfer_to_<name>`: ends the run once the turn's calls are done.
fn transfer_tool(name: &str, description: &str) -> Tool {
    let info = ToolInfo::new(
        format!("{TRANSFER_PREFIX}{name}"),
        format!("Hands the conversation over to the `{name}` agent: {description}"),
    )
    .parameters(json!({
        "type": "object",
        "properties": {"reason": {"type": "string", "description": "Why, in a few words."}}
    }));
    let done = format!("Transferred to {name}.");
    Tool::from_fn(info, move |_| {
        let done = done.clone();
        async move { Ok::<_, Infallible>(ToolOutput::new(done).finishing(Finish::WithResult)) }
    })
}

super::service_from_run!(Handoffs);
