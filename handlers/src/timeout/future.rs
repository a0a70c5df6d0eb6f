//! A deadline on the future of one call: the whole of an invoked call, or the opening of a
//! streamed one.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use adk::BoxError;
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep, sleep_until};

use super::error::Limit;

pin_project! {
    /// A timer that, when it fires, means `limit` was exceeded.
    #[derive(Debug)]
    pub(crate) struct Deadline {
        #[pin]
        sleep: Sleep,
        limit: Limit,
    }
}

impl Deadline {
    pub(crate) fn new(at: Instant, limit: Limit) -> Self {
        Deadline {
            sleep: sleep_until(at),
            limit,
        }
    }

    /// Ready with the exceeded limit once the deadline has passed.
    pub(crate) fn poll_elapsed(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Limit> {
        let this = self.project();
        ready!(this.sleep.poll(cx));
        Poll::Ready(*this.limit)
    }
}

pin_project! {
    /// The inner call's future, failed with a timeout once its deadline passes.
    ///
    /// The inner future is dropped with this one, which cancels the tool.
    #[derive(Debug)]
    pub(crate) struct ResponseFuture<F> {
        #[pin]
        inner: F,
        #[pin]
        deadline: Option<Deadline>,
    }
}

impl<F> ResponseFuture<F> {
    /// `inner` under `deadline`; `None` passes the inner future through.
    pub(crate) fn new(inner: F, deadline: Option<Deadline>) -> Self {
        ResponseFuture { inner, deadline }
    }
}

impl<F, T> Future for ResponseFuture<F>
where
    F: Future<Output = Result<T, BoxError>>,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(output) = this.inner.poll(cx) {
            return Poll::Ready(output);
        }
        match this.deadline.as_pin_mut() {
            Some(deadline) => deadline.poll_elapsed(cx).map(|limit| Err(limit.into())),
            None => Poll::Pending,
        }
    }
}
