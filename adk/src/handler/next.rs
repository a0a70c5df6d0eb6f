//! The continuation of a wrapper chain: [`Next`], the inner wrappers and then the model or
//! the tool, for each of the three seams; [`ToolCallNext`], the same for a `wrap_tool`
//! wrapper whether the call is invoked or streamed; and the end of the chain, which calls
//! the model or the tool and turns a tool's panic into a tool failure.

use std::any::{Any, TypeId};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::{self, BoxFuture, Either};
use futures::{FutureExt, StreamExt, TryFutureExt};
use tower::{BoxError, ServiceExt};

use super::boxed::BoxHandler;
use super::error::HandlerError;
use super::hooks::Hook;
use crate::run_shared::RunShared;
use crate::{ModelError, ModelRequest, ModelResponse, Panicked};
use crate::{Tool, ToolError, ToolErrorKind, ToolOutput, ToolRequest, ToolResponse, ToolStream};

/// The rest of a wrapper chain: the inner wrappers, then the model or the tool.
///
/// A wrapper calls [`Next::run`] at most once per attempt (a retrying wrapper may clone
/// it and call it again). Not calling it skips everything inside, including the model or
/// tool, and the wrapper's own response is used instead.
pub struct Next<S: sealed::Seam> {
    handlers: Arc<[BoxHandler]>,
    index: usize,
    terminal: S::Terminal,
}

/// The rest of a [`Handler::wrap_model`](super::Handler::wrap_model) chain.
pub type ModelNext = Next<ModelSeam>;
/// The rest of a [`Handler::wrap_tool_invoke`](super::Handler::wrap_tool_invoke) chain.
pub type ToolNext = Next<InvokeSeam>;
/// The rest of a [`Handler::wrap_tool_stream`](super::Handler::wrap_tool_stream) chain.
pub type StreamNext = Next<StreamSeam>;

/// Marks the model seam in [`Next`].
#[derive(Debug)]
pub struct ModelSeam(());
/// Marks the invoke side of the tool seam in [`Next`].
#[derive(Debug)]
pub struct InvokeSeam(());
/// Marks the stream side of the tool seam in [`Next`].
#[derive(Debug)]
pub struct StreamSeam(());

impl<S: sealed::Seam> Next<S> {
    /// The whole chain of `handlers` around `terminal`, from the outermost wrapper.
    pub(super) fn new(handlers: Arc<[BoxHandler]>, terminal: S::Terminal) -> Self {
        Next {
            handlers,
            index: 0,
            terminal,
        }
    }

    /// Calls the inner wrappers and, at the end, the model or tool.
    pub fn run(
        self,
        request: S::Request,
    ) -> impl Future<Output = Result<S::Response, BoxError>> + Send + 'static {
        let Next {
            handlers,
            index,
            terminal,
        } = self;
        // Handlers that do not implement this seam's hook are skipped, not called.
        let at = handlers
            .get(index..)
            .and_then(|rest| rest.iter().position(|h| h.implements(S::HOOK)))
            .map(|skipped| index + skipped);
        match at {
            // Nothing left to wrap: the model or tool itself, with no state of ours
            // around it (this is the future every in-flight call holds).
            None => Either::Right(S::call(terminal, request)),
            Some(at) => Either::Left(async move {
                let handler = &handlers[at];
                let next = Next {
                    handlers: Arc::clone(&handlers),
                    index: at + 1,
                    terminal,
                };
                caught(|| S::wrap(handler, request, next))
                    .await
                    .map_err(|e| attribute::<S>(e, handler))
            }),
        }
    }
}

impl<S: sealed::Seam> Next<S> {
    /// Passes the call through, as the default of the hook of the handler type `H` does:
    /// the runs skip that handler at this hook from now on.
    pub(crate) fn pass_by<H: ?Sized + 'static>(
        self,
        request: S::Request,
    ) -> impl Future<Output = Result<S::Response, BoxError>> + Send + 'static {
        let current = self
            .index
            .checked_sub(1)
            .and_then(|at| self.handlers.get(at));
        if let Some(handler) = current {
            handler.passed(S::HOOK, TypeId::of::<H>());
        }
        self.run(request)
    }
}

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

impl<S: sealed::Seam> Clone for Next<S> {
    fn clone(&self) -> Self {
        Next {
            handlers: Arc::clone(&self.handlers),
            index: self.index,
            terminal: self.terminal.clone(),
        }
    }
}

impl<S: sealed::Seam> fmt::Debug for Next<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("hook", &S::HOOK)
            .field(
                "remaining_handlers",
                &self.handlers.len().saturating_sub(self.index),
            )
            .finish()
    }
}

/// An error that leaves a wrapper is the wrapper's own, unless it is one that passes
/// through wrappers unchanged (a handler error from deeper in, or the seam's own errors).
fn attribute<S: sealed::Seam>(error: BoxError, handler: &BoxHandler) -> BoxError {
    if error.is::<HandlerError>() || S::passes_through(&error) {
        error
    } else {
        Box::new(HandlerError::new(S::HOOK, handler.name(), error))
    }
}

pub(crate) mod sealed {
    use super::*;

    /// One of the three wrapped seams.
    pub trait Seam: Send + Sync + Sized + 'static {
        type Request: Send + 'static;
        type Response: Send + 'static;
        type Terminal: Clone + Send + Sync + 'static;
        const HOOK: Hook;

        fn wrap(
            handler: &BoxHandler,
            request: Self::Request,
            next: Next<Self>,
        ) -> BoxFuture<'_, Result<Self::Response, BoxError>>;

        fn call(
            terminal: Self::Terminal,
            request: Self::Request,
        ) -> impl Future<Output = Result<Self::Response, BoxError>> + Send;

        fn passes_through(error: &BoxError) -> bool;
    }
}

impl sealed::Seam for ModelSeam {
    type Request = ModelRequest;
    type Response = ModelResponse;
    /// The run, which holds the model and counts its calls.
    type Terminal = RunShared;
    const HOOK: Hook = Hook::WrapModel;

    fn wrap(
        handler: &BoxHandler,
        request: ModelRequest,
        next: ModelNext,
    ) -> BoxFuture<'_, Result<ModelResponse, BoxError>> {
        handler.handler().wrap_model(request, next)
    }

    fn call(
        run: RunShared,
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
        || error.is::<crate::interrupt::Interrupt>()
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

/// The continuation of a chain, carried inside a request while a tower layer that a
/// handler applied is in between (see [`ToolLayer`](super::ToolLayer)).
#[derive(Clone)]
pub(crate) enum Continuation {
    Model(ModelNext),
    Invoke(ToolNext),
    Stream(StreamNext),
}

impl fmt::Debug for Continuation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Continuation::Model(next) => next.fmt(f),
            Continuation::Invoke(next) => next.fmt(f),
            Continuation::Stream(next) => next.fmt(f),
        }
    }
}

/// A hook's result, or its panic as a [`Panicked`] error, whether it panics making its
/// future or polling it: a panicking hook ends its own run with an error naming it, not
/// the task that polls the run.
pub(super) fn caught<'a, T, F>(
    hook: impl FnOnce() -> F,
) -> impl Future<Output = Result<T, BoxError>> + Send + 'a
where
    T: Send + 'a,
    F: Future<Output = Result<T, BoxError>> + Send + 'a,
{
    let panicked = |panic: Box<dyn Any + Send>| Panicked::from_payload(&*panic).into();
    // A panic making the future becomes a future of the error (holding only the error:
    // a call's future is as large as its largest branch).
    let fail: fn(BoxError) -> Result<T, BoxError> = Err;
    let future = match std::panic::catch_unwind(AssertUnwindSafe(hook)) {
        Ok(future) => Either::Left(future),
        Err(panic) => Either::Right(future::ready(panicked(panic)).map(fail)),
    };
    AssertUnwindSafe(future)
        .catch_unwind()
        .map(move |caught| caught.unwrap_or_else(|panic| Err(panicked(panic))))
}
