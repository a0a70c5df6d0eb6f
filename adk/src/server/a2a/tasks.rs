//! [`Tasks`]: the A2A tasks of a server, in memory, each its caller's: where each stands
//! (an A2A [`Task`]), the checkpoint an input-required one resumes from, and the handle
//! that cancels a running one.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::a2a::{Artifact, Message, Part, Task, TaskState, TaskStatus};
use crate::auth::Principal;
use crate::checkpoint::CheckpointId;
use crate::interrupt::PendingInterrupt;

/// The id of the artifact that carries a task's answer.
pub(super) const ANSWER: &str = "answer";

/// The tasks of a server, at most `most` of them: past it, the oldest that has ended
/// (or, if none has, the oldest) is forgotten.
#[derive(Debug)]
pub(super) struct Tasks {
    most: usize,
    state: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_id: HashMap<String, Arc<TaskEntry>>,
    order: VecDeque<String>,
}

impl Tasks {
    pub(super) fn new(most: usize) -> Self {
        Tasks {
            most: most.max(1),
            state: Mutex::new(Kept::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Kept> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task of this id, if it is kept and of this agent.
    pub(super) fn get(&self, agent: &str, id: &str) -> Option<Arc<TaskEntry>> {
        let entry = self.lock().by_id.get(id).cloned();
        entry.filter(|entry| entry.agent == agent)
    }

    /// Keeps a new task.
    pub(super) fn insert(&self, entry: Arc<TaskEntry>) {
        let mut kept = self.lock();
        while kept.by_id.len() >= self.most {
            let ended = kept.order.iter().position(|id| {
                kept.by_id
                    .get(id)
                    .is_none_or(|entry| entry.snapshot(None).status.state.is_terminal())
            });
            let Some(id) = kept.order.remove(ended.unwrap_or(0)) else {
                break;
            };
            kept.by_id.remove(&id);
        }
        kept.order.push_back(entry.id.clone());
        kept.by_id.insert(entry.id.clone(), entry);
    }
}

/// One task: its agent, its owner (the principal whose message started it) and where it
/// stands.
#[derive(Debug)]
pub(super) struct TaskEntry {
    pub(super) id: String,
    pub(super) agent: String,
    pub(super) owner: Principal,
    pub(super) context: String,
    state: Mutex<TaskRecord>,
    /// The task's state, for a cancel that waits for the run to end.
    changed: watch::Sender<TaskState>,
}

#[derive(Debug)]
struct TaskRecord {
    task: Task,
    /// The interrupts an input-required task waits on, and the checkpoint it resumes.
    pending: Vec<PendingInterrupt>,
    checkpoint: Option<CheckpointId>,
    /// Cancels the run in flight.
    cancel: Option<CancellationToken>,
}

impl TaskEntry {
    /// A task that has just started its run: working, with the caller's message.
    pub(super) fn new(id: String, agent: &str, owner: Principal, context: String) -> Self {
        let task = Task::new(&id, &context, TaskStatus::new(TaskState::Submitted));
        TaskEntry {
            id,
            agent: agent.to_owned(),
            owner,
            context,
            state: Mutex::new(TaskRecord {
                task,
                pending: Vec::new(),
                checkpoint: None,
                cancel: None,
            }),
            changed: watch::channel(TaskState::Submitted).0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, TaskRecord> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task as it stands, its history cut to the last `history` messages.
    pub(super) fn snapshot(&self, history: Option<u32>) -> Task {
        let mut task = self.lock().task.clone();
        if let Some(most) = history.and_then(|most| usize::try_from(most).ok()) {
            let cut = task.history.len().saturating_sub(most);
            task.history.drain(..cut);
        }
        task
    }

    /// The interrupts it waits on and the checkpoint that resumes it, if it is input
    /// required.
    pub(super) fn waiting(&self) -> Option<(Vec<PendingInterrupt>, CheckpointId)> {
        let record = self.lock();
        let waiting = record.task.status.state == TaskState::InputRequired;
        let checkpoint = record.checkpoint.clone().filter(|_| waiting)?;
        Some((record.pending.clone(), checkpoint))
    }

    /// A run starts (or resumes) on the task: working, the caller's message in its
    /// history; gives the token that cancels it.
    pub(super) fn start(&self, message: Message) -> CancellationToken {
        let token = CancellationToken::new();
        let mut record = self.lock();
        record.task.history.push(message);
        record.task.status = TaskStatus::new(TaskState::Working);
        record.pending.clear();
        record.checkpoint = None;
        record.cancel = Some(token.clone());
        drop(record);
        self.changed.send_replace(TaskState::Working);
        token
    }

    /// Text the answer streamed: appended to the answer's artifact; says whether the
    /// artifact had text before.
    pub(super) fn append_answer(&self, text: &str) -> bool {
        let mut record = self.lock();
        let artifacts = &mut record.task.artifacts;
        match artifacts.iter_mut().find(|a| a.artifact_id == ANSWER) {
            Some(artifact) => {
                match artifact.parts.first_mut().map(|p| &mut p.content) {
                    Some(crate::a2a::PartContent::Text(answer)) => answer.push_str(text),
                    _ => artifact.parts.insert(0, Part::text(text)),
                }
                true
            }
            None => {
                let artifact = Artifact::new(ANSWER, vec![Part::text(text)]).with_name("answer");
                artifacts.push(artifact);
                false
            }
        }
    }

    /// Ends the run in this state, with this message from the agent (kept in the
    /// history too); an input-required task keeps what resumes it.
    pub(super) fn end(
        &self,
        state: TaskState,
        message: Option<Message>,
        waiting: Option<(Vec<PendingInterrupt>, CheckpointId)>,
    ) -> TaskStatus {
        let mut status = TaskStatus::new(state);
        let mut record = self.lock();
        if let Some(message) = message {
            record.task.history.push(message.clone());
            status = status.with_message(message);
        }
        record.task.status = status.clone();
        record.cancel = None;
        if let Some((pending, checkpoint)) = waiting {
            record.pending = pending;
            record.checkpoint = Some(checkpoint);
        }
        drop(record);
        self.changed.send_replace(state);
        status
    }

    /// Asks the run in flight to stop; `false` when none is.
    pub(super) fn cancel(&self) -> bool {
        let token = self.lock().cancel.clone();
        token.map(|token| token.cancel()).is_some()
    }

    /// Resolves once the task is no longer submitted or working.
    pub(super) async fn settled(&self) {
        let mut changed = self.changed.subscribe();
        let _ = changed
            .wait_for(|state| !matches!(state, TaskState::Submitted | TaskState::Working))
            .await;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::a2a::Role;

    fn entry(id: &str) -> Arc<TaskEntry> {
        Arc::new(TaskEntry::new(
            id.into(),
            "agent",
            Principal::new("alice"),
            "c".into(),
        ))
    }

    #[test]
    fn history_is_cut_to_the_latest_messages_and_zero_means_none() {
        let task = entry("t1");
        task.start(Message::new("m1", Role::User, vec![Part::text("hi")]));
        let answer = Message::new("m2", Role::Agent, vec![Part::text("hello")]);
        task.end(TaskState::Completed, Some(answer), None);
        assert_eq!(task.snapshot(None).history.len(), 2);
        assert_eq!(task.snapshot(Some(1)).history[0].message_id, "m2");
        assert!(task.snapshot(Some(0)).history.is_empty());
        assert_eq!(task.snapshot(Some(9)).history.len(), 2);
    }

    #[test]
    fn past_the_most_the_oldest_ended_task_is_forgotten_first() {
        let tasks = Tasks::new(2);
        let (running, ended) = (entry("running"), entry("ended"));
        running.start(Message::default());
        ended.end(TaskState::Completed, None, None);
        tasks.insert(running);
        tasks.insert(ended);
        tasks.insert(entry("new"));
        assert!(tasks.get("agent", "running").is_some());
        assert!(tasks.get("agent", "ended").is_none());
        assert!(tasks.get("agent", "new").is_some());
        assert!(
            tasks.get("other agent", "new").is_none(),
            "a task is its agent's"
        );
    }

    #[test]
    fn the_answer_grows_as_text_streams_and_a_cancel_reaches_the_run() {
        let task = entry("t");
        assert!(!task.append_answer("It is "));
        assert!(task.append_answer("sunny."));
        assert_eq!(
            task.snapshot(None).artifacts[0].parts[0].as_text(),
            Some("It is sunny.")
        );
        assert!(!task.cancel(), "nothing runs yet");
        let token = task.start(Message::default());
        assert!(task.cancel() && token.is_cancelled());
    }
}
