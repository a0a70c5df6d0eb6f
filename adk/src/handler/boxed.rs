//! [`BoxHandler`]: a handler with its type erased behind the object-safe twin of
//! [`Handler`], which also learns which hooks the handler leaves to their pass-through
//! default so that the runs skip it there.

use std::any::TypeId;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use futures::future::BoxFuture;
use tower::BoxError;

use super::Handler;
use super::hooks::{Hook, Hooks};
use super::next::{ModelNext, StreamNext, ToolNext};
use crate::{AgentConfig, ModelRequest, ModelResponse, RunContext, RunState};
use crate::{ToolOutput, ToolRequest, ToolStream};

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
        state: &'a mut RunState,
    ) -> HookFuture<'a, Result<(), BoxError>>;
    fn after_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        state: &'a mut RunState,
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
        state: &'a mut RunState,
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
        state: &'a mut RunState,
    ) -> HookFuture<'a, Result<(), BoxError>> {
        HookFuture::from_or_box(Handler::before_model(self, cx, state))
    }

    fn after_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        state: &'a mut RunState,
    ) -> HookFuture<'a, Result<(), BoxError>> {
        HookFuture::from_or_box(Handler::after_model(self, cx, state))
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
        state: &'a mut RunState,
    ) -> HookFuture<'a, Result<(), BoxError>> {
        HookFuture::from_or_box(Handler::after_agent(self, cx, state))
    }
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
