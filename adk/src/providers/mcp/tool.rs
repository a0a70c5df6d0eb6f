//! An MCP server's tool as a [`Tool`]: an invoke service and, for progress, a stream
//! service, both calling `tools/call` on the server's shared connection.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, ErrorCode, Request,
    RequestId, ServerResult, Tool as McpTool,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestHandle, RoleClient, ServiceError};
use serde_json::Value;
use tower::{BoxError, Service};

use super::connection::{Connection, Session, is_lost};
use super::content::into_output;
use super::error::McpError;
use super::progress::CallProgress;
use crate::tool::Tool;
use crate::tool::ToolError;
use crate::tool::ToolErrorKind;
use crate::tool::ToolInfo;
use crate::tool::ToolOutput;
use crate::tool::ToolRequest;
use crate::tool::{ToolReport, ToolStream};

/// How long a dropped call may take to tell the server to stop.
const CANCEL_NOTICE_TIMEOUT: Duration = Duration::from_secs(5);

/// The tool `listed` of the server behind `connection`, invokable, and streamable if
/// `stream_progress`.
pub(crate) fn mcp_tool(
    connection: &Arc<Connection>,
    listed: McpTool,
    stream_progress: bool,
) -> Tool {
    let description = listed
        .description
        .as_deref()
        .or(listed.title.as_deref())
        .unwrap_or_default();
    let info = ToolInfo::new(listed.name.as_ref(), description)
        .parameters(Value::Object(listed.input_schema.as_ref().clone()));
    let call = McpCall {
        connection: Arc::clone(connection),
        tool: Arc::from(listed.name.as_ref()),
    };
    let tool = Tool::new(info, call.clone());
    if stream_progress {
        tool.with_stream(McpStream(call))
    } else {
        tool
    }
}

/// Calls one tool of a server and returns its result whole.
///
/// Always ready: it connects (again, if needed) when called.
#[derive(Clone)]
struct McpCall {
    connection: Arc<Connection>,
    tool: Arc<str>,
}

/// Calls one tool of a server and streams its progress notifications, then its result.
#[derive(Clone)]
struct McpStream(McpCall);

impl Service<ToolRequest> for McpCall {
    type Response = ToolOutput;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ToolOutput, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: ToolRequest) -> Self::Future {
        let call = self.clone();
        Box::pin(async move {
            let (session, handle) = call.send(request.arguments).await?;
            let cancel = CancelOnDrop::new(&session.peer, handle.id.clone());
            let answer = handle.await_response().await;
            cancel.disarm();
            call.answer(&session, answer)
        })
    }
}

impl Service<ToolRequest> for McpStream {
    type Response = ToolStream;
    type Error = BoxError;
    type Future = std::future::Ready<Result<ToolStream, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: ToolRequest) -> Self::Future {
        let call = self.0.clone();
        let report = ToolReport::new();
        let reported = report.clone();
        // Lazy: nothing is sent until the stream is polled.
        let chunks = async_stream::try_stream! {
            let (session, handle) = call.send(request.arguments).await?;
            let mut progress = CallProgress::new(call.connection.progress().listen(&handle.progress_token));
            let cancel = CancelOnDrop::new(&session.peer, handle.id.clone());
            let response = handle.await_response();
            tokio::pin!(response);
            let answer = loop {
                let event = tokio::select! {
                    biased;
                    Some(chunk) = progress.next() => Err(chunk),
                    answer = &mut response => Ok(answer),
                };
                match event {
                    Ok(answer) => break answer,
                    Err(chunk) => yield chunk,
                }
            };
            cancel.disarm();
            while let Some(chunk) = progress.late().await {
                yield chunk;
            }
            let output = call.answer(&session, answer)?;
            // The images and files the tool returned reach the model after the text.
            for part in output.parts {
                reported.part(part);
            }
            if !output.content.is_empty() {
                yield output.content;
            }
        };
        let stream = ToolStream::new::<_, String, BoxError>(chunks).reporting(report);
        std::future::ready(Ok(stream))
    }
}

impl McpCall {
    /// Sends `tools/call`, connecting first if the connection was lost.
    async fn send(
        &self,
        arguments: Value,
    ) -> Result<(Session, RequestHandle<RoleClient>), BoxError> {
        let arguments = match arguments {
            Value::Object(arguments) => Some(arguments),
            Value::Null => None,
            other => {
                return Err(ToolError::invalid_arguments(format!(
                    "MCP tools take a JSON object of arguments, not `{other}`"
                ))
                .into());
            }
        };
        let session = self.connection.session().await?;
        let mut params = CallToolRequestParams::new(self.tool.to_string());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(Request::new(params));
        let options = PeerRequestOptions::with_timeout(self.connection.config().call_timeout);
        match session
            .peer
            .send_request_with_option(request, options)
            .await
        {
            Ok(handle) => Ok((session, handle)),
            Err(error) => Err(self.failure(&session, error)),
        }
    }

    /// The tool's output, or the error the model sees.
    fn answer(
        &self,
        session: &Session,
        answer: Result<ServerResult, ServiceError>,
    ) -> Result<ToolOutput, BoxError> {
        let unsupported = |what| {
            Err(McpError::Unsupported {
                server: self.connection.server().to_owned(),
                tool: self.tool.to_string(),
                what,
            }
            .into())
        };
        match answer {
            Ok(ServerResult::CallToolResult(result)) => into_output(result).map_err(Into::into),
            Ok(ServerResult::InputRequiredResult(_)) => unsupported("a request for more input"),
            Ok(ServerResult::CreateTaskResult(_)) => unsupported("a task"),
            Ok(_) => unsupported("a result that is not a tool result"),
            Err(error) => Err(self.failure(session, error)),
        }
    }

    /// The error the model sees for a failed call; a lost connection is forgotten so that
    /// the next call connects again.
    fn failure(&self, session: &Session, error: ServiceError) -> BoxError {
        let server = self.connection.server().to_owned();
        match error {
            ServiceError::Timeout { timeout } => ToolError::new(
                ToolErrorKind::Timeout,
                format!(
                    "MCP server `{server}` did not answer `{}` within {timeout:?}",
                    self.tool
                ),
            )
            .into(),
            ServiceError::McpError(error) if error.code == ErrorCode::INVALID_PARAMS => {
                ToolError::invalid_arguments(error.message.into_owned()).into()
            }
            ServiceError::McpError(error) => McpError::Protocol {
                server,
                code: error.code.0,
                message: error.message.into_owned(),
            }
            .into(),
            error if is_lost(&error) => {
                self.connection.lost(session);
                McpError::Disconnected { server }.into()
            }
            error => McpError::Call {
                server,
                tool: self.tool.to_string(),
                source: error.into(),
            }
            .into(),
        }
    }
}

/// Tells the server to stop a call that is dropped before its answer (the run was
/// dropped or timed out), so the server does not keep working for nobody.
struct CancelOnDrop {
    armed: Option<(Peer<RoleClient>, RequestId)>,
}

impl CancelOnDrop {
    fn new(peer: &Peer<RoleClient>, id: RequestId) -> Self {
        CancelOnDrop {
            armed: Some((peer.clone(), id)),
        }
    }

    fn disarm(mut self) {
        self.armed = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((peer, id)) = self.armed.take() else {
            return;
        };
        // The notice is a message queued on the connection; it is sent by a short task,
        // bounded in time, because a destructor cannot wait.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let notice = CancelledNotificationParam::new(
                    Some(id),
                    Some("the caller dropped the call".to_owned()),
                );
                let _ = tokio::time::timeout(CANCEL_NOTICE_TIMEOUT, peer.notify_cancelled(notice))
                    .await;
            });
        }
    }
}
