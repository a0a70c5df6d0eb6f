//! A message sent to a task: a new task (a run on the message's context, a new thread
//! when it names none) or the resume of an input-required one; then the run's progress
//! as A2A's stream events, which `SendMessage` drains and `SendStreamingMessage` sends.

use std::sync::Arc;

use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use super::Face;
use super::convert;
use super::error::A2aError;
use super::tasks::{ANSWER, TaskEntry};
use crate::a2a::{
    A2aErrorCode, Artifact, Message, Part, Role, StreamResponse, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use crate::agent::{AgentError, AgentEvent, AgentRequest, AgentResult, RunStatus, check_thread};
use crate::auth::Identity;
use crate::server::ServedAgent;
use crate::server::error::ApiError;
use crate::server::served_run::ServedRun;
use crate::server::state::AppState;
use crate::wire::WireError;

/// A run started for a task, its first event in: nothing refused it.
pub(super) struct Started {
    entry: Arc<TaskEntry>,
    run: ServedRun,
    first: AgentEvent,
    token: CancellationToken,
}

impl Started {
    /// The task.
    pub(super) fn entry(&self) -> &Arc<TaskEntry> {
        &self.entry
    }
}

/// Starts the run a message asks for, as the caller. The task is kept only once the
/// run's first event is in: a refused run (a busy context, decisions that do not fit,
/// the caller's runs at their limit) leaves no task and changes none.
pub(super) async fn start(
    face: &Face,
    state: &AppState,
    name: &str,
    served: &ServedAgent,
    caller: &Identity,
    mut message: Message,
) -> Result<Started, A2aError> {
    let (existing, request) = match message.task_id.clone() {
        Some(id) => {
            let (entry, request) = resume(face, name, served, caller, &id, &message).await?;
            (Some(entry), request)
        }
        None => {
            let context = message.context_id.clone();
            let context = context.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            check_thread(&context).map_err(ApiError::from)?;
            message.context_id = Some(context.clone());
            let input = convert::user_message(&message)?;
            (None, AgentRequest::new(vec![input]).on_thread(context))
        }
    };
    let request = request.with_identity(caller.clone());
    let mut run = state.start(served, request).await?;
    let first = match run.next().await {
        Some(Ok(event)) => event,
        Some(Err(error)) => return Err(ApiError::from(&error).into()),
        None => return Err(ApiError::from(&AgentError::Incomplete).into()),
    };
    let entry = existing.unwrap_or_else(|| {
        let id = uuid::Uuid::new_v4().to_string();
        let context = message.context_id.clone().unwrap_or_default();
        let entry = TaskEntry::new(id, name, caller.principal().clone(), context);
        let entry = Arc::new(entry);
        face.tasks.insert(Arc::clone(&entry));
        entry
    });
    message.task_id = Some(entry.id.clone());
    message.context_id = Some(entry.context.clone());
    if message.role == Role::Unspecified {
        message.role = Role::User;
    }
    let token = entry.start(message);
    Ok(Started {
        entry,
        run,
        first,
        token,
    })
}

/// The resume a message on an existing task asks for: the task must wait for input, and
/// the message must carry decisions that read. The core checks who may resume (the
/// owner, or one its `Authorize` lets decide) as on our own resume route.
async fn resume(
    face: &Face,
    name: &str,
    served: &ServedAgent,
    caller: &Identity,
    id: &str,
    message: &Message,
) -> Result<(Arc<TaskEntry>, AgentRequest), A2aError> {
    let entry = face
        .tasks
        .get(name, id)
        .ok_or_else(|| A2aError::task_not_found(id))?;
    if message
        .context_id
        .as_ref()
        .is_some_and(|c| *c != entry.context)
    {
        return Err(A2aError::task_not_found(id));
    }
    if let Some((pending, checkpoint)) = entry.waiting() {
        let decisions = convert::decisions(message, &pending)?;
        return Ok((entry, AgentRequest::resume(checkpoint, decisions)));
    }
    if !visible(served, caller, &entry).await {
        return Err(A2aError::task_not_found(id));
    }
    let state = entry.snapshot(Some(0)).status.state;
    if state.is_terminal() {
        let message = format!("task `{id}` is over: send a new message on its context");
        return Err(A2aError::new(A2aErrorCode::UnsupportedOperation, message));
    }
    let message = format!("task `{id}` is working: wait for it, or cancel it");
    Err(A2aError::invalid_params(message))
}

/// Whether the caller may see the task: its owner, or one the agent's `Authorize` lets
/// read its context's thread.
pub(super) async fn visible(served: &ServedAgent, caller: &Identity, entry: &TaskEntry) -> bool {
    if entry.owner == *caller.principal() {
        return true;
    }
    let thread = served.agent.thread_for(caller, &entry.context).await;
    matches!(thread, Ok(Some(_)))
}

/// What to do next: the run's next event, or stop for a cancel.
enum Step {
    Event(Option<Result<AgentEvent, AgentError>>),
    Cancel,
}

/// The run's progress as A2A events: the task, `WORKING`, the answer's text as it
/// streams (chunks of the artifact `answer`), then the final status (`COMPLETED`,
/// `INPUT_REQUIRED`, `FAILED` or `CANCELED`). The task records each step as it is
/// yielded. Dropping the stream (the client went away) drops the run, which cancels it
/// as on our own routes, and the task ends `CANCELED`.
pub(super) fn progress(started: Started) -> impl Stream<Item = StreamResponse> + Send + 'static {
    let Started {
        entry,
        mut run,
        first,
        token,
    } = started;
    async_stream::stream! {
        let mut guard = CancelOnDrop(Some(Arc::clone(&entry)));
        yield StreamResponse::Task(entry.snapshot(None));
        yield status_update(&entry, TaskStatus::new(TaskState::Working));
        let mut next = Some(Ok(first));
        let mut streamed = false;
        loop {
            let step = match next.take() {
                Some(event) => Step::Event(Some(event)),
                None => tokio::select! {
                    biased;
                    () = token.cancelled() => Step::Cancel,
                    event = run.next() => Step::Event(event),
                },
            };
            let event = match step {
                Step::Cancel => {
                    run.cancel().await;
                    let said = Part::text("the task was canceled");
                    let message = convert::agent_message(&entry.id, &entry.context, vec![said]);
                    let status = entry.end(TaskState::Canceled, Some(message), None);
                    guard.0 = None;
                    yield status_update(&entry, status);
                    break;
                }
                Step::Event(event) => event,
            };
            match event {
                Some(Ok(AgentEvent::TextDelta(text))) if !text.is_empty() => {
                    let append = entry.append_answer(&text);
                    streamed = true;
                    yield chunk(&entry, vec![Part::text(text)], append, false);
                }
                Some(Ok(AgentEvent::Completed(result))) => {
                    if let Some(closing) = close_answer(&entry, &result, streamed) {
                        yield closing;
                    }
                    let status = ended(&entry, *result);
                    guard.0 = None;
                    yield status_update(&entry, status);
                    break;
                }
                Some(Err(error)) => {
                    let status = failed(&entry, &WireError::from(&error));
                    guard.0 = None;
                    yield status_update(&entry, status);
                    break;
                }
                None => {
                    let status = failed(&entry, &WireError::from(&AgentError::Incomplete));
                    guard.0 = None;
                    yield status_update(&entry, status);
                    break;
                }
                Some(Ok(_)) => {}
            }
        }
    }
}

/// The answer's last chunk: its whole text when none streamed, else an empty chunk
/// that closes it (`lastChunk`); none for a run that stopped at interrupts.
fn close_answer(entry: &TaskEntry, result: &AgentResult, streamed: bool) -> Option<StreamResponse> {
    if result.status == RunStatus::Interrupted {
        return None;
    }
    if streamed {
        return Some(chunk(entry, Vec::new(), true, true));
    }
    let text = result.final_message.content();
    if text.is_empty() {
        return None;
    }
    let append = entry.append_answer(text);
    Some(chunk(entry, vec![Part::text(text)], append, true))
}

/// The task at the run's end: completed with the final message, or input required
/// with the interrupts.
fn ended(entry: &TaskEntry, result: AgentResult) -> TaskStatus {
    let (id, context) = (&entry.id, &entry.context);
    match (result.status, result.checkpoint) {
        (RunStatus::Interrupted, Some(checkpoint)) => {
            let parts = convert::interrupt_parts(&result.interrupts);
            let message = convert::agent_message(id, context, parts);
            let waiting = Some((result.interrupts, checkpoint));
            entry.end(TaskState::InputRequired, Some(message), waiting)
        }
        (RunStatus::Interrupted, None) => {
            let message = "the run stopped at interrupts but kept no checkpoint to resume";
            failed(
                entry,
                &WireError::new("interrupted_without_checkpoint", message),
            )
        }
        _ => {
            let text = result.final_message.content();
            let message = convert::agent_message(id, context, vec![Part::text(text)]);
            entry.end(TaskState::Completed, Some(message), None)
        }
    }
}

/// The task failed (or was cut at a drain's deadline: canceled), saying why.
fn failed(entry: &TaskEntry, error: &WireError) -> TaskStatus {
    let parts = convert::failure_parts(error);
    let message = convert::agent_message(&entry.id, &entry.context, parts);
    let state = if error.code == "cancelled" {
        TaskState::Canceled
    } else {
        TaskState::Failed
    };
    entry.end(state, Some(message), None)
}

fn status_update(entry: &TaskEntry, status: TaskStatus) -> StreamResponse {
    let event = TaskStatusUpdateEvent::new(&entry.id, &entry.context, status);
    StreamResponse::StatusUpdate(event)
}

fn chunk(entry: &TaskEntry, parts: Vec<Part>, append: bool, last: bool) -> StreamResponse {
    let artifact = Artifact::new(ANSWER, parts).with_name("answer");
    let event = TaskArtifactUpdateEvent::new(&entry.id, &entry.context, artifact, append, last);
    StreamResponse::ArtifactUpdate(event)
}

/// Ends the task `CANCELED` when its progress is dropped before the run ended (the
/// client went away; the run itself is cancelled as on our own routes).
struct CancelOnDrop(Option<Arc<TaskEntry>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(entry) = self.0.take() {
            let said = Part::text("the client went away: the run was cancelled");
            let message = convert::agent_message(&entry.id, &entry.context, vec![said]);
            entry.end(TaskState::Canceled, Some(message), None);
        }
    }
}
