//! The model as an agent holds it ([`SharedModel`]), and the end of a run's model seam
//! ([`CallModel`]).
//!
//! Not part of the public API: they appear only as the terminal of the model seam's
//! (sealed) chain.

use std::fmt;
use std::sync::Arc;

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use futures::future::BoxFuture;
use tower::{BoxError, Service, ServiceExt};

use super::{ModelRequest, ModelResponse};
use crate::error::Panicked;

/// The model an agent holds, erased behind an `Arc`: cloning it is a reference count, and
/// each call clones the model itself (for most models an `Arc` too) and drives it with
/// `oneshot`, as tower's dispatchers do. (A `BoxModel` would allocate for every clone,
/// that is for every call.)
#[derive(Clone)]
pub(crate) struct SharedModel(Arc<dyn Fn(ModelRequest) -> ModelFuture + Send + Sync>);

/// The future of one call of a `SharedModel`.
pub(crate) type ModelFuture = BoxFuture<'static, Result<ModelResponse, BoxError>>;

impl SharedModel {
    pub(crate) fn new<M>(model: M) -> Self
    where
        M: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        M::Error: Into<BoxError>,
        M::Future: Send + 'static,
    {
        SharedModel(Arc::new(move |request| {
            // The model is called when the future is first polled, inside the catch: a
            // panicking model is an error of its run only.
            let call = AssertUnwindSafe(model.clone().oneshot(request)).catch_unwind();
            Box::pin(call.map(|caught| match caught {
                Ok(result) => result.map_err(Into::into),
                Err(panic) => Err(Panicked::from_payload(&*panic).into()),
            }))
        }))
    }

    /// Calls the model once.
    pub(crate) fn call(&self, request: ModelRequest) -> ModelFuture {
        (self.0)(request)
    }
}

/// The model as a service again, for a layer put around it after it was erased
/// ([`AgentBuilder::model_layer`](crate::AgentBuilder::model_layer)): always ready, as
/// each call drives a clone of the model with `oneshot`.
impl Service<ModelRequest> for SharedModel {
    type Response = ModelResponse;
    type Error = BoxError;
    type Future = ModelFuture;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: ModelRequest) -> ModelFuture {
        SharedModel::call(self, request)
    }
}

impl fmt::Debug for SharedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedModel")
    }
}

/// The end of a run's model seam, behind its wrappers: calls the agent's model and counts
/// the call. The loop's per-run cell implements it (`agent::shared`), so the chain calls
/// the model of the run it serves without knowing the loop. (Public in a private module:
/// it appears only as the terminal of the sealed model seam.)
pub trait CallModel: Send + Sync + 'static {
    /// Calls the model once, counting the call.
    fn call_model(&self, request: ModelRequest) -> ModelFuture;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _obj_safe(_: Box<dyn CallModel>) {}
}
