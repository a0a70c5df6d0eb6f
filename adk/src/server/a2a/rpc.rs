//! The JSON-RPC endpoint: reads the envelope (hostile input gets A2A's codes, never a
//! panic), checks the `A2A-Version`, and dispatches the method.

use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Face;
use super::error::A2aError;
use super::task;
use crate::a2a::{
    A2aErrorCode, CancelTaskRequest, GetTaskRequest, JsonRpcError, JsonRpcRequest, JsonRpcResponse,
    RequestId, SendMessageRequest, SendMessageResponse, Task, method,
};
use crate::auth::Identity;
use crate::server::ServedAgent;
use crate::server::state::AppState;

/// How long `CancelTask` waits for a canceled run to write its checkpoint and end.
const CANCEL_WAIT: Duration = Duration::from_secs(30);

/// One JSON-RPC request to the agent `name`, from `caller`.
pub(super) struct Call<'a> {
    pub(super) state: &'a AppState,
    pub(super) face: &'a Face,
    pub(super) name: &'a str,
    pub(super) served: &'a ServedAgent,
    pub(super) caller: &'a Identity,
}

/// Answers a body sent to the endpoint.
pub(super) async fn answer(call: Call<'_>, headers: &HeaderMap, body: &[u8]) -> Response {
    let request = match read(body) {
        Ok(request) => request,
        Err((id, error)) => return rpc(id, Err::<(), _>(A2aError::Rpc(error))),
    };
    let id = request.id;
    if let Err(error) = check_version(headers) {
        return rpc(id, Err::<(), _>(error));
    }
    let params = request.params;
    match request.method.as_str() {
        method::SEND_MESSAGE => rpc(id, send(&call, params).await),
        method::SEND_STREAMING_MESSAGE => match stream(&call, params, id.clone()).await {
            Ok(response) => response,
            Err(error) => rpc(id, Err::<(), _>(error)),
        },
        method::GET_TASK => rpc(id, get(&call, params).await),
        method::CANCEL_TASK => rpc(id, cancel(&call, params).await),
        other => rpc(id, Err::<(), _>(unserved(other))),
    }
}

/// The envelope: not JSON is `ParseError` (id `null`); JSON but not a JSON-RPC 2.0
/// request (no `"jsonrpc": "2.0"`, no method, an id that is neither a string nor a
/// number) is `InvalidRequest`, with the id when it could be read.
fn read(body: &[u8]) -> Result<JsonRpcRequest, (Option<RequestId>, JsonRpcError)> {
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        let message = format!("the body is not JSON: {error}");
        (None, JsonRpcError::new(A2aErrorCode::ParseError, message))
    })?;
    let Value::Object(mut object) = value else {
        let message = "the body is not a JSON-RPC request object (batches are not served)";
        return Err((
            None,
            JsonRpcError::new(A2aErrorCode::InvalidRequest, message),
        ));
    };
    let id = object
        .get("id")
        .cloned()
        .and_then(|id| serde_json::from_value(id).ok());
    object.entry("params").or_insert(Value::Null);
    serde_json::from_value(Value::Object(object)).map_err(|error| {
        let message = format!("not a JSON-RPC 2.0 request: {error}");
        (id, JsonRpcError::new(A2aErrorCode::InvalidRequest, message))
    })
}

/// A request that names an A2A version other than 1.x in `A2A-Version` is refused
/// (none named: read as 1.0).
fn check_version(headers: &HeaderMap) -> Result<(), A2aError> {
    let Some(value) = headers.get("a2a-version") else {
        return Ok(());
    };
    let version = value.to_str().unwrap_or("").trim();
    if version.is_empty() || version == "1" || version.starts_with("1.") {
        return Ok(());
    }
    let message = format!("A2A version `{version}` is not served: this server speaks 1.0");
    Err(A2aError::new(A2aErrorCode::VersionNotSupported, message))
}

/// What a method this server does not serve gets.
fn unserved(name: &str) -> A2aError {
    let (kind, message) = match name {
        method::SUBSCRIBE_TO_TASK | method::LIST_TASKS => (
            A2aErrorCode::UnsupportedOperation,
            format!("`{name}` is not served"),
        ),
        method::GET_EXTENDED_AGENT_CARD => (
            A2aErrorCode::ExtendedAgentCardNotConfigured,
            "there is no extended agent card".to_owned(),
        ),
        push if push.contains("PushNotificationConfig") => (
            A2aErrorCode::PushNotificationNotSupported,
            "push notifications are not supported".to_owned(),
        ),
        v0_3 if v0_3.contains('/') => (
            A2aErrorCode::MethodNotFound,
            format!(
                "`{v0_3}` is A2A v0.3's: this server speaks A2A v1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`)"
            ),
        ),
        _ => (A2aErrorCode::MethodNotFound, format!("no method `{name}`")),
    };
    A2aError::new(kind, message)
}

fn params<T: DeserializeOwned>(params: Value) -> Result<T, A2aError> {
    if !params.is_object() {
        return Err(A2aError::invalid_params("`params` is not an object"));
    }
    serde_json::from_value(params).map_err(|error| A2aError::invalid_params(error.to_string()))
}

/// `SendMessage`: the task at its end, or where it waits for input.
async fn send(call: &Call<'_>, params: Value) -> Result<SendMessageResponse, A2aError> {
    let request: SendMessageRequest = self::params(params)?;
    let history = request
        .configuration
        .as_ref()
        .and_then(|c| c.history_length);
    let started = start(call, request).await?;
    let entry = std::sync::Arc::clone(started.entry());
    let progress = task::progress(started);
    futures::pin_mut!(progress);
    while progress.next().await.is_some() {}
    Ok(SendMessageResponse::Task(entry.snapshot(history)))
}

async fn start(call: &Call<'_>, request: SendMessageRequest) -> Result<task::Started, A2aError> {
    let Call {
        state,
        face,
        name,
        served,
        caller,
    } = *call;
    task::start(face, state, name, served, caller, request.message).await
}

/// `SendStreamingMessage`: the run's progress as server-sent events, each `data:` a
/// JSON-RPC response whose result is a `StreamResponse`. A request refused before its
/// run starts gets one JSON-RPC error instead.
async fn stream(
    call: &Call<'_>,
    params: Value,
    id: Option<RequestId>,
) -> Result<Response, A2aError> {
    let request: SendMessageRequest = self::params(params)?;
    let started = start(call, request).await?;
    let events = task::progress(started).map(move |event| {
        let response = JsonRpcResponse::result(id.clone(), event);
        let data = serde_json::to_string(&response).unwrap_or_default();
        Ok::<_, Infallible>(Event::default().data(data))
    });
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// `GetTask`: the task, its history cut to `historyLength`.
async fn get(call: &Call<'_>, params: Value) -> Result<Task, A2aError> {
    let request: GetTaskRequest = self::params(params)?;
    let entry = call.face.tasks.get(call.name, &request.id);
    let entry = entry.ok_or_else(|| A2aError::task_not_found(&request.id))?;
    if !task::visible(call.served, call.caller, &entry).await {
        return Err(A2aError::task_not_found(&request.id));
    }
    Ok(entry.snapshot(request.history_length))
}

/// `CancelTask`: a working task's run is canceled (a run that held its thread leaves a
/// checkpoint) and the task ends `CANCELED`; an input-required one ends `CANCELED` at
/// once; one that is over is `TaskNotCancelable`.
async fn cancel(call: &Call<'_>, params: Value) -> Result<Task, A2aError> {
    let request: CancelTaskRequest = self::params(params)?;
    let entry = call.face.tasks.get(call.name, &request.id);
    let entry = entry.ok_or_else(|| A2aError::task_not_found(&request.id))?;
    if entry.owner != *call.caller.principal() {
        return Err(A2aError::task_not_found(&request.id));
    }
    if entry.cancel() {
        let _ = tokio::time::timeout(CANCEL_WAIT, entry.settled()).await;
    } else if entry.waiting().is_some() {
        entry.end(crate::a2a::TaskState::Canceled, None, None);
    } else {
        let message = format!("task `{}` is over", request.id);
        return Err(A2aError::new(A2aErrorCode::TaskNotCancelable, message));
    }
    Ok(entry.snapshot(None))
}

/// A JSON-RPC response (status 200), or the server's own error for what every route
/// answers with a status.
fn rpc<T: Serialize>(id: Option<RequestId>, outcome: Result<T, A2aError>) -> Response {
    match outcome {
        Ok(result) => Json(JsonRpcResponse::result(id, result)).into_response(),
        Err(A2aError::Rpc(error)) => Json(JsonRpcResponse::<()>::error(id, error)).into_response(),
        Err(A2aError::Http(error)) => error.into_response(),
    }
}
