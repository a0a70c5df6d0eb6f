//! [`HandlerLayer`]: a tower layer that adds a handler to every request of the agent it
//! wraps, and [`HandlerService`], the service it makes.

use std::task::{Context, Poll};

use tower::{Layer, Service};

use super::request::AgentRequest;
use crate::handler::BoxHandler;

/// A [`tower::Layer`] that adds a handler to every request of the agent it wraps.
///
/// Layers stack like any tower layers: in a `ServiceBuilder`, the first layer is the
/// outermost, so its handler runs first. Handlers from layers run before (outside) the
/// request's own handlers.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, HandlerLayer, Message};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower::ServiceBuilder;
///
/// struct Audit;
/// impl tower_adk::Handler for Audit {}
///
/// let agent = ServiceBuilder::new()
///     .layer(HandlerLayer::new(Audit))
///     .service(Agent::builder(ScriptedModel::new([Turn::text("hi")])).build().unwrap());
/// # let _ = agent;
/// ```
#[derive(Debug, Clone)]
pub struct HandlerLayer {
    handler: BoxHandler,
}

impl HandlerLayer {
    /// A layer that adds `handler` to every request.
    pub fn new(handler: impl Into<BoxHandler>) -> Self {
        HandlerLayer {
            handler: handler.into(),
        }
    }
}

impl<S> Layer<S> for HandlerLayer {
    type Service = HandlerService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HandlerService {
            inner,
            handler: self.handler.clone(),
        }
    }
}

/// The service made by [`HandlerLayer`]: adds its handler to each request, then calls the
/// inner service.
#[derive(Debug, Clone)]
pub struct HandlerService<S> {
    inner: S,
    handler: BoxHandler,
}

impl<S> HandlerService<S> {
    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Consumes this service, returning the inner one.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> Service<AgentRequest> for HandlerService<S>
where
    S: Service<AgentRequest>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: AgentRequest) -> Self::Future {
        request.push_layer_handler(self.handler.clone());
        self.inner.call(request)
    }
}
