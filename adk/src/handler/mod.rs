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
//! like a `ServiceBuilder` stack. Handlers from [`HandlerLayer`](crate::agent::HandlerLayer)s come first (in the order
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

mod boxed;
mod chain;
mod error;
mod next;
mod tower_layer;

use std::borrow::Cow;
use std::future::Future;

use tower::BoxError;

pub use self::boxed::BoxHandler;
pub use self::boxed::{InvokeSeam, ModelSeam, StreamSeam};
pub use self::boxed::{ModelNext, Next, StreamNext, ToolNext};
pub(crate) use self::chain::Chain;
pub use self::error::HandlerError;
pub use self::next::ToolCallNext;
pub use self::tower_layer::{Continue, ModelLayer, ToolLayer};
use crate::config::AgentConfig;
use crate::context::{History, RunContext};
pub use crate::hook::{Hook, Hooks};
use crate::model::{ModelRequest, ModelResponse};
use crate::tool::{ToolOutput, ToolRequest, ToolResponse, ToolStream};

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
        history: &mut History,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = history;
        cx.passed_by::<Self>(Hook::BeforeModel);
        Pass
    }

    /// Rewrites the history after each model call. The model's reply is the last message;
    /// adding or removing its tool calls changes what the loop does next.
    fn after_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = history;
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
        history: &mut History,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = history;
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
        history: &mut History,
    ) -> Result<(), BoxError> {
        match self {
            Some(h) => h.before_model(cx, history).await,
            None => Ok(()),
        }
    }

    async fn after_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        match self {
            Some(h) => h.after_model(cx, history).await,
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

    async fn after_agent(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        match self {
            Some(h) => h.after_agent(cx, history).await,
            None => Ok(()),
        }
    }
}
