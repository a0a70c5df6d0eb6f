//! A2A tasks: a unit of work with a state, the messages that led to it and the artifacts
//! it produced, and the events that report its progress on a stream.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::message::{Message, Part};

/// Where a task stands (`TASK_STATE_WORKING`, `TASK_STATE_INPUT_REQUIRED`, ...).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TaskState {
    /// Received, not started.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Running.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Finished successfully.
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Finished with an error.
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Canceled by a client.
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// Waiting for the client's next message on this task.
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Refused by the agent.
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Waiting for the client to authenticate.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
    /// Not set (proto3's zero value; an unknown state reads as this too).
    #[default]
    #[serde(rename = "TASK_STATE_UNSPECIFIED", other)]
    Unspecified,
}

impl TaskState {
    /// Whether a task in this state is over (completed, failed, canceled or rejected): it
    /// takes no more messages and cannot be canceled.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// Whether a task in this state waits for the client (input or auth required): a
    /// stream ends there, and the next message on the task continues it.
    pub fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }
}

/// A task's state, with an optional message saying why, and when.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// A message from the agent about it (the question of an input-required task).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When the task reached it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status in this state, without a message, stamped now.
    pub fn new(state: TaskState) -> Self {
        Self {
            state,
            message: None,
            timestamp: Some(Timestamp::now()),
        }
    }

    /// The same status with a message.
    pub fn with_message(mut self, message: Message) -> Self {
        self.message = Some(message);
        self
    }
}

/// A unit of work of an agent: its id, its conversation, its status, its artifacts and
/// history.
///
/// ```
/// use tower_adk::a2a::{Task, TaskState, TaskStatus};
///
/// let task = Task::new("t1", "c1", TaskStatus::new(TaskState::Working));
/// let json = serde_json::to_value(&task).unwrap();
/// assert_eq!(json["status"]["state"], "TASK_STATE_WORKING");
/// assert_eq!(json["contextId"], "c1");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Task {
    /// The task's id, chosen by the server.
    pub id: String,
    /// The conversation it belongs to.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub context_id: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// What it produced.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The messages exchanged on it, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Extra data for extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl Task {
    /// A task with an id, a context and a status; no artifacts, no history.
    pub fn new(id: impl Into<String>, context_id: impl Into<String>, status: TaskStatus) -> Self {
        Self {
            id: id.into(),
            context_id: context_id.into(),
            status,
            ..Self::default()
        }
    }
}

/// Something a task produced: a document, an answer, data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Artifact {
    /// Its id, unique within its task.
    pub artifact_id: String,
    /// A name for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it is, for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its content.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// Extra data for extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// URIs of the extensions it uses.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

impl Artifact {
    /// An artifact with an id and parts.
    pub fn new(artifact_id: impl Into<String>, parts: Vec<Part>) -> Self {
        Self {
            artifact_id: artifact_id.into(),
            parts,
            ..Self::default()
        }
    }

    /// The same artifact with a name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// A stream event: a task's status changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// Its new status.
    pub status: TaskStatus,
    /// Extra data for extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl TaskStatusUpdateEvent {
    /// A status update of a task.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        status: TaskStatus,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            status,
            metadata: None,
        }
    }
}

/// A stream event: an artifact of a task, whole or a chunk of it.
///
/// With `append`, its parts continue the artifact of the same id sent before; `lastChunk`
/// says the artifact is complete.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The artifact, or this chunk of it.
    pub artifact: Artifact,
    /// Whether these parts continue the artifact sent before with the same id.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub append: bool,
    /// Whether this is the artifact's last chunk.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub last_chunk: bool,
    /// Extra data for extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl TaskArtifactUpdateEvent {
    /// An artifact update of a task.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            artifact,
            append,
            last_chunk,
            metadata: None,
        }
    }
}

/// One event of `SendStreamingMessage` or `SubscribeToTask`: `{"task": ...}`,
/// `{"message": ...}`, `{"statusUpdate": ...}` or `{"artifactUpdate": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StreamResponse {
    /// The task as it stands (first on a stream).
    Task(Task),
    /// A message outside any task.
    Message(Message),
    /// The task's status changed.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact, or a chunk of one.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// The result of `SendMessage`: the task the message started or continued, or a message
/// when the agent answered outside a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SendMessageResponse {
    /// The task.
    Task(Task),
    /// A direct answer.
    Message(Message),
}
