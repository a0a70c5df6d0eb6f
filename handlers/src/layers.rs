//! Any `tower::Layer` around each model or tool call.

use adk::handler::{Continue, InvokeSeam, ModelLayer, ModelSeam, ToolLayer};
use tower_layer::Layer;

/// A handler that wraps every tool call in `layer`, e.g. a timeout or a concurrency
/// limit. The layer is applied once, here: its state is shared by all calls.
///
/// A streamed call is seen whole by the layer, from its start to its last chunk, while
/// its chunks still reach the caller as they come: a timeout bounds the whole call, a
/// concurrency limit holds its permit until the last chunk (see [`ToolLayer`]).
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower::limit::ConcurrencyLimitLayer;
/// use tower::ServiceBuilder;
///
/// let guard = tower_adk::handlers::tool_layer(
///     ServiceBuilder::new()
///         .layer(ConcurrencyLimitLayer::new(4))
///         .timeout(Duration::from_secs(10)),
/// );
/// # let _ = guard;
/// ```
pub fn tool_layer<L>(layer: L) -> ToolLayer<L::Service>
where
    L: Layer<Continue<InvokeSeam>>,
{
    ToolLayer::new(layer)
}

/// A handler that wraps every model call in `layer`, e.g. a retry or a timeout.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower::timeout::TimeoutLayer;
///
/// let handler = tower_adk::handlers::model_layer(TimeoutLayer::new(Duration::from_secs(60)));
/// # let _ = handler;
/// ```
pub fn model_layer<L>(layer: L) -> ModelLayer<L::Service>
where
    L: Layer<Continue<ModelSeam>>,
{
    ModelLayer::new(layer)
}
