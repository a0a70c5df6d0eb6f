//! Shared test doubles: an order log, counting tools, and a probe handler that records
//! every hook it runs and can fail in one of them.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use tower_adk::{AgentConfig, BoxError, Handler, Hook, ModelNext, ModelRequest, ModelResponse};
use tower_adk::{History, RunContext, StreamNext, Tool, ToolInfo, ToolNext, ToolOutput};
use tower_adk::{ToolRequest, ToolStream};

/// An ordered record of what ran, shared between handlers, tools and models.
#[derive(Debug, Clone, Default)]
pub(crate) struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub(crate) fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    pub(crate) fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    pub(crate) fn clear(&self) {
        self.0.lock().unwrap().clear();
    }

    /// The entries that mention `hook`, in order.
    pub(crate) fn of(&self, hook: Hook) -> Vec<String> {
        self.entries()
            .into_iter()
            .filter(|e| e.contains(hook.as_str()))
            .collect()
    }
}

/// A call counter for a tool.
#[derive(Debug, Clone, Default)]
pub(crate) struct Calls(Arc<AtomicUsize>);

impl Calls {
    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    fn hit(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// An invokable tool that counts its calls and answers `"<name> ran"`.
pub(crate) fn counting_tool(name: &'static str, calls: &Calls) -> Tool {
    let calls = calls.clone();
    Tool::from_fn(ToolInfo::new(name, "Counts its calls."), move |_| {
        calls.hit();
        async move { Ok::<_, Infallible>(ToolOutput::new(format!("{name} ran"))) }
    })
}

/// A streaming tool that counts its calls and streams `"<name>"`, `" ran"`.
pub(crate) fn counting_stream_tool(name: &'static str, calls: &Calls) -> Tool {
    let calls = calls.clone();
    Tool::stream_fn(ToolInfo::new(name, "Counts its calls."), move |_| {
        calls.hit();
        futures::stream::iter([name, " ran"]).map(Ok::<_, Infallible>)
    })
}

/// A handler that logs `"<name>.<hook>"` on entering each hook (and
/// `"<name>.<hook> returned"` when a wrapper's inner chain returns), and fails in
/// `fail_at` right after logging it.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    name: &'static str,
    log: Log,
    fail_at: Option<Hook>,
}

impl Probe {
    pub(crate) fn new(name: &'static str, log: &Log) -> Self {
        Probe {
            name,
            log: log.clone(),
            fail_at: None,
        }
    }

    pub(crate) fn failing_at(name: &'static str, log: &Log, hook: Hook) -> Self {
        Probe {
            fail_at: Some(hook),
            ..Probe::new(name, log)
        }
    }

    fn enter(&self, hook: Hook) -> Result<(), BoxError> {
        self.log.push(format!("{}.{hook}", self.name));
        if self.fail_at == Some(hook) {
            return Err(format!("{} refused in {hook}", self.name).into());
        }
        Ok(())
    }

    fn returned(&self, hook: Hook) {
        self.log.push(format!("{}.{hook} returned", self.name));
    }
}

impl Handler for Probe {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed(self.name)
    }

    async fn before_agent(
        &self,
        _: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        self.enter(Hook::BeforeAgent)?;
        Ok(config)
    }

    async fn before_model(&self, _: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        self.enter(Hook::BeforeModel)
    }

    async fn after_model(&self, _: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        self.enter(Hook::AfterModel)
    }

    async fn wrap_model(
        &self,
        request: ModelRequest,
        next: ModelNext,
    ) -> Result<ModelResponse, BoxError> {
        self.enter(Hook::WrapModel)?;
        let response = next.run(request).await;
        self.returned(Hook::WrapModel);
        response
    }

    async fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> Result<ToolOutput, BoxError> {
        self.enter(Hook::WrapToolInvoke)?;
        let output = next.run(request).await;
        self.returned(Hook::WrapToolInvoke);
        output
    }

    async fn wrap_tool_stream(
        &self,
        request: ToolRequest,
        next: StreamNext,
    ) -> Result<ToolStream, BoxError> {
        self.enter(Hook::WrapToolStream)?;
        let stream = next.run(request).await;
        self.returned(Hook::WrapToolStream);
        stream
    }

    async fn after_agent(&self, _: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        self.enter(Hook::AfterAgent)
    }
}
