//! The ends of the three wrapper chains, which call the model or the tool (and turn a
//! tool's panic into a tool failure); and [`ToolCallNext`], the rest of a chain for a
//! `wrap_tool` wrapper, whether the call is invoked or streamed.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::{self, BoxFuture, Either};
use futures::{FutureExt, StreamExt, TryFutureExt};
use tower::{BoxError, ServiceExt};

use super::boxed::{BoxHandler, InvokeSeam, ModelNext, ModelSeam, StreamNext, StreamSeam};
use super::boxed::{ToolNext, sealed};
use crate::error::Panicked;
use crate::hook::Hook;
use crate::interrupt::Interrupt;
use crate::model::{CallModel, ModelError, ModelRequest, ModelResponse};
use crate::tool::{
    Tool, ToolError, ToolErrorKind, ToolOutput, ToolRequest, ToolResponse, ToolStream,
};

/// The rest of a tool call's wrapper chain, for a
/// [`Handler::wrap_tool`](super::Handler::wrap_tool) wrapper: the same whether the call is
/// invoked or streamed.
#[derive(Clone, Debug)]
pub struct ToolCallNext(CallShape);

#[derive(Clone, Debug)]
enum CallShape {
    Invoke(ToolNext),
    Stream(StreamNext),
}

impl ToolCallNext {
    pub(crate) fn invoke(next: ToolNext) -> Self {
        ToolCallNext(CallShape::Invoke(next))
    }

    pub(crate) fn stream(next: StreamNext) -> Self {
        ToolCallNext(CallShape::Stream(next))
    }

    /// Whether the call is streamed: its response will be a
    /// [`ToolResponse::Stream`](crate::ToolResponse::Stream), unless a wrapper inside
    /// changes it.
    pub fn is_streamed(&self) -> bool {
        matches!(self.0, CallShape::Stream(_))
    }

    /// Calls the inner wrappers and, at the end, the tool.
    pub async fn run(self, request: ToolRequest) -> Result<ToolResponse, BoxError> {
        match self.0 {
            CallShape::Invoke(next) => next.run(request).await.map(ToolResponse::Output),
            CallShape::Stream(next) => next.run(request).await.map(ToolResponse::Stream),
        }
    }

    /// Passes the call through, as the default `wrap_tool` of the handler type `H` does.
    pub(crate) async fn pass_by<H: ?Sized + 'static>(
        self,
        request: ToolRequest,
    ) -> Result<ToolResponse, BoxError> {
        match self.0 {
            CallShape::Invoke(next) => next.pass_by::<H>(request).await.map(ToolResponse::Output),
            CallShape::Stream(next) => next.pass_by::<H>(request).await.map(ToolResponse::Stream),
        }
    }
}

impl sealed::Seam for ModelSeam {
    type Request = ModelRequest;
    type Response = ModelResponse;
    /// The run, which calls the agent's model and counts the calls.
    type Terminal = Arc<dyn CallModel>;
    const HOOK: Hook = Hook::WrapModel;

    fn wrap(
        handler: &BoxHandler,
        request: ModelRequest,
        next: ModelNext,
    ) -> BoxFuture<'_, Result<ModelResponse, BoxError>> {
        handler.handler().wrap_model(request, next)
    }

    fn call(
        run: Arc<dyn CallModel>,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, BoxError>> + Send {
        run.call_model(request)
            .map_err(|e| match e.downcast::<ModelError>() {
                Ok(e) => e as BoxError,
                Err(e) => Box::new(ModelError::new(e)),
            })
    }

    fn passes_through(error: &BoxError) -> bool {
        error.is::<ModelError>()
    }
}

impl sealed::Seam for InvokeSeam {
    type Request = ToolRequest;
    type Response = ToolOutput;
    type Terminal = Tool;
    const HOOK: Hook = Hook::WrapToolInvoke;

    fn wrap(
        handler: &BoxHandler,
        request: ToolRequest,
        next: ToolNext,
    ) -> BoxFuture<'_, Result<ToolOutput, BoxError>> {
        handler.handler().wrap_tool_invoke(request, next)
    }

    fn call(
        tool: Tool,
        request: ToolRequest,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        let Some(service) = tool.invoke_service() else {
            return Either::Left(future::ready(Err(not_supported(&tool, "invoked").into())));
        };
        let call = AssertUnwindSafe(service.clone().oneshot(request)).catch_unwind();
        Either::Right(call.map(|caught| match caught {
            Ok(result) => result.map_err(|e| ToolError::from_boxed(e).into()),
            Err(panic) => Err(panicked(&*panic).into()),
        }))
    }

    fn passes_through(error: &BoxError) -> bool {
        is_tool_failure(error)
    }
}

impl sealed::Seam for StreamSeam {
    type Request = ToolRequest;
    type Response = ToolStream;
    type Terminal = Tool;
    const HOOK: Hook = Hook::WrapToolStream;

    fn wrap(
        handler: &BoxHandler,
        request: ToolRequest,
        next: StreamNext,
    ) -> BoxFuture<'_, Result<ToolStream, BoxError>> {
        handler.handler().wrap_tool_stream(request, next)
    }

    async fn call(tool: Tool, request: ToolRequest) -> Result<ToolStream, BoxError> {
        let Some(service) = tool.stream_service() else {
            return Err(not_supported(&tool, "streamed").into());
        };
        let stream = match AssertUnwindSafe(service.clone().oneshot(request))
            .catch_unwind()
            .await
        {
            Ok(result) => result.map_err(|e| BoxError::from(ToolError::from_boxed(e)))?,
            Err(panic) => return Err(panicked(&*panic).into()),
        };
        // A panic while producing a chunk ends the stream with a tool failure; how the
        // stream finishes the run is kept.
        Ok(stream.wrap(|chunks| {
            AssertUnwindSafe(chunks)
                .catch_unwind()
                .map(|item| match item {
                    Ok(Ok(chunk)) => Ok(chunk),
                    Ok(Err(e)) => Err(ToolError::from_boxed(e)),
                    Err(panic) => Err(panicked(&*panic)),
                })
        }))
    }

    fn passes_through(error: &BoxError) -> bool {
        is_tool_failure(error)
    }
}

/// Errors that a tool wrapper passes to the model rather than failing the run.
pub(crate) fn is_tool_failure(error: &BoxError) -> bool {
    error.is::<ToolError>()
        || error.is::<tower::timeout::error::Elapsed>()
        || error.is::<Interrupt>()
}

fn not_supported(tool: &Tool, how: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Failed,
        format!("tool `{}` cannot be {how}", tool.name()),
    )
}

fn panicked(payload: &(dyn Any + Send)) -> ToolError {
    let panic = Panicked::from_payload(payload);
    ToolError::new(
        ToolErrorKind::Panicked,
        format!("the tool panicked: {}", panic.message()),
    )
}
