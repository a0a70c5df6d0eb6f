//! Any `tower::Layer` as a model or tool wrapper.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;
use tower::{BoxError, Layer, Service, ServiceExt};

use super::next::sealed::Seam;
use super::next::{InvokeSeam, ModelSeam, StreamSeam};
use super::{Continuation, Handler, Hook, Hooks, ModelNext, Next, StreamNext, ToolNext};
use crate::{ModelRequest, ModelResponse, ToolOutput, ToolRequest, ToolStream};

/// The inner service that a layer given to [`ToolLayer`], [`ToolStreamLayer`] or
/// [`ModelLayer`] wraps: it continues the handler chain of the call it receives.
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

/// How a seam's request carries its continuation through a tower layer.
trait Carry: Seam {
    fn put(request: &mut Self::Request, next: Next<Self>);
    fn take(request: &mut Self::Request) -> Option<Next<Self>>;
}

impl Carry for ModelSeam {
    fn put(request: &mut ModelRequest, next: ModelNext) {
        request.continuation = Some(Continuation::Model(next));
    }
    fn take(request: &mut ModelRequest) -> Option<ModelNext> {
        match request.continuation.take() {
            Some(Continuation::Model(next)) => Some(next),
            _ => None,
        }
    }
}

impl Carry for InvokeSeam {
    fn put(request: &mut ToolRequest, next: ToolNext) {
        request.continuation = Some(Continuation::Invoke(next));
    }
    fn take(request: &mut ToolRequest) -> Option<ToolNext> {
        match request.continuation.take() {
            Some(Continuation::Invoke(next)) => Some(next),
            _ => None,
        }
    }
}

impl Carry for StreamSeam {
    fn put(request: &mut ToolRequest, next: StreamNext) {
        request.continuation = Some(Continuation::Stream(next));
    }
    fn take(request: &mut ToolRequest) -> Option<StreamNext> {
        match request.continuation.take() {
            Some(Continuation::Stream(next)) => Some(next),
            _ => None,
        }
    }
}

#[allow(private_bounds)]
impl<S: Carry> Service<S::Request> for Continue<S> {
    type Response = S::Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<S::Response, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: S::Request) -> Self::Future {
        match S::take(&mut request) {
            Some(next) => next.run(request).boxed(),
            None => futures::future::ready(Err(BoxError::from(
                "a request reached a handler's tower layer without its continuation: \
                 it was built outside a run, or cloned before the layer saw it",
            )))
            .boxed(),
        }
    }
}

macro_rules! layer_handler {
    (
        $(#[$doc:meta])*
        $name:ident, $seam:ty, $request:ty, $response:ty, $hook:ident, $variant:ident, $next:ty
    ) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name<T> {
            service: T,
        }

        impl<T> $name<T> {
            /// Applies `layer` once, around the rest of the chain; the resulting service is
            /// cloned for each call.
            pub fn new<L>(layer: L) -> Self
            where
                L: Layer<Continue<$seam>, Service = T>,
            {
                $name { service: layer.layer(Continue(PhantomData)) }
            }
        }

        impl<T> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("service", &std::any::type_name::<T>())
                    .finish()
            }
        }

        impl<T> Handler for $name<T>
        where
            T: Service<$request, Response = $response> + Clone + Send + Sync + 'static,
            T::Error: Into<BoxError>,
            T::Future: Send + 'static,
        {
            fn name(&self) -> Cow<'static, str> {
                Cow::Owned(format!("{}<{}>", stringify!($name), std::any::type_name::<T>()))
            }

            fn hooks(&self) -> Hooks {
                Hooks::only(Hook::$variant)
            }

            async fn $hook(&self, mut request: $request, next: $next) -> Result<$response, BoxError> {
                <$seam as Carry>::put(&mut request, next);
                self.service.clone().oneshot(request).await.map_err(Into::into)
            }
        }
    };
}

layer_handler! {
    /// A handler that wraps every whole tool call of a run in a tower layer.
    ///
    /// The layer is applied once, when the handler is built, so stateful middleware
    /// (a concurrency limit's semaphore, a rate limit's budget) is shared by all calls that
    /// go through this handler. The layer's service must be `Clone`; wrap non-`Clone`
    /// middleware (such as `RateLimit`) in a `Buffer`.
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
    ToolLayer, InvokeSeam, ToolRequest, ToolOutput, wrap_tool_invoke, WrapToolInvoke, ToolNext
}

layer_handler! {
    /// A handler that wraps every streamed tool call of a run in a tower layer.
    ///
    /// The layer sees the call until the stream is returned, not the chunks after it
    /// (tower's `Timeout`, for example, bounds the time to the first response only).
    ToolStreamLayer, StreamSeam, ToolRequest, ToolStream, wrap_tool_stream, WrapToolStream, StreamNext
}

layer_handler! {
    /// A handler that wraps every model call of a run in a tower layer, e.g. a retry.
    ///
    /// Errors of the model reach the layer wrapped in [`ModelError`](crate::ModelError);
    /// a retry policy can look at the model's own error through its `source()`.
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
    ModelLayer, ModelSeam, ModelRequest, ModelResponse, wrap_model, WrapModel, ModelNext
}
