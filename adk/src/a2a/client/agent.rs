//! A [`RemoteAgent`] as an agent service (`Service<AgentRequest, Response = AgentRun>`):
//! the remote agent answers a request as a local agent would, so it stands wherever an
//! agent service does in a composition, e.g. as a [`Handoffs`](crate::compose::Handoffs)
//! target.

use std::convert::Infallible;
use std::future::Ready;
use std::task::{Context, Poll};

use futures::StreamExt;
use tower::Service;

use super::cancel::CancelOnDrop;
use super::progress::{Outcome, Progress, Step};
use super::remote::RemoteAgent;
use super::waiting::{answer, asked, listed_interrupts};
use crate::a2a::{Message as A2aMessage, Part, Role};
use crate::agent::{AgentError, AgentEvent, AgentRequest, AgentResult, AgentRun, RunStatus};
use crate::checkpoint::CheckpointId;
use crate::interrupt::{InterruptAddress, PendingInterrupt};
use crate::message::{Message, Messages};

impl RemoteAgent {
    /// Runs a request on the remote agent; the same as calling the service.
    ///
    /// - A new request sends the conversation as one message: the text of its one
    ///   message, or, for a longer history, each message as a text part `ROLE: TEXT`
    ///   (instructions left out). The remote agent keeps its own history from there: a
    ///   [`HandoffHistory`](crate::compose::HandoffHistory) chooses what it is sent.
    /// - Its answer streams as [`AgentEvent::TextDelta`]s (its artifacts' chunks and
    ///   status messages); the run's final message is the text of its artifacts.
    /// - A task that waits for input ends the run [`Interrupted`](RunStatus::Interrupted)
    ///   with one interrupt per interrupt the remote lists (`agent:NAME/tool:TASK_ID/`
    ///   and the remote's id), or one for the task (`agent:NAME/tool:TASK_ID`), and a
    ///   [`CheckpointId`] that names the remote task (`thread` its context, `run` its
    ///   id; nothing is written to a store). [`AgentRequest::resume`] with that checkpoint
    ///   sends the decisions to the task as its next message (see
    ///   [`RemoteAgentTool`](super::RemoteAgentTool)), and the run goes on.
    /// - A task that fails, is rejected or canceled fails the run with
    ///   [`AgentError::Agent`]; so does an [`A2aError`](super::A2aError).
    /// - A run dropped before its task ended cancels the task (best effort, bounded by
    ///   the cancel timeout).
    ///
    /// # Example
    ///
    /// ```no_run
    /// use tower_adk::a2a::client::RemoteAgent;
    /// use tower_adk::compose::Handoffs;
    /// use tower_adk::testing::{ScriptedModel, Turn};
    /// use tower_adk::{Agent, AgentRequest};
    /// use serde_json::json;
    ///
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let billing = RemoteAgent::builder("http://127.0.0.1:9999").name("billing").connect().await?;
    /// let triage = ScriptedModel::new([Turn::call("c1", "transfer_to_billing", json!({}))]);
    /// let desk = Handoffs::new("triage", Agent::builder(triage).name("triage").build()?)
    ///     .to("billing", "Invoices and refunds", billing);
    /// let result = desk.run(AgentRequest::user("Is invoice 7 paid?")).await?;
    /// println!("{}", result.final_message.content());
    /// # Ok(())
    /// # }
    /// ```
    pub fn run(&self, request: AgentRequest) -> AgentRun {
        let agent = self.clone();
        AgentRun::from_events(async_stream::try_stream! {
            let message = agent.message_for(&request)?;
            let mut messages = request.messages().clone();
            let mut events = agent.send(message);
            let mut progress = Progress::default();
            let mut cancel = CancelOnDrop::new(agent.clone());
            let failed = |reason: String| AgentError::Agent(reason.into());
            while let Some(event) = events.next().await {
                let event = event.map_err(|e| AgentError::Agent(e.into()))?;
                for step in progress.read(event) {
                    if let Some(task_id) = &progress.task_id {
                        cancel.arm(task_id);
                    }
                    match step {
                        Step::Chunk(text) if !text.is_empty() => yield AgentEvent::TextDelta(text),
                        Step::Chunk(_) => {}
                        Step::End(outcome) => {
                            cancel.disarm();
                            let result = match outcome {
                                Outcome::Completed(text) => {
                                    let reply = Message::assistant(text);
                                    messages.push(reply.clone());
                                    yield AgentEvent::Message(reply.clone());
                                    finished(RunStatus::Completed, reply, messages, Vec::new(), None)
                                }
                                Outcome::Failed { state, reason } => {
                                    let state = format!("{state:?}").to_lowercase();
                                    Err(failed(format!("the remote agent `{}` ended the task {state}: {reason}", agent.name())))?;
                                    return;
                                }
                                Outcome::InputRequired(question) => {
                                    let task_id = progress.task_id.clone().unwrap_or_default();
                                    let interrupts = agent.interrupts(&task_id, question.as_ref());
                                    for interrupt in &interrupts {
                                        yield AgentEvent::Interrupt(Box::new(interrupt.clone()));
                                    }
                                    let checkpoint = CheckpointId {
                                        thread: progress.context_id.clone().unwrap_or_default(),
                                        version: 0,
                                        run: task_id,
                                    };
                                    let reply = Message::assistant(question.as_ref().map(|q| super::progress::parts_text(&q.parts)).unwrap_or_default());
                                    finished(RunStatus::Interrupted, reply, messages, interrupts, Some(checkpoint))
                                }
                            };
                            yield AgentEvent::Completed(Box::new(result));
                            return;
                        }
                    }
                }
            }
            Err(failed(format!("the answer of the remote agent `{}` ended before its task did", agent.name())))?;
        })
    }

    /// The message a request sends: the decisions for the task its checkpoint names, or
    /// its conversation.
    fn message_for(&self, request: &AgentRequest) -> Result<A2aMessage, AgentError> {
        let mut message = A2aMessage::new(uuid::Uuid::new_v4().to_string(), Role::User, Vec::new());
        if let Some(checkpoint) = request.resumes() {
            let decisions = request.resume_decisions().cloned().unwrap_or_default();
            // The remote's own ids, when it listed its interrupts; else the task's.
            let remote = decisions
                .into_iter()
                .map(|(id, decision)| {
                    let inner = id
                        .parse::<InterruptAddress>()
                        .ok()
                        .and_then(|a| a.nested().map(str::to_owned));
                    (inner.unwrap_or(id), decision)
                })
                .collect();
            message.task_id = Some(checkpoint.run.clone());
            message.context_id = Some(checkpoint.thread.clone()).filter(|c| !c.is_empty());
            message.parts = answer(&remote);
            return Ok(message);
        }
        message.parts = conversation(request.messages());
        if message.parts.is_empty() {
            return Err(AgentError::Agent(
                format!(
                    "a request to the remote agent `{}` with nothing to send",
                    self.name()
                )
                .into(),
            ));
        }
        Ok(message)
    }

    /// The interrupts of a task that asks for input, addressed from this agent.
    fn interrupts(&self, task_id: &str, question: Option<&A2aMessage>) -> Vec<PendingInterrupt> {
        let at = || InterruptAddress::for_call(self.name(), task_id);
        let listed = question.map(listed_interrupts).unwrap_or_default();
        if listed.is_empty() {
            return vec![asked(at(), self.name(), task_id, question)];
        }
        listed
            .into_iter()
            .map(|inner| PendingInterrupt {
                id: at().through(&inner.id).to_string(),
                ..inner
            })
            .collect()
    }
}

/// The history as one message's parts: one message's text, or each message as
/// `ROLE: TEXT`; instructions and empty messages left out.
fn conversation(messages: &Messages) -> Vec<Part> {
    let said: Vec<&Message> = messages
        .iter()
        .filter(|m| !matches!(m, Message::System { .. }) && !m.content().is_empty())
        .collect();
    match said.as_slice() {
        [one] => vec![Part::text(one.content())],
        many => many
            .iter()
            .map(|m| Part::text(format!("{}: {}", role(m), m.content())))
            .collect(),
    }
}

fn role(message: &Message) -> &'static str {
    match message {
        Message::System { .. } => "system",
        Message::User { .. } => "user",
        Message::Assistant { .. } => "assistant",
        Message::Tool { .. } => "tool",
    }
}

/// The result of a run of the remote agent.
fn finished(
    status: RunStatus,
    final_message: Message,
    messages: Messages,
    interrupts: Vec<PendingInterrupt>,
    checkpoint: Option<CheckpointId>,
) -> AgentResult {
    AgentResult {
        status,
        final_message,
        messages,
        tool_records: Vec::new(),
        iterations: 0,
        model_calls: 0,
        usage: Default::default(),
        cost: None,
        locals: Default::default(),
        interrupts,
        checkpoint,
    }
}

impl Service<AgentRequest> for RemoteAgent {
    type Response = AgentRun;
    type Error = Infallible;
    type Future = Ready<Result<AgentRun, Infallible>>;

    /// Always ready: the remote agent is called when the run is first polled.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: AgentRequest) -> Self::Future {
        std::future::ready(Ok(self.run(request)))
    }
}
