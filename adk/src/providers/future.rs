//! The future of an HTTP provider's call.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;

use crate::model::ModelResponse;

/// The future of an HTTP model's call (`E` is the provider's error): resolves when the
/// response head has arrived (a streamed reply) or the whole reply has (otherwise).
///
/// It is boxed once per call, which is nothing next to an HTTP request.
pub struct ResponseFuture<E> {
    inner: BoxFuture<'static, Result<ModelResponse, E>>,
}

impl<E> ResponseFuture<E> {
    /// The future of a call in flight.
    pub(crate) fn new(
        call: impl Future<Output = Result<ModelResponse, E>> + Send + 'static,
    ) -> Self {
        ResponseFuture {
            inner: call.boxed(),
        }
    }
}

impl<E> Future for ResponseFuture<E> {
    type Output = Result<ModelResponse, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl<E> fmt::Debug for ResponseFuture<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
