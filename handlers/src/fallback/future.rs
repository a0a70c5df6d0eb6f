//! [`FallbackFuture`]: the first model's call, then each fallback's, until one starts
//! its reply.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use adk::{BoxError, BoxModel, ModelDelta, ModelRequest, ModelResponse};
use futures::stream::{self, BoxStream};
use futures::{StreamExt, future};
use pin_project_lite::pin_project;
use tower::ServiceExt;
use tower::util::Oneshot;

use super::When;

pin_project! {
    /// The future of [`Fallback`](super::Fallback).
    #[must_use = "futures do nothing unless polled"]
    pub struct FallbackFuture<F> {
        #[pin]
        state: State<F>,
        // The request, for the fallbacks; `None` once the last one has it.
        request: Option<ModelRequest>,
        fallbacks: Arc<[BoxModel]>,
        // The next fallback to try.
        next: usize,
        when: When,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        // The first model's call.
        First { #[pin] call: F },
        // A fallback's call.
        Fallback { #[pin] call: Oneshot<BoxModel, ModelRequest> },
        // A streamed reply, read up to its first delta.
        Starting { deltas: Option<BoxStream<'static, Result<ModelDelta, BoxError>>> },
    }
}

impl<F> FallbackFuture<F> {
    pub(super) fn new(
        call: F,
        request: ModelRequest,
        fallbacks: Arc<[BoxModel]>,
        when: When,
    ) -> Self {
        FallbackFuture {
            state: State::First { call },
            request: (!fallbacks.is_empty()).then_some(request),
            fallbacks,
            next: 0,
            when,
        }
    }
}

impl<F, E> Future for FallbackFuture<F>
where
    F: Future<Output = Result<ModelResponse, E>>,
    E: Into<BoxError>,
{
    type Output = Result<ModelResponse, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            let reply = match this.state.as_mut().project() {
                StateProj::First { call } => ready!(call.poll(cx)).map_err(Into::into),
                StateProj::Fallback { call } => ready!(call.poll(cx)),
                StateProj::Starting { deltas } => {
                    let Some(stream) = deltas.as_mut() else {
                        return Poll::Ready(Err(
                            "the fallback future was polled after it ended".into()
                        ));
                    };
                    match ready!(stream.poll_next_unpin(cx)) {
                        Some(Err(error)) => Err(error),
                        Some(Ok(first)) => {
                            let rest = deltas.take().unwrap_or_else(|| stream::empty().boxed());
                            let first = stream::once(future::ready(Ok::<_, BoxError>(first)));
                            return Poll::Ready(Ok(ModelResponse::stream(first.chain(rest))));
                        }
                        None => {
                            let empty = stream::empty::<Result<ModelDelta, BoxError>>();
                            return Poll::Ready(Ok(ModelResponse::stream(empty)));
                        }
                    }
                }
            };
            let error = match reply {
                Ok(reply) if reply.is_streamed() => {
                    let deltas = Some(reply.into_stream());
                    this.state.set(State::Starting { deltas });
                    continue;
                }
                Ok(reply) => return Poll::Ready(Ok(reply)),
                Err(error) => error,
            };
            let Some(model) = this
                .fallbacks
                .get(*this.next)
                .filter(|_| (this.when)(&error))
            else {
                return Poll::Ready(Err(error));
            };
            *this.next += 1;
            // The last fallback takes the request; the others a copy (a reference count).
            let request = if *this.next == this.fallbacks.len() {
                this.request.take()
            } else {
                this.request.clone()
            };
            let Some(request) = request else {
                return Poll::Ready(Err(error));
            };
            this.state.set(State::Fallback {
                call: model.clone().oneshot(request),
            });
        }
    }
}

impl<F> fmt::Debug for FallbackFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FallbackFuture")
            .field("next", &self.next)
            .field("fallbacks", &self.fallbacks.len())
            .finish_non_exhaustive()
    }
}
