//! [`BoxHandler`]: a handler with its type erased behind the object-safe twin of
//! [`Handler`], which also learns which hooks the handler leaves to their pass-through
//! default so that the runs skip it there; and [`Next`], the rest of a chain of such
//! handlers around a model or a tool, which each wrapper is handed. (The two are one
//! knot: the erased handler's wrappers take a `Next`, and a `Next` holds the handlers.)

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use futures::FutureExt;
use futures::future::{self, BoxFuture, Either};
use tower::BoxError;

use super::Handler;
use super::error::HandlerError;
use crate::config::AgentConfig;
use crate::context::{History, RunContext};
use crate::error::Panicked;
use crate::hook::{Hook, Hooks};
use crate::model::{ModelRequest, ModelResponse};
use crate::tool::{ToolOutput, ToolRequest, ToolStream};

/// A type-erased [`Handler`], cheap to clone.
///
/// Every `Handler` converts into it with `into()`. Clones share the handler, and what
/// the runs learned about it: the hooks it leaves to their pass-through default, which
/// the runs skip once one has passed through them (see the [module docs](super#cost)).
#[derive(Clone)]
pub struct BoxHandler {
    inner: Arc<Slot<dyn DynHandler>>,
}

/// A handler, and the hooks it was seen to pass through.
struct Slot<H: ?Sized> {
    /// The handler's type: only its own defaults say that it passes through.
    kind: TypeId,
    passes: AtomicU8,
    handler: H,
}

impl BoxHandler {
    /// Erases a handler.
    pub fn new<H: Handler>(handler: H) -> Self {
        BoxHandler {
            inner: Arc::new(Slot {
                kind: TypeId::of::<H>(),
                passes: AtomicU8::new(Hooks::NONE.0),
                handler,
            }),
        }
    }

    /// Whether the runs call the handler at `hook`: `false` once a run has seen the hook
    /// pass through its default, which the handler did not override.
    ///
    /// ```
    /// use tower_adk::{Agent, AgentRequest, BoxHandler, Hook};
    /// use tower_adk::testing::{ScriptedModel, Turn};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let handler = BoxHandler::new(tower_adk::handlers::instruction("Be brief."));
    /// assert!(handler.implements(Hook::BeforeModel)); // not known yet
    ///
    /// let agent = Agent::builder(ScriptedModel::new([Turn::text("Hi")])).build()?;
    /// agent.run(AgentRequest::user("hi").with_handler(handler.clone())).await?;
    /// assert!(handler.implements(Hook::BeforeAgent)); // its own hook
    /// assert!(!handler.implements(Hook::BeforeModel)); // passed through: skipped from now on
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn implements(&self, hook: Hook) -> bool {
        !Hooks(self.inner.passes.load(Ordering::Relaxed)).contains(hook)
    }

    /// The handler's name.
    pub fn name(&self) -> Cow<'static, str> {
        self.inner.handler.name()
    }

    /// The erased handler.
    pub(crate) fn handler(&self) -> &dyn DynHandler {
        &self.inner.handler
    }

    /// Notes that the default of `hook` of the handler type `kind` passed a call
    /// through: if that is this handler's type, the runs skip it there from now on. (A
    /// handler that calls another handler type's default, e.g. a combinator, is not
    /// skipped: it may not pass through every time.)
    pub(crate) fn passed(&self, hook: Hook, kind: TypeId) {
        if kind == self.inner.kind {
            self.inner
                .passes
                .fetch_or(Hooks::only(hook).0, Ordering::Relaxed);
        }
    }
}

impl<H: Handler> From<H> for BoxHandler {
    fn from(handler: H) -> Self {
        BoxHandler::new(handler)
    }
}

impl fmt::Debug for BoxHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BoxHandler").field(&self.name()).finish()
    }
}

/// The future of a state hook, erased: kept inline when it is small (a hook that does
/// its work at once, the common case, costs no allocation), boxed when it is not.
pub(crate) type HookFuture<'a, T> = stackfuture::StackFuture<'a, T, HOOK_ROOM>;

/// The bytes a state hook's future may take inline. (Every run's state holds one, while
/// a hook runs: keep it well under what the run's state may grow by.)
const HOOK_ROOM: usize = 128;

/// The object-safe twin of [`Handler`].
pub(crate) trait DynHandler: Send + Sync + 'static {
    fn name(&self) -> Cow<'static, str>;
    fn before_agent<'a>(
        &'a self,
        cx: &'a mut RunContext,
        config: AgentConfig,
    ) -> HookFuture<'a, Result<AgentConfig, BoxError>>;
    fn before_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        history: &'a mut History,
    ) -> HookFuture<'a, Result<(), BoxError>>;
    fn after_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        history: &'a mut History,
    ) -> HookFuture<'a, Result<(), BoxError>>;
    fn wrap_model(
        &self,
        request: ModelRequest,
        next: ModelNext,
    ) -> BoxFuture<'_, Result<ModelResponse, BoxError>>;
    fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> BoxFuture<'_, Result<ToolOutput, BoxError>>;
    fn wrap_tool_stream(
        &self,
        request: ToolRequest,
        next: StreamNext,
    ) -> BoxFuture<'_, Result<ToolStream, BoxError>>;
    fn after_agent<'a>(
        &'a self,
        cx: &'a mut RunContext,
        history: &'a mut History,
    ) -> HookFuture<'a, Result<(), BoxError>>;
}

impl<H: Handler> DynHandler for H {
    fn name(&self) -> Cow<'static, str> {
        Handler::name(self)
    }

    fn before_agent<'a>(
        &'a self,
        cx: &'a mut RunContext,
        config: AgentConfig,
    ) -> HookFuture<'a, Result<AgentConfig, BoxError>> {
        HookFuture::from_or_box(Handler::before_agent(self, cx, config))
    }

    fn before_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        history: &'a mut History,
    ) -> HookFuture<'a, Result<(), BoxError>> {
        HookFuture::from_or_box(Handler::before_model(self, cx, history))
    }

    fn after_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        history: &'a mut History,
    ) -> HookFuture<'a, Result<(), BoxError>> {
        HookFuture::from_or_box(Handler::after_model(self, cx, history))
    }

    fn wrap_model(
        &self,
        request: ModelRequest,
        next: ModelNext,
    ) -> BoxFuture<'_, Result<ModelResponse, BoxError>> {
        Box::pin(Handler::wrap_model(self, request, next))
    }

    fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> BoxFuture<'_, Result<ToolOutput, BoxError>> {
        Box::pin(Handler::wrap_tool_invoke(self, request, next))
    }

    fn wrap_tool_stream(
        &self,
        request: ToolRequest,
        next: StreamNext,
    ) -> BoxFuture<'_, Result<ToolStream, BoxError>> {
        Box::pin(Handler::wrap_tool_stream(self, request, next))
    }

    fn after_agent<'a>(
        &'a self,
        cx: &'a mut RunContext,
        history: &'a mut History,
    ) -> HookFuture<'a, Result<(), BoxError>> {
        HookFuture::from_or_box(Handler::after_agent(self, cx, history))
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn _obj_safe(_: Box<dyn DynHandler>) {}

    #[test]
    fn box_handler_is_send_sync_and_named() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<BoxHandler>();
        assert_eq!(BoxHandler::new(()).name(), "()");
    }
}
