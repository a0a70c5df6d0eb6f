//! The JSON-RPC 2.0 envelope of A2A's JSON-RPC binding: requests, responses, errors and
//! A2A's error codes and method names.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The names of A2A v1.0's JSON-RPC methods.
pub mod method {
    /// Send a message; the answer is the task at its end (or a message).
    pub const SEND_MESSAGE: &str = "SendMessage";
    /// Send a message; the answer is a stream of events (SSE).
    pub const SEND_STREAMING_MESSAGE: &str = "SendStreamingMessage";
    /// Read a task.
    pub const GET_TASK: &str = "GetTask";
    /// List tasks.
    pub const LIST_TASKS: &str = "ListTasks";
    /// Cancel a task.
    pub const CANCEL_TASK: &str = "CancelTask";
    /// The events of a running task, from now on (SSE).
    pub const SUBSCRIBE_TO_TASK: &str = "SubscribeToTask";
    /// The card for an authenticated caller.
    pub const GET_EXTENDED_AGENT_CARD: &str = "GetExtendedAgentCard";
}

/// JSON-RPC's version marker: always `"2.0"`; anything else does not deserialize.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let version = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        if version == "2.0" {
            Ok(Self)
        } else {
            Err(de::Error::invalid_value(
                de::Unexpected::Str(&version),
                &"\"2.0\"",
            ))
        }
    }
}

/// A request's id: a string or a number (echoed in its response).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum RequestId {
    /// A number.
    Number(serde_json::Number),
    /// A string.
    String(String),
}

impl From<i64> for RequestId {
    fn from(id: i64) -> Self {
        Self::Number(id.into())
    }
}

impl From<String> for RequestId {
    fn from(id: String) -> Self {
        Self::String(id)
    }
}

impl From<&str> for RequestId {
    fn from(id: &str) -> Self {
        Self::String(id.into())
    }
}

/// A JSON-RPC request: a method and its parameters (`P`, raw JSON by default).
///
/// ```
/// use tower_adk::a2a::{method, GetTaskRequest, JsonRpcRequest};
///
/// let request = JsonRpcRequest::new(1, method::GET_TASK, GetTaskRequest::new("t1"));
/// let json = serde_json::to_value(&request).unwrap();
/// assert_eq!(json, serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t1"}}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JsonRpcRequest<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id its response echoes; absent for a notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The method's name (see [`method`]).
    pub method: String,
    /// Its parameters.
    pub params: P,
}

impl<P> JsonRpcRequest<P> {
    /// A request of this method with these parameters.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: P) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id: Some(id.into()),
            method: method.into(),
            params,
        }
    }
}

/// A JSON-RPC response: the request's id and either a result (`R`) or an error.
///
/// ```
/// use tower_adk::a2a::{A2aErrorCode, JsonRpcError, JsonRpcResponse};
///
/// let response: JsonRpcResponse = serde_json::from_str(
///     r#"{"jsonrpc": "2.0", "id": 7, "error": {"code": -32001, "message": "Task not found"}}"#,
/// ).unwrap();
/// let error = response.into_result().unwrap_err();
/// assert_eq!(error.kind(), Some(A2aErrorCode::TaskNotFound));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JsonRpcResponse<R = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The request's id; `null` when it could not be read.
    pub id: Option<RequestId>,
    /// The result or the error.
    #[serde(flatten)]
    pub outcome: JsonRpcOutcome<R>,
}

/// What a [`JsonRpcResponse`] carries: `{"result": ...}` or `{"error": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum JsonRpcOutcome<R> {
    /// The method's result.
    Result(R),
    /// Why it failed.
    Error(JsonRpcError),
}

impl<R> JsonRpcResponse<R> {
    /// A successful response.
    pub fn result(id: Option<RequestId>, result: R) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            outcome: JsonRpcOutcome::Result(result),
        }
    }

    /// A failed response.
    pub fn error(id: Option<RequestId>, error: JsonRpcError) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            outcome: JsonRpcOutcome::Error(error),
        }
    }

    /// The result, or the error.
    pub fn into_result(self) -> Result<R, JsonRpcError> {
        match self.outcome {
            JsonRpcOutcome::Result(result) => Ok(result),
            JsonRpcOutcome::Error(error) => Err(error),
        }
    }
}

/// A JSON-RPC error: a code (see [`A2aErrorCode`]), a message and optional data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} (JSON-RPC error {code})")]
#[non_exhaustive]
pub struct JsonRpcError {
    /// The code.
    pub code: i64,
    /// For people.
    #[serde(default)]
    pub message: String,
    /// More about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl JsonRpcError {
    /// An error of this kind with this message.
    pub fn new(kind: A2aErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: kind.code(),
            message: message.into(),
            data: None,
        }
    }

    /// The same error with data.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The same error with A2A v1.0's details as `data`: one `google.rpc.ErrorInfo`
    /// (`{"@type", "reason", "domain": "a2a-protocol.org", "metadata"}`) with the
    /// reason of its kind and `metadata` (string values), as a2a-sdk writes and reads
    /// them.
    ///
    /// ```
    /// use tower_adk::a2a::{A2aErrorCode, JsonRpcError};
    ///
    /// let error = JsonRpcError::new(A2aErrorCode::TaskNotFound, "no task `t1`")
    ///     .with_error_info([("code", "unknown_run")]);
    /// assert_eq!(error.data.as_ref().unwrap()[0]["reason"], "TASK_NOT_FOUND");
    /// assert_eq!(error.error_info().unwrap()["code"], "unknown_run");
    /// ```
    pub fn with_error_info<K, V>(self, metadata: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        let reason = self.kind().unwrap_or(A2aErrorCode::InternalError).reason();
        let metadata: serde_json::Map<String, Value> = metadata
            .into_iter()
            .map(|(key, value)| (key.into(), Value::String(value.into())))
            .collect();
        let info = serde_json::json!({
            "@type": ERROR_INFO_TYPE,
            "reason": reason,
            "domain": A2A_DOMAIN,
            "metadata": metadata,
        });
        self.with_data(Value::Array(vec![info]))
    }

    /// The `metadata` of its `google.rpc.ErrorInfo` detail, if its `data` has one.
    pub fn error_info(&self) -> Option<&serde_json::Map<String, Value>> {
        let details = self.data.as_ref()?.as_array()?;
        let is_info = |d: &&Value| d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE);
        details.iter().find(is_info)?.get("metadata")?.as_object()
    }

    /// Its kind, when its code is one JSON-RPC or A2A defines.
    pub fn kind(&self) -> Option<A2aErrorCode> {
        A2aErrorCode::from_code(self.code)
    }
}

impl From<A2aErrorCode> for JsonRpcError {
    fn from(kind: A2aErrorCode) -> Self {
        Self::new(kind, kind.to_string())
    }
}

/// The error codes of JSON-RPC 2.0 and A2A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum A2aErrorCode {
    /// -32700: the body is not JSON.
    ParseError,
    /// -32600: JSON, but not a JSON-RPC request.
    InvalidRequest,
    /// -32601: no such method.
    MethodNotFound,
    /// -32602: the parameters do not fit the method.
    InvalidParams,
    /// -32603: the server failed.
    InternalError,
    /// -32001: no such task (or not the caller's).
    TaskNotFound,
    /// -32002: the task is over, or cannot be canceled.
    TaskNotCancelable,
    /// -32003: push notifications are not supported.
    PushNotificationNotSupported,
    /// -32004: the server does not do this.
    UnsupportedOperation,
    /// -32005: the content's media type is not supported.
    ContentTypeNotSupported,
    /// -32006: the agent answered something A2A cannot carry.
    InvalidAgentResponse,
    /// -32007: there is no extended card.
    ExtendedAgentCardNotConfigured,
    /// -32008: the client must support an extension.
    ExtensionSupportRequired,
    /// -32009: the requested A2A version is not supported.
    VersionNotSupported,
}

/// Each kind's code, default message and `google.rpc.ErrorInfo` reason (as a2a-sdk
/// names them).
#[rustfmt::skip]
const CODES: [(A2aErrorCode, i64, &str, &str); 14] = [
    (A2aErrorCode::ParseError, -32700, "Parse error", "INVALID_REQUEST"),
    (A2aErrorCode::InvalidRequest, -32600, "Invalid Request", "INVALID_REQUEST"),
    (A2aErrorCode::MethodNotFound, -32601, "Method not found", "METHOD_NOT_FOUND"),
    (A2aErrorCode::InvalidParams, -32602, "Invalid params", "INVALID_PARAMS"),
    (A2aErrorCode::InternalError, -32603, "Internal error", "INTERNAL_ERROR"),
    (A2aErrorCode::TaskNotFound, -32001, "Task not found", "TASK_NOT_FOUND"),
    (A2aErrorCode::TaskNotCancelable, -32002, "Task cannot be canceled", "TASK_NOT_CANCELABLE"),
    (A2aErrorCode::PushNotificationNotSupported, -32003, "Push Notification is not supported", "PUSH_NOTIFICATION_NOT_SUPPORTED"),
    (A2aErrorCode::UnsupportedOperation, -32004, "This operation is not supported", "UNSUPPORTED_OPERATION"),
    (A2aErrorCode::ContentTypeNotSupported, -32005, "Incompatible content types", "CONTENT_TYPE_NOT_SUPPORTED"),
    (A2aErrorCode::InvalidAgentResponse, -32006, "Invalid agent response", "INVALID_AGENT_RESPONSE"),
    (A2aErrorCode::ExtendedAgentCardNotConfigured, -32007, "Authenticated Extended Card is not configured", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
    (A2aErrorCode::ExtensionSupportRequired, -32008, "Extension support required", "EXTENSION_SUPPORT_REQUIRED"),
    (A2aErrorCode::VersionNotSupported, -32009, "Version not supported", "VERSION_NOT_SUPPORTED"),
];

/// The `@type` of a `google.rpc.ErrorInfo` detail.
const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// The domain of A2A's `ErrorInfo` details.
const A2A_DOMAIN: &str = "a2a-protocol.org";

impl A2aErrorCode {
    fn entry(self) -> Option<&'static (A2aErrorCode, i64, &'static str, &'static str)> {
        CODES.iter().find(|(kind, ..)| *kind == self)
    }

    /// Its number.
    pub fn code(self) -> i64 {
        self.entry().map_or(-32603, |(_, code, ..)| *code)
    }

    /// The kind of a number, if JSON-RPC or A2A defines it.
    pub fn from_code(code: i64) -> Option<Self> {
        CODES
            .iter()
            .find(|(_, known, ..)| *known == code)
            .map(|(kind, ..)| *kind)
    }

    /// The reason A2A v1.0 gives it in a `google.rpc.ErrorInfo` (`TASK_NOT_FOUND`).
    pub fn reason(self) -> &'static str {
        self.entry().map_or("INTERNAL_ERROR", |(.., reason)| reason)
    }
}

impl fmt::Display for A2aErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = self
            .entry()
            .map_or("Internal error", |(_, _, message, _)| message);
        f.write_str(message)
    }
}
