//! Handlers: the per-run customisation points of an agent.
//!
//! A [`Handler`] implements any of the hooks below; every hook has a pass-through
//! default, so a handler writes only what it needs, as plain `async fn`s.
//!
//! | hook | when | may change |
//! |------|------|------------|
//! | [`before_agent`](Handler::before_agent) | once at the start of a run | the run's [`AgentConfig`]: instruction, tools, return-directly set |
//! | [`before_model`](Handler::before_model) | before each model call | the history the loop keeps |
//! | [`wrap_model`](Handler::wrap_model) | around each model call | that call's request and response |
//! | [`after_model`](Handler::after_model) | after each model call | the history, including the tool calls of the reply |
//! | [`wrap_tool`](Handler::wrap_tool) | around each tool call, whole or streamed | that call's request and response |
//! | [`wrap_tool_invoke`](Handler::wrap_tool_invoke) | around each whole tool call | that call's request and output |
//! | [`wrap_tool_stream`](Handler::wrap_tool_stream) | around each streamed tool call | that call's request and its stream, chunk by chunk |
//! | [`after_agent`](Handler::after_agent) | once when a run ends successfully | the final history |
//!
//! # Order
//!
//! Handlers run in registration order, the first registered being the outermost layer,
//! like a `ServiceBuilder` stack. Handlers from [`HandlerLayer`]s come first (in the order
//! of the layers, outermost first), then the request's own handlers.
//!
//! ```text
//!             ┌──────────── handler A (outermost) ────────────┐
//!             │       ┌──────── handler B ────────┐           │
//! before_*:   │  A ──►│  B ──►                    │           │   in order, each sees the
//!             │       │                           │           │   previous one's output
//! wrap_*:     │ A.pre │ B.pre ─► model/tool ─► B.post │ A.post │   nested, A outermost
//! after_*:    │       │                       ◄── B │ ◄── A     │   unwinding, B first
//!             │       └───────────────────────────┘           │
//!             └───────────────────────────────────────────────┘
//! ```
//!
//! # Errors
//!
//! A hook that returns an error stops the run with [`AgentError::Handler`](crate::AgentError::Handler),
//! which names the hook and the handler ([`Handler::name`]); no later handler of that hook
//! runs, and after a failed `before_*` the model is not called. A hook that panics is
//! caught and fails its run the same way ([`HandlerError::is_panic`]); other runs,
//! even those polled by the same task, go on. In the tool wrappers, a
//! [`ToolError`](crate::ToolError) (such as a denial) or a tower timeout is a tool failure
//! that the model sees, and the run goes on; any other error stops the run.
//!
//! # Cost
//!
//! A hook that a handler does not implement passes the call through the first time it is
//! reached; the pass-through is its own default, which tells the handler's
//! [`BoxHandler`] so, and from then on the run (and every later run with that
//! `BoxHandler`, or a clone) skips the handler at that hook without a call. Nothing needs
//! declaring, so nothing can be declared wrongly: a hook a handler implements is never
//! skipped. A handler costs only what its own hooks do. `benches/overhead.rs` measures it
//! (see `BENCHMARKS.md`).
//!
//! # Example
//!
//! ```
//! use tower_adk::{AgentConfig, Handler, RunContext};
//! use tower::BoxError;
//!
//! #[derive(Clone)]
//! struct Role(String);
//!
//! /// Hides the `delete_account` tool from everyone but admins.
//! struct AdminOnly;
//!
//! impl Handler for AdminOnly {
//!     async fn before_agent(&self, cx: &mut RunContext, mut config: AgentConfig) -> Result<AgentConfig, BoxError> {
//!         let is_admin = cx.extensions().get::<Role>().is_some_and(|r| r.0 == "admin");
//!         if !is_admin {
//!             config.remove_tool("delete_account");
//!         }
//!         Ok(config)
//!     }
//! }
//! ```

mod layer;
mod next;
mod tower_layer;

use std::any::TypeId;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use futures::future::BoxFuture;
use tower::BoxError;

pub use self::layer::{HandlerLayer, HandlerService};
pub(crate) use self::next::{Chain, Continuation};
pub use self::next::{InvokeSeam, ModelSeam, StreamSeam};
pub use self::next::{ModelNext, Next, StreamNext, ToolCallNext, ToolNext};
pub use self::tower_layer::{Continue, ModelLayer, ToolLayer};
use crate::{AgentConfig, ModelRequest, ModelResponse, RunContext, RunState};
use crate::{ToolOutput, ToolRequest, ToolResponse, ToolStream};

/// A set of hooks that customise an agent's runs. Every hook defaults to passing through.
///
/// See the [module docs](self) for when each hook runs and in which order.
pub trait Handler: Send + Sync + 'static {
    /// The name used in errors. Defaults to the type's name.
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed(std::any::type_name::<Self>())
    }

    /// Rewrites the run's configuration, once per run, before the first model call.
    fn before_agent(
        &self,
        cx: &mut RunContext,
        config: AgentConfig,
    ) -> impl Future<Output = Result<AgentConfig, BoxError>> + Send {
        cx.passed_by::<Self>(Hook::BeforeAgent);
        std::future::ready(Ok(config))
    }

    /// Rewrites the history before each model call; later iterations see the change.
    fn before_model(
        &self,
        cx: &mut RunContext,
        state: &mut RunState,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = state;
        cx.passed_by::<Self>(Hook::BeforeModel);
        Pass
    }

    /// Rewrites the history after each model call. The model's reply is the last message;
    /// adding or removing its tool calls changes what the loop does next.
    fn after_model(
        &self,
        cx: &mut RunContext,
        state: &mut RunState,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = state;
        cx.passed_by::<Self>(Hook::AfterModel);
        Pass
    }

    /// Wraps one model call. Changes to `request` are for this call only.
    fn wrap_model(
        &self,
        request: ModelRequest,
        next: ModelNext,
    ) -> impl Future<Output = Result<ModelResponse, BoxError>> + Send {
        next.pass_by::<Self>(request)
    }

    /// Wraps every tool call, invoked or streamed: the one hook to write for a wrapper
    /// that only touches the request (checks it, refuses it, rewrites the arguments) or
    /// the output (reads or sets how it finishes the run, maps its text chunk by chunk);
    /// see [`ToolResponse`]. The two hooks below call it unless they are overridden:
    /// override those for a wrapper that treats the two kinds of call differently.
    ///
    /// ```
    /// use tower_adk::{BoxError, Handler, ToolCallNext, ToolError, ToolRequest, ToolResponse};
    ///
    /// /// Refuses calls without a ticket, and marks every output; the same code for
    /// /// invoked and streamed calls.
    /// struct Ticketed;
    ///
    /// impl Handler for Ticketed {
    ///     async fn wrap_tool(&self, request: ToolRequest, next: ToolCallNext) -> Result<ToolResponse, BoxError> {
    ///         if request.arguments.get("ticket").is_none() {
    ///             return Err(ToolError::denied("a ticket is needed").into());
    ///         }
    ///         Ok(next.run(request).await?.map_text(|text| format!("[checked] {text}")))
    ///     }
    /// }
    /// ```
    fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> impl Future<Output = Result<ToolResponse, BoxError>> + Send {
        next.pass_by::<Self>(request)
    }

    /// Wraps one tool call whose result is returned whole. Defaults to
    /// [`wrap_tool`](Handler::wrap_tool).
    fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        let call = self.wrap_tool(request, ToolCallNext::invoke(next));
        async move { call.await?.into_output().await }
    }

    /// Wraps one streamed tool call; the wrapper may transform the stream chunk by chunk.
    /// Defaults to [`wrap_tool`](Handler::wrap_tool).
    fn wrap_tool_stream(
        &self,
        request: ToolRequest,
        next: StreamNext,
    ) -> impl Future<Output = Result<ToolStream, BoxError>> + Send {
        let call = self.wrap_tool(request, ToolCallNext::stream(next));
        async move { Ok(call.await?.into_stream()) }
    }

    /// Runs when a run ends successfully, innermost handler first.
    fn after_agent(
        &self,
        cx: &mut RunContext,
        state: &mut RunState,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = state;
        cx.passed_by::<Self>(Hook::AfterAgent);
        Pass
    }
}

/// A handler that does nothing.
impl Handler for () {}

/// The future of a state hook that does nothing. It is zero-sized, so erasing it behind a
/// `Box` allocates nothing: a handler pays only for the hooks it implements.
#[derive(Debug, Clone, Copy)]
struct Pass;

impl Future for Pass {
    type Output = Result<(), BoxError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// A handler that is there or not; `None` passes through.
impl<H: Handler> Handler for Option<H> {
    fn name(&self) -> Cow<'static, str> {
        match self {
            Some(h) => h.name(),
            None => Cow::Borrowed("None"),
        }
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        match self {
            Some(h) => h.before_agent(cx, config).await,
            None => Ok(config),
        }
    }

    async fn before_model(
        &self,
        cx: &mut RunContext,
        state: &mut RunState,
    ) -> Result<(), BoxError> {
        match self {
            Some(h) => h.before_model(cx, state).await,
            None => Ok(()),
        }
    }

    async fn after_model(&self, cx: &mut RunContext, state: &mut RunState) -> Result<(), BoxError> {
        match self {
            Some(h) => h.after_model(cx, state).await,
            None => Ok(()),
        }
    }

    async fn wrap_model(
        &self,
        request: ModelRequest,
        next: ModelNext,
    ) -> Result<ModelResponse, BoxError> {
        match self {
            Some(h) => h.wrap_model(request, next).await,
            None => next.run(request).await,
        }
    }

    async fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> Result<ToolOutput, BoxError> {
        match self {
            Some(h) => h.wrap_tool_invoke(request, next).await,
            None => next.run(request).await,
        }
    }

    async fn wrap_tool_stream(
        &self,
        request: ToolRequest,
        next: StreamNext,
    ) -> Result<ToolStream, BoxError> {
        match self {
            Some(h) => h.wrap_tool_stream(request, next).await,
            None => next.run(request).await,
        }
    }

    async fn after_agent(&self, cx: &mut RunContext, state: &mut RunState) -> Result<(), BoxError> {
        match self {
            Some(h) => h.after_agent(cx, state).await,
            None => Ok(()),
        }
    }
}

/// The hook points of a run, as named in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Hook {
    /// [`Handler::before_agent`].
    BeforeAgent,
    /// [`Handler::before_model`].
    BeforeModel,
    /// [`Handler::wrap_model`].
    WrapModel,
    /// [`Handler::after_model`].
    AfterModel,
    /// [`Handler::wrap_tool_invoke`].
    WrapToolInvoke,
    /// [`Handler::wrap_tool_stream`].
    WrapToolStream,
    /// [`Handler::after_agent`].
    AfterAgent,
}

impl Hook {
    /// Every hook, in the order a run meets them first.
    const EVERY: [Hook; 7] = [
        Hook::BeforeAgent,
        Hook::BeforeModel,
        Hook::WrapModel,
        Hook::AfterModel,
        Hook::WrapToolInvoke,
        Hook::WrapToolStream,
        Hook::AfterAgent,
    ];

    /// The hook's method name.
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::BeforeAgent => "before_agent",
            Hook::BeforeModel => "before_model",
            Hook::WrapModel => "wrap_model",
            Hook::AfterModel => "after_model",
            Hook::WrapToolInvoke => "wrap_tool_invoke",
            Hook::WrapToolStream => "wrap_tool_stream",
            Hook::AfterAgent => "after_agent",
        }
    }
}

/// A set of [`Hook`]s.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hooks(u8);

impl Hooks {
    /// Every hook.
    pub const ALL: Hooks = {
        let mut all = Hooks::NONE;
        let mut at = 0;
        while at < Hook::EVERY.len() {
            all = all.with(Hook::EVERY[at]);
            at += 1;
        }
        all
    };
    /// No hook.
    pub const NONE: Hooks = Hooks(0);

    /// Just this hook.
    pub const fn only(hook: Hook) -> Hooks {
        Hooks::NONE.with(hook)
    }

    /// This set and `hook`.
    #[must_use]
    pub const fn with(self, hook: Hook) -> Hooks {
        Hooks(self.0 | Self::bit(hook))
    }

    /// Whether `hook` is in the set.
    pub const fn contains(self, hook: Hook) -> bool {
        self.0 & Self::bit(hook) != 0
    }

    /// The hooks in the set, in the order a run meets them first.
    ///
    /// ```
    /// use tower_adk::{Hook, Hooks};
    ///
    /// let hooks = Hooks::only(Hook::AfterAgent).with(Hook::BeforeModel);
    /// assert_eq!(hooks.iter().collect::<Vec<_>>(), [Hook::BeforeModel, Hook::AfterAgent]);
    /// assert_eq!(Hooks::ALL.iter().count(), 7);
    /// ```
    pub fn iter(self) -> impl Iterator<Item = Hook> {
        Hook::EVERY.into_iter().filter(move |h| self.contains(*h))
    }

    const fn bit(hook: Hook) -> u8 {
        1 << hook as u8
    }
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A hook of a handler failed: it returned an error, or it panicked
/// ([`is_panic`](HandlerError::is_panic)).
#[derive(Debug, thiserror::Error)]
#[error("handler `{handler}` failed in {hook}: {source}")]
pub struct HandlerError {
    hook: Hook,
    handler: Cow<'static, str>,
    #[source]
    source: BoxError,
}

impl HandlerError {
    pub(crate) fn new(hook: Hook, handler: &BoxHandler, source: BoxError) -> Self {
        HandlerError {
            hook,
            handler: handler.name(),
            source,
        }
    }

    /// The hook that failed.
    pub fn hook(&self) -> Hook {
        self.hook
    }

    /// The name of the handler whose hook failed.
    pub fn handler(&self) -> &str {
        &self.handler
    }

    /// Whether the hook panicked (the panic was caught: only this run ended). The
    /// source is then a [`Panicked`](crate::Panicked) with the panic's message.
    pub fn is_panic(&self) -> bool {
        self.source.is::<crate::Panicked>()
    }

    /// The error the hook returned.
    pub fn into_source(self) -> BoxError {
        self.source
    }
}

/// A type-erased [`Handler`], cheap to clone.
///
/// Every `Handler` converts into it with `into()`. Clones share the handler, and what
/// the runs learned about it: the hooks it leaves to their pass-through default, which
/// the runs skip once one has passed through them (see the [module docs](self#cost)).
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

/// The object-safe twin of [`Handler`].
pub(crate) trait DynHandler: Send + Sync + 'static {
    fn name(&self) -> Cow<'static, str>;
    fn before_agent<'a>(
        &'a self,
        cx: &'a mut RunContext,
        config: AgentConfig,
    ) -> BoxFuture<'a, Result<AgentConfig, BoxError>>;
    fn before_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        state: &'a mut RunState,
    ) -> BoxFuture<'a, Result<(), BoxError>>;
    fn after_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        state: &'a mut RunState,
    ) -> BoxFuture<'a, Result<(), BoxError>>;
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
    ) -> BoxFuture<'a, Result<(), BoxError>>;
}

impl<H: Handler> DynHandler for H {
    fn name(&self) -> Cow<'static, str> {
        Handler::name(self)
    }

    fn before_agent<'a>(
        &'a self,
        cx: &'a mut RunContext,
        config: AgentConfig,
    ) -> BoxFuture<'a, Result<AgentConfig, BoxError>> {
        Box::pin(Handler::before_agent(self, cx, config))
    }

    fn before_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        state: &'a mut RunState,
    ) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(Handler::before_model(self, cx, state))
    }

    fn after_model<'a>(
        &'a self,
        cx: &'a mut RunContext,
        state: &'a mut RunState,
    ) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(Handler::after_model(self, cx, state))
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
    ) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(Handler::after_agent(self, cx, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _obj_safe(_: Box<dyn DynHandler>) {}

    #[test]
    fn hook_sets_hold_what_they_are_given() {
        for hook in Hook::EVERY {
            assert!(Hooks::ALL.contains(hook), "{hook}");
            assert!(!Hooks::NONE.contains(hook), "{hook}");
            assert!(Hooks::only(hook).contains(hook), "{hook}");
        }
        let two = Hooks::only(Hook::WrapModel).with(Hook::AfterAgent);
        assert!(!two.contains(Hook::BeforeModel));
        assert_eq!(format!("{two:?}"), "{WrapModel, AfterAgent}");
    }

    #[test]
    fn box_handler_is_send_sync_and_named() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<BoxHandler>();
        assert_eq!(BoxHandler::new(()).name(), "()");
    }
}
