//! [`Fallback`]: a model service that falls back to other models when the first fails.

mod future;
mod layer;

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use adk::{BoxError, BoxModel, ModelRequest, ModelResponse};
use tower::{Service, ServiceExt};

pub use self::future::FallbackFuture;
pub use self::layer::FallbackLayer;

/// Which errors lead to the next model.
type When = Arc<dyn Fn(&BoxError) -> bool + Send + Sync>;

/// A model service that tries a chain of models in order: the first (the service it
/// wraps), then each fallback, until one answers. LangChain's `ModelFallbackMiddleware`,
/// as a tower service: give it to the agent as its model, or wrap a model in a
/// [`FallbackLayer`].
///
/// - **What falls back**: an error of the call, and, for a streamed reply, an error
///   before its first delta (a server that accepts the request, then fails). An error
///   after the first delta does not: the caller has seen part of the reply. Which errors
///   fall back is [`when`](Fallback::when)'s to say (default: all).
/// - **The error** when every model failed is the last one's.
/// - **Readiness**: `poll_ready` is the first model's; the fallbacks are called only when
///   needed, each a clone driven with `oneshot` (readied then).
///
/// # Example
///
/// ```
/// use tower_adk::handlers::Fallback;
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::{Agent, AgentRequest};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let primary = ScriptedModel::new([Turn::error("503 overloaded")]);
/// let secondary = ScriptedModel::new([Turn::text("From the backup.")]);
/// let model = Fallback::new(primary.clone()).or(secondary.clone());
/// let agent = Agent::builder(model).build()?;
///
/// let result = agent.run(AgentRequest::user("hi")).await?;
/// assert_eq!(result.final_message.content(), "From the backup.");
/// assert_eq!((primary.calls(), secondary.calls()), (1, 1));
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Fallback<S> {
    inner: S,
    fallbacks: Arc<[BoxModel]>,
    when: When,
}

impl<S> Fallback<S> {
    /// `inner` first, with no fallbacks yet.
    pub fn new(inner: S) -> Self {
        Fallback {
            inner,
            fallbacks: Arc::from([]),
            when: Arc::new(|_| true),
        }
    }

    /// Adds a model to try after the ones before it.
    pub fn or<M>(mut self, model: M) -> Self
    where
        M: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        M::Error: Into<BoxError>,
        M::Future: Send + 'static,
    {
        let mut fallbacks = self.fallbacks.to_vec();
        fallbacks.push(BoxModel::new(model.map_err(Into::into)));
        self.fallbacks = fallbacks.into();
        self
    }

    /// Falls back only on the errors for which `when` is true (default: all), e.g. a
    /// provider's server errors and timeouts, not its refusals of a bad request.
    ///
    /// ```
    /// use tower_adk::handlers::Fallback;
    /// use tower_adk::testing::ScriptedModel;
    ///
    /// let model = Fallback::new(ScriptedModel::new([]))
    ///     .or(ScriptedModel::new([]))
    ///     .when(|error| !error.to_string().contains("400"));
    /// # let _ = model;
    /// ```
    pub fn when(mut self, when: impl Fn(&BoxError) -> bool + Send + Sync + 'static) -> Self {
        self.when = Arc::new(when);
        self
    }

    /// The first model.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The first model, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The first model, without the fallbacks.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> Service<ModelRequest> for Fallback<S>
where
    S: Service<ModelRequest, Response = ModelResponse> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = ModelResponse;
    type Error = BoxError;
    type Future = FallbackFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: ModelRequest) -> Self::Future {
        // The service made ready answers this call; a clone takes its place.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let (fallbacks, when) = (Arc::clone(&self.fallbacks), Arc::clone(&self.when));
        FallbackFuture::new(ready.call(request.clone()), request, fallbacks, when)
    }
}

impl<S: fmt::Debug> fmt::Debug for Fallback<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fallback")
            .field("inner", &self.inner)
            .field("fallbacks", &self.fallbacks.len())
            .finish_non_exhaustive()
    }
}
