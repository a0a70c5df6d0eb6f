//! The chain of one run's handlers: the state hooks (`before_agent`, `before_model`,
//! `after_model`, `after_agent`) run over every handler in order, and the start of the
//! wrapper chains around the model and the tools.

use std::future::Future;
use std::sync::Arc;

use tower::BoxError;

use super::boxed::{BoxHandler, DynHandler, HookFuture};
use super::boxed::{InvokeSeam, ModelSeam, Next, StreamSeam, caught, sealed};
use super::error::HandlerError;
use crate::config::AgentConfig;
use crate::context::{History, RunContext};
use crate::hook::Hook;
use crate::model::{CallModel, ModelRequest, ModelResponse};
use crate::tool::{Tool, ToolOutput, ToolRequest, ToolStream};

/// The handlers of one run, in order, and the hooks run over all of them.
#[derive(Clone, Debug)]
pub(crate) struct Chain(Arc<[BoxHandler]>);

impl Chain {
    pub(crate) fn new(handlers: Vec<BoxHandler>) -> Self {
        Chain(handlers.into())
    }

    /// Whether any handler is called at `hook`: a run skips a hook no handler takes
    /// without building the future that would call none.
    pub(crate) fn calls(&self, hook: Hook) -> bool {
        self.0.iter().any(|h| h.implements(hook))
    }

    pub(crate) async fn before_agent(
        &self,
        cx: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, HandlerError> {
        for handler in self.0.iter().filter(|h| h.implements(Hook::BeforeAgent)) {
            cx.enter_hook(Hook::BeforeAgent, || handler.name());
            config = caught(|| handler.handler().before_agent(cx, config))
                .await
                .map_err(|e| HandlerError::new(Hook::BeforeAgent, handler.name(), e))?;
            cx.hook_done();
            learn(handler, cx);
        }
        Ok(config)
    }

    pub(crate) async fn before_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), HandlerError> {
        let hook: StateHook = |h, cx, history| h.before_model(cx, history);
        run_state_hook(self.0.iter(), Hook::BeforeModel, hook, cx, history).await
    }

    pub(crate) async fn after_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), HandlerError> {
        let hook: StateHook = |h, cx, history| h.after_model(cx, history);
        run_state_hook(self.0.iter().rev(), Hook::AfterModel, hook, cx, history).await
    }

    pub(crate) async fn after_agent(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), HandlerError> {
        let hook: StateHook = |h, cx, history| h.after_agent(cx, history);
        run_state_hook(self.0.iter().rev(), Hook::AfterAgent, hook, cx, history).await
    }

    pub(crate) fn model(
        &self,
        request: ModelRequest,
        run: Arc<dyn CallModel>,
    ) -> impl Future<Output = Result<ModelResponse, BoxError>> + Send + 'static {
        self.next::<ModelSeam>(run).run(request)
    }

    pub(crate) fn invoke(
        &self,
        request: ToolRequest,
        tool: Tool,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send + 'static {
        self.next::<InvokeSeam>(tool).run(request)
    }

    pub(crate) fn stream(
        &self,
        request: ToolRequest,
        tool: Tool,
    ) -> impl Future<Output = Result<ToolStream, BoxError>> + Send + 'static {
        self.next::<StreamSeam>(tool).run(request)
    }

    fn next<S: sealed::Seam>(&self, terminal: S::Terminal) -> Next<S> {
        Next::new(Arc::clone(&self.0), terminal)
    }
}

/// A hook over the run's state, as a method of the erased handler.
type StateHook = for<'a> fn(
    &'a dyn DynHandler,
    &'a mut RunContext,
    &'a mut History,
) -> HookFuture<'a, Result<(), BoxError>>;

/// Runs one state hook of each handler, in the given order, stopping at the first error.
async fn run_state_hook<'h>(
    handlers: impl Iterator<Item = &'h BoxHandler>,
    hook: Hook,
    call: StateHook,
    cx: &mut RunContext,
    history: &mut History,
) -> Result<(), HandlerError> {
    for handler in handlers.filter(|h| h.implements(hook)) {
        cx.enter_hook(hook, || handler.name());
        caught(|| call(handler.handler(), cx, history))
            .await
            .map_err(|e| HandlerError::new(hook, handler.name(), e))?;
        cx.hook_done();
        learn(handler, cx);
    }
    Ok(())
}

/// Tells the handler what its hook's default said, if it passed the call through.
fn learn(handler: &BoxHandler, cx: &mut RunContext) {
    if let Some((hook, kind)) = cx.take_passed() {
        handler.passed(hook, kind);
    }
}
