//! Spans for runs, model calls and tool calls, named by the OpenTelemetry GenAI semantic
//! conventions, when the `tracing` feature is on; nothing at all when it is off.
//!
//! | span | when | attributes |
//! |------|------|------------|
//! | `invoke_agent {agent}` | one per run (a sub-agent's under its caller's `execute_tool`) | `gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.conversation.id` (the thread) |
//! | `chat {model}` | one per model call, until its reply has streamed | `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `gen_ai.response.finish_reasons` |
//! | `execute_tool {tool}` | one per tool call | `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`, `error.type` when it failed |
//!
//! An interrupt is an event `gen_ai.agent.interrupt` of the run's span (its id and the
//! tool it stopped), a resume's decisions events `gen_ai.agent.decision` (the interrupt's
//! id and the decision). Message content (`gen_ai.input.messages`,
//! `gen_ai.output.messages`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`) is
//! recorded only when the program opts in: see [`capture_content`].
//!
//! The spans are `tracing` spans: any `tracing` subscriber sees them, and with the `otel`
//! feature [`otlp`] exports them to an OpenTelemetry backend.

#[cfg(feature = "tracing")]
mod content;
#[cfg(feature = "otel")]
pub mod otlp;

pub(crate) mod metrics;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use pin_project_lite::pin_project;

#[cfg(feature = "tracing")]
pub use self::content::{capture_content, captures_content};
use crate::interrupt::{Decision, PendingInterrupt};
use crate::message::{Message, ToolCall};
use crate::model::Usage;

#[cfg(feature = "tracing")]
pub(crate) type Span = tracing::Span;

/// Stands in for `tracing::Span` when the feature is off.
#[cfg(not(feature = "tracing"))]
#[derive(Debug, Clone, Default)]
pub(crate) struct Span;

/// The span of an agent's run: `invoke_agent {agent}`, with its thread when it has one.
pub(crate) fn run_span(agent: &str, thread: Option<&str>) -> Span {
    #[cfg(feature = "tracing")]
    return tracing::info_span!(
        "invoke_agent",
        otel.name = %format_args!("invoke_agent {agent}"),
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        gen_ai.conversation.id = thread,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    #[cfg(not(feature = "tracing"))]
    {
        let _ = (agent, thread);
        Span
    }
}

/// The span of a run made of other runs (a composition): `invoke_agent`.
pub(crate) fn composed_run_span() -> Span {
    #[cfg(feature = "tracing")]
    return tracing::info_span!(
        "invoke_agent",
        otel.name = "invoke_agent",
        gen_ai.operation.name = "invoke_agent",
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    #[cfg(not(feature = "tracing"))]
    Span
}

/// The span of one model call: `chat`, renamed `chat {model}` when the provider says
/// which model it asks; the input messages when content is captured.
pub(crate) fn model_span(iteration: usize, tools: usize, messages: &[Message]) -> Span {
    #[cfg(feature = "tracing")]
    {
        let span = tracing::info_span!(
            "chat",
            otel.name = "chat",
            otel.kind = "client",
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = tracing::field::Empty,
            gen_ai.request.model = tracing::field::Empty,
            gen_ai.response.model = tracing::field::Empty,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            gen_ai.response.finish_reasons = tracing::field::Empty,
            gen_ai.input.messages = tracing::field::Empty,
            gen_ai.output.messages = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            adk.iteration = signed(iteration as u64),
            adk.tools = signed(tools as u64),
        );
        if !span.is_disabled() && captures_content() {
            span.record("gen_ai.input.messages", content::messages(messages));
        }
        span
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = (iteration, tools, messages);
        Span
    }
}

/// Names the provider and the model a model call asks, on the current span (the call's
/// `chat` span, when a provider calls it from its future).
pub(crate) fn record_model(provider: &str, model: &str) {
    #[cfg(feature = "tracing")]
    {
        let span = tracing::Span::current();
        if span.is_disabled() {
            return;
        }
        span.record("gen_ai.provider.name", provider);
        if !model.is_empty() {
            span.record("gen_ai.request.model", model);
            rename(&span, format!("chat {model}"));
        }
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (provider, model);
}

/// Renames a span (`otel.name`); OpenTelemetry's span too, which has started by now.
#[cfg(feature = "tracing")]
fn rename(span: &Span, name: String) {
    #[cfg(feature = "otel")]
    {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        span.context().span().update_name(name);
    }
    #[cfg(not(feature = "otel"))]
    span.record("otel.name", name);
}

/// What a model call used, and the model that answered, on its span.
pub(crate) fn record_usage(span: &Span, model: Option<&str>, usage: &Usage) {
    #[cfg(feature = "tracing")]
    {
        if let Some(model) = model {
            span.record("gen_ai.response.model", model);
        }
        // Signed: OpenTelemetry has no unsigned integers (a `u64` would go as text).
        span.record("gen_ai.usage.input_tokens", signed(usage.prompt_tokens));
        span.record(
            "gen_ai.usage.output_tokens",
            signed(usage.completion_tokens),
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (span, model, usage);
}

/// A count as OpenTelemetry's integers are, signed.
#[cfg(feature = "tracing")]
fn signed(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// The reply that ends a model call, on its span: why it finished (`tool_calls` when it
/// calls tools, else `stop`), and the reply when content is captured.
pub(crate) fn record_reply(span: &Span, reply: &Message) {
    #[cfg(feature = "tracing")]
    {
        if span.is_disabled() {
            return;
        }
        let reason = if reply.tool_calls().is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        record_finish_reason(span, reason);
        if captures_content() {
            let reply = content::messages(std::slice::from_ref(reply));
            span.record("gen_ai.output.messages", reply);
        }
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (span, reply);
}

/// `gen_ai.response.finish_reasons`: a list of strings where OpenTelemetry takes it.
#[cfg(feature = "tracing")]
fn record_finish_reason(span: &Span, reason: &'static str) {
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let reasons =
            opentelemetry::Value::Array(vec![opentelemetry::StringValue::from(reason)].into());
        span.set_attribute("gen_ai.response.finish_reasons", reasons);
    }
    #[cfg(not(feature = "otel"))]
    span.record("gen_ai.response.finish_reasons", reason);
}

/// The span of one tool call: `execute_tool {tool}`.
pub(crate) fn tool_span(name: &str, call_id: &str) -> Span {
    #[cfg(feature = "tracing")]
    return tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.arguments = tracing::field::Empty,
        gen_ai.tool.call.result = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    #[cfg(not(feature = "tracing"))]
    {
        let _ = (name, call_id);
        Span
    }
}

/// The arguments and result of the tool call whose span is current, when content is
/// captured.
pub(crate) fn record_tool_content(call: &ToolCall, result: &str) {
    #[cfg(feature = "tracing")]
    if captures_content() {
        let span = tracing::Span::current();
        span.record("gen_ai.tool.call.arguments", &*call.arguments);
        span.record("gen_ai.tool.call.result", result);
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (call, result);
}

/// Records a failure on the current span (`error.type`, and the error status).
pub(crate) fn record_error(kind: &str) {
    #[cfg(feature = "tracing")]
    record_failure(&tracing::Span::current(), kind);
    #[cfg(not(feature = "tracing"))]
    let _ = kind;
}

/// Records a failure on a span (`error.type`, and the error status).
pub(crate) fn record_failure(span: &Span, kind: &str) {
    #[cfg(feature = "tracing")]
    {
        span.record("error.type", kind);
        span.record("otel.status_code", "error");
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (span, kind);
}

/// The thread of a run that learnt it late (a resume's), on the current span.
pub(crate) fn record_thread(thread: &str) {
    #[cfg(feature = "tracing")]
    tracing::Span::current().record("gen_ai.conversation.id", thread);
    #[cfg(not(feature = "tracing"))]
    let _ = thread;
}

/// An event of the current span for each interrupt the run stops at.
pub(crate) fn interrupted(pending: &[PendingInterrupt]) {
    #[cfg(feature = "tracing")]
    for interrupt in pending {
        let tool = interrupt.call.as_ref().map(|call| call.name.as_str());
        // The message is the event's name in OpenTelemetry.
        tracing::info!(
            adk.interrupt.id = interrupt.id.as_str(),
            gen_ai.tool.name = tool,
            "gen_ai.agent.interrupt"
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = pending;
}

/// An event of the current span for each decision a resume brings.
pub(crate) fn decided<'a>(decisions: impl IntoIterator<Item = (&'a String, &'a Decision)>) {
    #[cfg(feature = "tracing")]
    for (id, decision) in decisions {
        let decision = match decision {
            Decision::Approve => "approve",
            Decision::Edit { .. } => "edit",
            Decision::Reject { .. } => "reject",
            Decision::Respond { .. } => "respond",
        };
        tracing::info!(
            adk.interrupt.id = id.as_str(),
            adk.decision = decision,
            "gen_ai.agent.decision"
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = decisions;
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

    /// The span it enters.
    pub(crate) fn span(&self) -> &Span {
        &self.span
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
