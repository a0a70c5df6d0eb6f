//! [`RemoteAgentTool`]: a remote A2A agent as a streaming tool, with its input-required
//! tasks as the caller's interrupts and its dropped calls canceled.

use std::fmt;
use std::future::Ready;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use tower::{BoxError, Service};

use super::cancel::CancelOnDrop;
use super::error::A2aError;
use super::progress::{Outcome, Progress, Step};
use super::remote::RemoteAgent;
use super::waiting::{Waiting, answer, asked, listed_interrupts};
use crate::a2a::{Message, Part, Role};
use crate::interrupt::{Interrupt, InterruptAddress};
use crate::tool::Tool;
use crate::tool::ToolError;
use crate::tool::ToolErrorKind;
use crate::tool::ToolInfo;
use crate::tool::ToolReport;
use crate::tool::ToolRequest;
use crate::tool::ToolStream;

/// A remote A2A agent as a streaming [`Tool`]: the model calls it with
/// `{"message": "..."}`, and the message goes to the agent.
///
/// - Its artifacts' chunks and its status messages reach the caller as the call's chunks
///   ([`AgentEvent::ToolOutputChunk`](crate::AgentEvent::ToolOutputChunk)), as they
///   come; the model reads the final text of its artifacts (or its answer message).
/// - The calls of one run go on with one remote conversation: the agent's `contextId`
///   is kept in the run's local values (so in its checkpoints); a new run starts a new
///   conversation.
/// - A task that ends `TASK_STATE_FAILED`, `_REJECTED` or `_CANCELED` is a failed call:
///   the model reads the agent's reason. A call the agent cannot be reached for, or
///   answers with a JSON-RPC error, fails the same way, with the [`A2aError`] as source.
/// - A task that waits (`TASK_STATE_INPUT_REQUIRED`, `_AUTH_REQUIRED`) interrupts the
///   caller's run. The interrupt names the remote's own interrupts when it lists them (an
///   agent served by tower-adk does: `agent:support/tool:c1/agent:billing/tool:c9`), else
///   one interrupt `agent:support/tool:c1/agent:NAME/tool:TASK_ID`, whose payload shows
///   the agent's question (`text`, `data`, `parts`). The remote task's id and context are
///   kept in the run's local values. A resume of the caller with decisions for those ids
///   sends them to the remote task as its next message, and the task goes on: one data
///   part `{"decisions": {ID: DECISION}}` (each [`Decision`](crate::interrupt::Decision) in its JSON form), or, for a
///   single `respond` decision whose answer is a text, that text.
/// - A call dropped before its task ends (the run was dropped, or timed out) sends
///   `CancelTask` for the task, from a task of its own, bounded by the agent's
///   [cancel timeout](super::RemoteAgentBuilder::cancel_timeout): best effort, and
///   never outliving the run by more than that.
///
/// # Example
///
/// ```no_run
/// use tower_adk::a2a::client::{RemoteAgent, RemoteAgentTool};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::{Agent, AgentRequest};
/// use serde_json::json;
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let billing = RemoteAgent::connect("http://127.0.0.1:9999").await?;
/// let model = ScriptedModel::new([
///     Turn::call("c1", "billing", json!({"message": "Is invoice 7 paid?"})),
///     Turn::text("Billing says it is."),
/// ]);
/// let support = Agent::builder(model)
///     .tool(RemoteAgentTool::new(billing).name("billing").into_tool())
///     .build()?;
/// let result = support.run(AgentRequest::user("Is invoice 7 paid?")).await?;
/// println!("{}", result.tool_record("c1").map_or("", |r| r.content.as_str()));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RemoteAgentTool {
    agent: RemoteAgent,
    info: ToolInfo,
}

impl RemoteAgentTool {
    /// The agent as a tool named after it ([`RemoteAgent::name`]), described by its
    /// description.
    pub fn new(agent: RemoteAgent) -> Self {
        let description = if agent.description().is_empty() {
            format!("Asks the remote agent `{}`.", agent.name())
        } else {
            agent.description().to_owned()
        };
        let info = ToolInfo::new(agent.name(), description).parameters(json!({
            "type": "object",
            "properties": {
                "message": {
                    "type": "string",
                    "description": "What to ask the agent, in full: it sees nothing else of this conversation."
                }
            },
            "required": ["message"]
        }));
        RemoteAgentTool { agent, info }
    }

    /// The name the model calls it by.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.info.name = name.into();
        self
    }

    /// What the model is told the agent does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = description.into();
        self
    }

    /// The tool.
    pub fn into_tool(self) -> Tool {
        let info = self.info.clone();
        Tool::streaming(info, self)
    }

    /// The message of this call: the model's, on the run's conversation; or, on resume,
    /// the decisions for the remote task that waits.
    fn message(&self, call: &ToolRequest) -> Result<Message, BoxError> {
        let mut message = Message::new(uuid::Uuid::new_v4().to_string(), Role::User, Vec::new());
        match call.nested_decisions() {
            Some(decisions) => {
                let waiting = take_waiting(call).ok_or_else(|| {
                    ToolError::new(
                        ToolErrorKind::Failed,
                        "the remote task this call waits on is not known to this run",
                    )
                })?;
                message.task_id = Some(waiting.task_id);
                message.context_id = waiting.context_id;
                message.parts = answer(decisions);
            }
            None => {
                let text = match call.arguments.get("message").and_then(Value::as_str) {
                    Some(text) => text.to_owned(),
                    None => call.arguments.to_string(),
                };
                message.context_id = call
                    .locals()
                    .get::<String>(&self.context_key())
                    .ok()
                    .flatten();
                message.parts = vec![Part::text(text)];
            }
        }
        Ok(message)
    }

    /// Where the run keeps the remote conversation of this tool.
    fn context_key(&self) -> String {
        format!("tower_adk.a2a/{}/context", self.info.name)
    }

    /// The interrupt of a call whose remote task waits, asking with `question`.
    fn interrupted(
        &self,
        call: &ToolRequest,
        progress: &Progress,
        question: Option<Message>,
    ) -> BoxError {
        let Some(task_id) = progress.task_id.clone() else {
            return self.failed(A2aError::Protocol {
                agent: self.agent.name().to_owned(),
                method: "SendMessage",
                reason: "a task waits for input but has no id".to_owned(),
            });
        };
        let waiting = Waiting {
            task_id: task_id.clone(),
            context_id: progress.context_id.clone(),
        };
        // A string key and plain strings always serialize.
        let _ = call.locals().insert(waiting_key(&call.call_id), &waiting);
        let listed = question.as_ref().map(listed_interrupts).unwrap_or_default();
        let pending = if listed.is_empty() {
            let id = InterruptAddress::for_call(self.agent.name(), &task_id);
            vec![asked(id, self.agent.name(), &task_id, question.as_ref())]
        } else {
            listed
        };
        let payload = json!({
            "agent": self.agent.name(),
            "task_id": task_id,
            "context_id": progress.context_id,
        });
        Interrupt::nested(payload, pending).into()
    }

    /// A failed call, as the model reads it.
    fn failed(&self, error: A2aError) -> BoxError {
        if error.is_timeout() {
            ToolError::new(ToolErrorKind::Timeout, error.to_string()).into()
        } else {
            error.into()
        }
    }
}

/// Where the run keeps the remote task that the call `call_id` waits on.
fn waiting_key(call_id: &str) -> String {
    format!("tower_adk.a2a/task/{call_id}")
}

fn take_waiting(call: &ToolRequest) -> Option<Waiting> {
    let value = call.locals().remove(&waiting_key(&call.call_id))?;
    serde_json::from_value(value).ok()
}

impl Service<ToolRequest> for RemoteAgentTool {
    type Response = ToolStream;
    type Error = BoxError;
    type Future = Ready<Result<ToolStream, BoxError>>;

    /// Always ready: the agent is called when the stream is first polled.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ToolRequest) -> Self::Future {
        let report = ToolReport::new();
        let chunks = relay(self.clone(), call, report.clone());
        std::future::ready(Ok(ToolStream::new(chunks).reporting(report)))
    }
}

/// The remote task's events as the call's chunks; at its end the call's result, its
/// failure, or the interrupt it waits at.
fn relay(
    tool: RemoteAgentTool,
    call: ToolRequest,
    report: ToolReport,
) -> impl Stream<Item = Result<String, BoxError>> + Send + 'static {
    async_stream::try_stream! {
        let message = tool.message(&call)?;
        let mut events = tool.agent.send(message);
        let mut progress = Progress::default();
        let mut cancel = CancelOnDrop::new(tool.agent.clone());
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| tool.failed(e))?;
            for step in progress.read(event) {
                if let Some(task_id) = &progress.task_id {
                    cancel.arm(task_id);
                }
                if let Some(context) = &progress.context_id {
                    let _ = call.locals().insert(tool.context_key(), context);
                }
                match step {
                    Step::Chunk(text) if !text.is_empty() => yield text,
                    Step::Chunk(_) => {}
                    Step::End(outcome) => {
                        cancel.disarm();
                        match outcome {
                            Outcome::Completed(result) => report.result(result),
                            Outcome::Failed { state, reason } => {
                                let state = format!("{state:?}").to_lowercase();
                                Err(ToolError::new(
                                    ToolErrorKind::Failed,
                                    format!("the remote agent `{}` ended the task {state}: {reason}", tool.agent.name()),
                                ))?;
                            }
                            Outcome::InputRequired(question) => {
                                Err(tool.interrupted(&call, &progress, question))?;
                            }
                        }
                        return;
                    }
                }
            }
        }
        Err(tool.failed(A2aError::Protocol {
            agent: tool.agent.name().to_owned(),
            method: if tool.agent.is_streaming() { "SendStreamingMessage" } else { "SendMessage" },
            reason: "the answer ended before the task did".to_owned(),
        }))?;
    }
}

impl fmt::Debug for RemoteAgentTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteAgentTool")
            .field("agent", &self.agent)
            .field("name", &self.info.name)
            .finish_non_exhaustive()
    }
}

impl RemoteAgent {
    /// This agent as a tool named after it; see [`RemoteAgentTool`].
    pub fn as_tool(&self) -> Tool {
        RemoteAgentTool::new(self.clone()).into_tool()
    }
}
