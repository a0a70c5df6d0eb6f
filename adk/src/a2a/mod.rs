//! The Agent2Agent protocol (A2A v1.0): the JSON types of its JSON-RPC binding, shared by
//! the A2A server face (`server::a2a`, features `a2a` and `server`) and the A2A client.
//!
//! The types follow A2A v1.0's ProtoJSON form (package `lf.a2a.v1`): camelCase fields,
//! enums as strings (`TASK_STATE_INPUT_REQUIRED`, `ROLE_USER`), a [`Part`] as one of
//! `text`, `data`, `url` or `raw`, a stream event as one of `task`, `message`,
//! `statusUpdate` or `artifactUpdate`. Fields at their default are left out when
//! written; fields this version does not know are ignored when read, so a newer peer's
//! JSON still reads.
//!
//! - The card: [`AgentCard`], [`AgentInterface`], [`AgentSkill`], [`AgentCapabilities`],
//!   [`SecurityScheme`], served at [`AGENT_CARD_PATH`].
//! - Content: [`Message`], [`Part`], [`Role`].
//! - Tasks: [`Task`], [`TaskStatus`], [`TaskState`], [`Artifact`], and the stream events
//!   [`StreamResponse`], [`TaskStatusUpdateEvent`], [`TaskArtifactUpdateEvent`].
//! - Methods' parameters and results: [`SendMessageRequest`], [`SendMessageResponse`],
//!   [`GetTaskRequest`], [`CancelTaskRequest`], [`SubscribeToTaskRequest`].
//! - The envelope: [`JsonRpcRequest`], [`JsonRpcResponse`], [`JsonRpcError`] with
//!   [`A2aErrorCode`], and the [`method`] names.
//!
//! # Example
//!
//! ```
//! use tower_adk::a2a::{
//!     method, JsonRpcRequest, JsonRpcResponse, Message, Part, Role, SendMessageRequest,
//!     SendMessageResponse, TaskState,
//! };
//!
//! // What a client sends...
//! let message = Message::new("m1", Role::User, vec![Part::text("Where is order 42?")]);
//! let request = JsonRpcRequest::new(1, method::SEND_MESSAGE, SendMessageRequest::new(message));
//! let body = serde_json::to_string(&request)?;
//! assert!(body.contains(r#""method":"SendMessage""#));
//!
//! // ...and reads back.
//! let answer = r#"{"jsonrpc": "2.0", "id": 1, "result": {"task": {
//!     "id": "run-1", "contextId": "thread-1",
//!     "status": {"state": "TASK_STATE_COMPLETED"},
//!     "artifacts": [{"artifactId": "answer", "parts": [{"text": "It ships today."}]}],
//!     "someFieldOfALaterVersion": true}}}"#;
//! let response: JsonRpcResponse<SendMessageResponse> = serde_json::from_str(answer)?;
//! let SendMessageResponse::Task(task) = response.into_result()? else { panic!("a task") };
//! assert_eq!(task.status.state, TaskState::Completed);
//! assert_eq!(task.artifacts[0].parts[0].as_text(), Some("It ships today."));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```

mod card;
#[cfg(feature = "a2a-client")]
pub mod client;
mod jsonrpc;
mod message;
mod request;
mod task;

pub use self::card::{
    AGENT_CARD_PATH, AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill,
    ApiKeySecurityScheme, HttpAuthSecurityScheme, JSONRPC_BINDING, MutualTlsSecurityScheme,
    OpenIdConnectSecurityScheme, PROTOCOL_VERSION, SecurityRequirement, SecurityScheme, StringList,
};
pub use self::jsonrpc::{
    A2aErrorCode, JsonRpcError, JsonRpcOutcome, JsonRpcRequest, JsonRpcResponse, JsonRpcVersion,
    RequestId, method,
};
pub use self::message::{Message, Part, PartContent, Role};
pub use self::request::{
    CancelTaskRequest, GetTaskRequest, SendMessageConfiguration, SendMessageRequest,
    SubscribeToTaskRequest,
};
pub use self::task::{
    Artifact, SendMessageResponse, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
