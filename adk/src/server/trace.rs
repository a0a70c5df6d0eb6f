//! A request's W3C trace context (`traceparent`), continued by the runs it starts (feature
//! `otel`): their `invoke_agent` spans are children of the caller's span.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::context::FutureExt;

use crate::telemetry::otlp;

/// Handles the request in the caller's trace when its `traceparent` names a span: the
/// spans made while it is handled (a run's `invoke_agent`) are that span's children.
pub(crate) async fn continue_trace(request: Request, next: Next) -> Response {
    match otlp::remote_parent(request.headers()) {
        Some(parent) => next.run(request).with_context(parent).await,
        None => next.run(request).await,
    }
}
