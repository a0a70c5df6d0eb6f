//! The parameters of A2A's methods.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::message::Message;

/// The parameters of `SendMessage` and `SendStreamingMessage`.
///
/// ```
/// use tower_adk::a2a::{Message, Part, Role, SendMessageRequest};
///
/// let request = SendMessageRequest::new(Message::new("m1", Role::User, vec![Part::text("hi")]));
/// assert_eq!(serde_json::to_value(&request).unwrap()["message"]["parts"][0]["text"], "hi");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SendMessageRequest {
    /// The tenant, for servers that host several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The message. Its `taskId` continues that task; its `contextId` continues that
    /// conversation.
    pub message: Message,
    /// How the client wants the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Extra data for extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl SendMessageRequest {
    /// A request carrying this message, with no configuration.
    pub fn new(message: Message) -> Self {
        Self {
            message,
            ..Self::default()
        }
    }
}

/// How a client wants the answer to a message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SendMessageConfiguration {
    /// Media types the client accepts in answers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    /// Where to push updates (servers without push notifications refuse it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_push_notification_config: Option<Value>,
    /// How many of the task's latest messages to return in its history (all when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u32>,
    /// Answer at once with the task as it stands rather than at its end.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub return_immediately: bool,
}

/// The parameters of `GetTask`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct GetTaskRequest {
    /// The tenant, for servers that host several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task's id.
    pub id: String,
    /// How many of the task's latest messages to return in its history (all when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u32>,
}

impl GetTaskRequest {
    /// A request for this task, with its whole history.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }
}

/// The parameters of `CancelTask`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct CancelTaskRequest {
    /// The tenant, for servers that host several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task's id.
    pub id: String,
    /// Extra data for extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl CancelTaskRequest {
    /// A request to cancel this task.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }
}

/// The parameters of `SubscribeToTask`: the events of a running task, from now on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SubscribeToTaskRequest {
    /// The tenant, for servers that host several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task's id.
    pub id: String,
}
