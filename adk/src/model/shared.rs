//! The model as an agent holds it.
//!
//! Not part of the public API: it appears only as the terminal of the model seam's
//! (sealed) chain.

use std::fmt;
use std::sync::Arc;

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use futures::future::BoxFuture;
use tower::{BoxError, Service, ServiceExt};

use super::{ModelRequest, ModelResponse};
use crate::Panicked;

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

impl fmt::Debug for SharedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedModel")
    }
}
