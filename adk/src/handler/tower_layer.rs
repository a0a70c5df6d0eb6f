//! Any `tower::Layer` as a model or tool wrapper.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::{self, BoxFuture};
use futures::{FutureExt, TryFutureExt};
use tower::{BoxError, Layer, Service, ServiceExt};

use super::Handler;
use super::boxed::{InvokeSeam, ModelNext, ModelSeam, StreamNext, ToolNext};
use crate::model::{ModelRequest, ModelResponse};
use crate::tool::{ToolOutput, ToolRequest, ToolStream, whole};

/// The inner service that a layer given to [`ToolLayer`] or [`ModelLayer`] wraps: it continues the handler chain of the call it receives.
///
/// It is always ready; each call carries its own continuation.
pub struct Continue<S>(PhantomData<fn() -> S>);

impl<S> Clone for Continue<S> {
    fn clone(&self) -> Self {
        Continue(PhantomData)
    }
}

impl<S> fmt::Debug for Continue<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Continue")
    }
}

impl Service<ModelRequest> for Continue<ModelSeam> {
    type Response = ModelResponse;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ModelResponse, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: ModelRequest) -> Self::Future {
        match taken::<ModelNext>(request.continuation.take()) {
            Some(next) => next.run(request).boxed(),
            None => future::ready(Err(no_continuation())).boxed(),
        }
    }
}

/// A tool call, whole or streamed. A streamed call reaches the layer in invoke shape: it
/// is run to its last chunk here, inside the layer, its chunks going out as they come, so
/// the layer sees the whole call (see [`ToolLayer`]).
impl Service<ToolRequest> for Continue<InvokeSeam> {
    type Response = ToolOutput;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ToolOutput, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: ToolRequest) -> Self::Future {
        match taken::<ToolContinuation>(request.continuation.take()) {
            Some(ToolContinuation::Invoke(next)) => next.run(request).boxed(),
            Some(ToolContinuation::Stream(next)) => {
                let sink = request.sink.take();
                next.run(request)
                    .and_then(|stream| whole::drain(stream, sink))
                    .boxed()
            }
            None => future::ready(Err(no_continuation())).boxed(),
        }
    }
}

/// The rest of a tool call's chain, carried inside its request while the layer is in
/// between: a tool layer sees both kinds of call in invoke shape.
#[derive(Clone)]
enum ToolContinuation {
    Invoke(ToolNext),
    Stream(StreamNext),
}

/// The continuation a request carries, if it is a `T` (a clone of it when the request was
/// cloned, e.g. by a retrying layer).
fn taken<T: Clone + Send + Sync + 'static>(
    carried: Option<Arc<dyn Any + Send + Sync>>,
) -> Option<T> {
    carried?.downcast::<T>().ok().map(Arc::unwrap_or_clone)
}

fn no_continuation() -> BoxError {
    BoxError::from(
        "a request reached a handler's tower layer without its continuation: \
         it was built outside a run, or cloned before the layer saw it",
    )
}

/// A handler that wraps every tool call of a run, whole or streamed, in a tower layer.
///
/// The layer is applied once, when the handler is built, so stateful middleware
/// (a concurrency limit's semaphore, a rate limit's budget) is shared by all calls that
/// go through this handler. The layer's service must be `Clone`; wrap non-`Clone`
/// middleware (such as `RateLimit`) in a `Buffer`.
///
/// # Streamed calls
///
/// The layer sees a streamed call as one whole call that ends with its last chunk: a
/// `Timeout` bounds the whole call, last chunk included, and a `ConcurrencyLimit` holds
/// its permit until then. The chunks still reach the caller as they come, through every
/// stream wrapper, with backpressure. A layer that retries a streamed call sends the
/// chunks of each attempt. (To act on the chunks themselves, write a
/// [`wrap_tool_stream`](Handler::wrap_tool_stream) hook.)
///
/// A tower timeout that fires becomes a model-visible [`ToolErrorKind::Timeout`](crate::ToolErrorKind::Timeout).
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower_adk::handler::ToolLayer;
/// use tower::timeout::TimeoutLayer;
///
/// let every_tool_call_times_out_after_5s = ToolLayer::new(TimeoutLayer::new(Duration::from_secs(5)));
/// # let _ = every_tool_call_times_out_after_5s;
/// ```
#[derive(Clone)]
pub struct ToolLayer<T> {
    service: T,
}

impl<T> ToolLayer<T> {
    /// Applies `layer` once, around the rest of the chain; the resulting service is
    /// cloned for each call.
    pub fn new<L>(layer: L) -> Self
    where
        L: Layer<Continue<InvokeSeam>, Service = T>,
    {
        ToolLayer {
            service: layer.layer(Continue(PhantomData)),
        }
    }
}

impl<T> Handler for ToolLayer<T>
where
    T: Service<ToolRequest, Response = ToolOutput> + Clone + Send + Sync + 'static,
    T::Error: Into<BoxError>,
    T::Future: Send + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Owned(format!("ToolLayer<{}>", std::any::type_name::<T>()))
    }

    async fn wrap_tool_invoke(
        &self,
        mut request: ToolRequest,
        next: ToolNext,
    ) -> Result<ToolOutput, BoxError> {
        request.continuation = Some(Arc::new(ToolContinuation::Invoke(next)));
        self.service
            .clone()
            .oneshot(request)
            .await
            .map_err(Into::into)
    }

    fn wrap_tool_stream(
        &self,
        mut request: ToolRequest,
        next: StreamNext,
    ) -> impl Future<Output = Result<ToolStream, BoxError>> + Send {
        request.continuation = Some(Arc::new(ToolContinuation::Stream(next)));
        let service = self.service.clone();
        whole::resurface(request, move |request| {
            service.oneshot(request).map_err(Into::into)
        })
    }
}

/// A handler that wraps every model call of a run in a tower layer, e.g. a retry.
///
/// Errors of the model reach the layer wrapped in [`ModelError`](crate::ModelError);
/// a retry policy can look at the model's own error through its `source()`.
///
/// The layer sees the call until the model's response is returned: for a streamed reply,
/// until the stream starts (a `Timeout` bounds the time to the first delta).
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower_adk::handler::ModelLayer;
/// use tower::timeout::TimeoutLayer;
///
/// let model_calls_time_out = ModelLayer::new(TimeoutLayer::new(Duration::from_secs(30)));
/// # let _ = model_calls_time_out;
/// ```
#[derive(Clone)]
pub struct ModelLayer<T> {
    service: T,
}

impl<T> ModelLayer<T> {
    /// Applies `layer` once, around the rest of the chain; the resulting service is
    /// cloned for each call.
    pub fn new<L>(layer: L) -> Self
    where
        L: Layer<Continue<ModelSeam>, Service = T>,
    {
        ModelLayer {
            service: layer.layer(Continue(PhantomData)),
        }
    }
}

impl<T> Handler for ModelLayer<T>
where
    T: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
    T::Error: Into<BoxError>,
    T::Future: Send + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Owned(format!("ModelLayer<{}>", std::any::type_name::<T>()))
    }

    async fn wrap_model(
        &self,
        mut request: ModelRequest,
        next: ModelNext,
    ) -> Result<ModelResponse, BoxError> {
        request.continuation = Some(Arc::new(next));
        self.service
            .clone()
            .oneshot(request)
            .await
            .map_err(Into::into)
    }
}

impl<T> fmt::Debug for ToolLayer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolLayer")
            .field("service", &std::any::type_name::<T>())
            .finish()
    }
}

impl<T> fmt::Debug for ModelLayer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelLayer")
            .field("service", &std::any::type_name::<T>())
            .finish()
    }
}
