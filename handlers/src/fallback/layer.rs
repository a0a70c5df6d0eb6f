//! [`FallbackLayer`]: wraps a model in a [`Fallback`].

use std::fmt;
use std::sync::Arc;

use adk::{BoxError, ModelRequest, ModelResponse};
use tower::{Layer, Service};

use super::Fallback;

/// A [`tower::Layer`] that gives the model it wraps fallbacks: a [`Fallback`] with the
/// wrapped model first.
///
/// # Example
///
/// ```
/// use tower::ServiceBuilder;
/// use tower_adk::handlers::FallbackLayer;
/// use tower_adk::testing::ScriptedModel;
///
/// let model = ServiceBuilder::new()
///     .layer(FallbackLayer::new(ScriptedModel::new([])))
///     .service(ScriptedModel::new([]));
/// # let _ = model;
/// ```
#[derive(Clone)]
pub struct FallbackLayer {
    template: Fallback<()>,
}

impl FallbackLayer {
    /// A layer whose first fallback is `model`.
    pub fn new<M>(model: M) -> Self
    where
        M: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        M::Error: Into<BoxError>,
        M::Future: Send + 'static,
    {
        FallbackLayer {
            template: Fallback::new(()).or(model),
        }
    }

    /// Adds a fallback after the ones before it; see [`Fallback::or`].
    pub fn or<M>(self, model: M) -> Self
    where
        M: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        M::Error: Into<BoxError>,
        M::Future: Send + 'static,
    {
        FallbackLayer {
            template: self.template.or(model),
        }
    }

    /// Falls back only on these errors; see [`Fallback::when`].
    pub fn when(self, when: impl Fn(&BoxError) -> bool + Send + Sync + 'static) -> Self {
        FallbackLayer {
            template: self.template.when(when),
        }
    }
}

impl<S> Layer<S> for FallbackLayer {
    type Service = Fallback<S>;

    fn layer(&self, inner: S) -> Fallback<S> {
        Fallback {
            inner,
            fallbacks: Arc::clone(&self.template.fallbacks),
            when: Arc::clone(&self.template.when),
        }
    }
}

impl fmt::Debug for FallbackLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FallbackLayer")
            .field("fallbacks", &self.template.fallbacks.len())
            .finish_non_exhaustive()
    }
}
