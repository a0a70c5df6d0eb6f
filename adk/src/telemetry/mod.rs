//! Spans for runs, model calls and tool calls, with the OpenTelemetry `gen_ai.*`
//! attribute names, when the `tracing` feature is on; nothing at all when it is off.

pub(crate) mod metrics;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use pin_project_lite::pin_project;

#[cfg(feature = "tracing")]
pub(crate) type Span = tracing::Span;

/// Stands in for `tracing::Span` when the feature is off.
#[cfg(not(feature = "tracing"))]
#[derive(Debug, Clone, Default)]
pub(crate) struct Span;

/// The span of a run: `invoke_agent`.
pub(crate) fn run_span() -> Span {
    #[cfg(feature = "tracing")]
    return tracing::info_span!(
        "invoke_agent",
        otel.name = "invoke_agent",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.system = "tower-adk",
    );
    #[cfg(not(feature = "tracing"))]
    Span
}

/// The span of one model call: `chat`.
pub(crate) fn model_span(iteration: usize, tools: usize) -> Span {
    #[cfg(feature = "tracing")]
    return tracing::info_span!(
        "chat",
        otel.name = "chat",
        gen_ai.operation.name = "chat",
        adk.iteration = iteration,
        adk.tools = tools,
    );
    #[cfg(not(feature = "tracing"))]
    {
        let _ = (iteration, tools);
        Span
    }
}

/// The span of one tool call: `execute_tool`.
pub(crate) fn tool_span(name: &str, call_id: &str) -> Span {
    #[cfg(feature = "tracing")]
    return tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        error.type = tracing::field::Empty,
    );
    #[cfg(not(feature = "tracing"))]
    {
        let _ = (name, call_id);
        Span
    }
}

/// Records a failure on the current span (`error.type`).
pub(crate) fn record_error(kind: &str) {
    #[cfg(feature = "tracing")]
    tracing::Span::current().record("error.type", kind);
    #[cfg(not(feature = "tracing"))]
    let _ = kind;
}

pin_project! {
    /// A future or stream that enters its span while it is polled.
    pub(crate) struct InSpan<T> {
        #[pin]
        inner: T,
        span: Span,
    }
}

impl<T> InSpan<T> {
    pub(crate) fn new(inner: T, span: Span) -> Self {
        InSpan { inner, span }
    }

    #[cfg(all(test, not(feature = "tracing")))]
    pub(crate) fn get_ref(&self) -> &T {
        &self.inner
    }
}

impl<F: Future> Future for InSpan<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        #[cfg(feature = "tracing")]
        let _entered = this.span.enter();
        #[cfg(not(feature = "tracing"))]
        let _ = this.span;
        this.inner.poll(cx)
    }
}

impl<S: Stream> Stream for InSpan<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.project();
        #[cfg(feature = "tracing")]
        let _entered = this.span.enter();
        #[cfg(not(feature = "tracing"))]
        let _ = this.span;
        this.inner.poll_next(cx)
    }
}
