//! An agent as a tool of another.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use tower::{BoxError, Service};

use super::{Named, passed_down};
use crate::agent::Agent;
use crate::agent::AgentEvent;
use crate::agent::AgentRequest;
use crate::agent::AgentResult;
use crate::agent::AgentRun;
use crate::agent::RunStatus;
use crate::checkpoint::CheckpointId;
use crate::interrupt::Interrupt;
use crate::tool::Tool;
use crate::tool::ToolError;
use crate::tool::ToolInfo;
use crate::tool::ToolRequest;
use crate::tool::ToolStream;
use crate::tool::{ToolEvent, ToolReport};
use crate::wire::WireEvent;

/// The result an [`AgentTool`] answers its caller's model with.
type ResultFn = Arc<dyn Fn(&AgentResult) -> String + Send + Sync>;

/// An agent (any agent service) as a streaming [`Tool`] of another agent.
///
/// The caller's model calls the tool with `{"request": "..."}`; the tool runs the agent
/// on that request, as a user message, and:
///
/// - passes the caller's extensions down (its identity, role, tenant), so handlers of
///   the sub-agent that read them (a role filter) hold for the caller: a sub-agent cannot
///   do what its caller may not;
/// - streams the sub-agent's text to the caller as the call's chunks
///   ([`AgentEvent::ToolOutputChunk`]), and every event of the sub-agent as a
///   [`SubAgentEvent`] ([`AgentEvent::ToolEvent`]) a UI can show;
/// - answers the caller's model with the sub-agent's final answer (or what
///   [`result_with`](AgentTool::result_with) makes of its result, e.g. its filled slots);
/// - surfaces the sub-agent's interrupts as the caller's: the caller's run stops at
///   them, each named by its address behind the call's
///   (`agent:support/tool:c1/agent:billing/tool:c9`). A resume of the caller with
///   decisions for those ids runs the call again, which resumes the sub-agent's run from
///   its checkpoint (kept in the caller's run-local values, so in the caller's
///   checkpoint) with the decisions, by their ids in the sub-agent.
///
/// A failed sub-agent run is a failed call: the caller's model reads the error.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentEvent, AgentRequest};
/// use tower_adk::compose::{AgentTool, SubAgentEvent};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use futures::StreamExt;
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let billing = Agent::builder(ScriptedModel::new([Turn::stream(["Your invoice ", "is paid."])]))
///     .name("billing")
///     .build()?;
/// let support = Agent::builder(ScriptedModel::new([
///     Turn::call("c1", "billing", json!({"request": "Is invoice 7 paid?"})),
///     Turn::text("Billing says invoice 7 is paid."),
/// ]))
/// .name("support")
/// .tool(AgentTool::new(billing).description("Answers billing questions").into_tool())
/// .build()?;
///
/// let mut run = support.run(AgentRequest::user("Is invoice 7 paid?"));
/// let (mut chunks, mut nested) = (String::new(), 0);
/// while let Some(event) = run.next().await {
///     let event = event?;
///     chunks.extend(event.output_chunk());
///     nested += SubAgentEvent::of(&event).is_some() as usize;
///     if let AgentEvent::Completed(result) = event {
///         assert_eq!(result.tool_record("c1").unwrap().content, "Your invoice is paid.");
///     }
/// }
/// assert_eq!(chunks, "Your invoice is paid.");
/// assert!(nested > 0);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct AgentTool {
    agent: Named,
    info: ToolInfo,
    result: ResultFn,
}

impl AgentTool {
    /// The agent as a tool named after it (see [`AgentBuilder::name`](crate::AgentBuilder::name)).
    pub fn new(agent: Agent) -> Self {
        let name = Arc::<str>::from(agent.name());
        AgentTool::named(name, agent)
    }

    /// Any agent service (an agent behind layers, a composition) as a tool named `name`
    /// (the name the model calls it by). The agent's interrupts surface in the caller's
    /// run as `agent:CALLER/tool:CALL_ID/` followed by the agent's own ids (which start
    /// with its own name, `agent:NAME/...`), whatever the tool's name.
    pub fn named<S>(name: impl Into<Arc<str>>, agent: S) -> Self
    where
        S: Service<AgentRequest, Response = AgentRun> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        let agent = Named::new(name, agent);
        let info = ToolInfo::new(&*agent.name, format!("Asks the `{}` agent.", agent.name))
            .parameters(json!({
                "type": "object",
                "properties": {
                    "request": {
                        "type": "string",
                        "description": "What to ask the agent, in full: it sees nothing else."
                    }
                },
                "required": ["request"]
            }));
        AgentTool {
            agent,
            info,
            result: Arc::new(|result| result.final_message.content().to_owned()),
        }
    }

    /// What the caller's model is told the agent does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = description.into();
        self
    }

    /// What the caller's model reads as the call's result, made from the sub-agent's
    /// result (default: its final message's text). For a sub-agent that fills slots,
    /// its run-local values:
    ///
    /// ```
    /// # use tower_adk::{Agent, testing::ScriptedModel};
    /// use tower_adk::compose::AgentTool;
    ///
    /// # let agent = Agent::builder(ScriptedModel::default()).name("intake").build().unwrap();
    /// let tool = AgentTool::new(agent)
    ///     .result_with(|result| serde_json::to_string(&result.locals).unwrap_or_default());
    /// ```
    pub fn result_with<F>(mut self, f: F) -> Self
    where
        F: Fn(&AgentResult) -> String + Send + Sync + 'static,
    {
        self.result = Arc::new(f);
        self
    }

    /// The tool.
    pub fn into_tool(self) -> Tool {
        let info = self.info.clone();
        Tool::streaming(info, self)
    }

    /// The request to the sub-agent: a new run on the call's request, or the resume of
    /// its interrupted run with the decisions the caller was resumed with.
    fn request(&self, call: &ToolRequest) -> Result<AgentRequest, BoxError> {
        let mut request = match call.nested_decisions() {
            Some(decisions) => {
                let checkpoint = take_checkpoint(call).ok_or_else(|| {
                    ToolError::new(
                        crate::tool::ToolErrorKind::Failed,
                        "the sub-agent's interrupted run is not known to this run",
                    )
                })?;
                AgentRequest::resume(checkpoint, decisions.clone())
            }
            None => AgentRequest::user(task(&call.arguments)),
        };
        *request.extensions_mut() = passed_down(call.extensions());
        Ok(request)
    }
}

/// The text the sub-agent is asked: the `request` argument, or the arguments as JSON.
fn task(arguments: &Value) -> String {
    match arguments.get("request").and_then(Value::as_str) {
        Some(request) => request.to_owned(),
        None => arguments.to_string(),
    }
}

/// Where the caller's run keeps the checkpoint of the sub-agent run of a call.
fn checkpoint_key(call_id: &str) -> String {
    format!("tower_adk.agent_tool/{call_id}")
}

fn keep_checkpoint(call: &ToolRequest, checkpoint: &CheckpointId) {
    // A checkpoint id always serializes.
    let _ = call
        .locals()
        .insert(checkpoint_key(&call.call_id), checkpoint);
}

fn take_checkpoint(call: &ToolRequest) -> Option<CheckpointId> {
    let value = call.locals().remove(&checkpoint_key(&call.call_id))?;
    serde_json::from_value(value).ok()
}

impl Service<ToolRequest> for AgentTool {
    type Response = ToolStream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ToolStream, BoxError>> + Send>>;

    /// Always ready: the sub-agent is called with `oneshot` once the request is read.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ToolRequest) -> Self::Future {
        let tool = self.clone();
        Box::pin(async move {
            let request = tool.request(&call)?;
            let run = tool.agent.start(request).await?;
            let report = ToolReport::new();
            let chunks = relay(tool, call, run, report.clone());
            Ok(ToolStream::new(chunks).reporting(report))
        })
    }
}

/// The sub-agent's run as the call's chunks: its text, with each of its events reported
/// before; at its end the call's result, or the interrupt its run stopped at.
fn relay(
    tool: AgentTool,
    call: ToolRequest,
    run: AgentRun,
    report: ToolReport,
) -> impl futures::Stream<Item = Result<String, BoxError>> + Send + 'static {
    async_stream::try_stream! {
        if !report.is_read() {
            // No one reads the events: the sub-agent need not make them either.
            let result = run.result().await?;
            if result.status == RunStatus::Interrupted {
                Err(interrupted(&tool, &call, &result))?;
            }
            report.result((tool.result)(&result));
            return;
        }
        let mut run = run;
        while let Some(event) = run.next().await {
            let event = event?;
            let chunk = event.text_delta().unwrap_or_default().to_owned();
            if let AgentEvent::Completed(result) = &event {
                if result.status == RunStatus::Interrupted {
                    Err(interrupted(&tool, &call, result))?;
                }
                report.result((tool.result)(result));
            }
            report.event(ToolEvent::new(SubAgentEvent {
                agent: Arc::clone(&tool.agent.name),
                event,
            }));
            yield chunk;
        }
    }
}

/// The interrupt of the call whose sub-agent stopped at `result`'s interrupts.
fn interrupted(tool: &AgentTool, call: &ToolRequest, result: &AgentResult) -> BoxError {
    if let Some(checkpoint) = &result.checkpoint {
        keep_checkpoint(call, checkpoint);
    }
    let payload = json!({"agent": &*tool.agent.name, "checkpoint": result.checkpoint});
    Interrupt::nested(payload, result.interrupts.iter().cloned()).into()
}

impl fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentTool")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// This agent as a tool of another, described to the caller's model by
    /// `description`; see [`AgentTool`].
    pub fn as_tool(&self, description: impl Into<String>) -> Tool {
        AgentTool::new(self.clone())
            .description(description)
            .into_tool()
    }
}

/// An event of an agent that a tool call ran (see [`AgentTool`]), as the caller's run
/// reports it: in an [`AgentEvent::ToolEvent`], in order with the call's chunks.
///
/// Its JSON form (on the [wire](crate::wire)) is `{"agent": NAME, "event": EVENT}`,
/// the event in its own wire form; a deeper agent's events nest the same way.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SubAgentEvent {
    /// The sub-agent's name.
    pub agent: Arc<str>,
    /// Its event.
    pub event: AgentEvent,
}

impl SubAgentEvent {
    /// The sub-agent event that `event` carries, if it carries one.
    pub fn of(event: &AgentEvent) -> Option<&SubAgentEvent> {
        match event {
            AgentEvent::ToolEvent { event, .. } => event.downcast_ref(),
            _ => None,
        }
    }
}

impl Serialize for SubAgentEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Form<'a> {
            agent: &'a str,
            event: WireEvent,
        }
        Form {
            agent: &self.agent,
            event: WireEvent::from(&self.event),
        }
        .serialize(serializer)
    }
}
