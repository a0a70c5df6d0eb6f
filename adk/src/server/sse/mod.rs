//! Server-sent events as our runs stream them: each event's frame written in place
//! ([`frame`]), and [`SseBody`], the response body that sends what a stream of frames
//! has ready as one chunk, with a keep-alive comment when it has been quiet a while.
//!
//! # Differences from axum's `Sse`
//!
//! axum's `Sse` takes one `Event` at a time, each built in a buffer of its own and sent
//! as its own chunk, and resets its keep-alive timer at every event. Here a stream hands
//! over the frames it had ready at once in one [`Bytes`] (the events a run makes without
//! waiting go out in one chunk, none waits for a later one), and the keep-alive timer is
//! made only once the stream has to wait: a run that never waits never arms it. The
//! bytes on the wire are the same as `Sse` with [`KeepAlive::default`]
//! (`axum::response::sse::KeepAlive`): a `:` comment after 15 s without an event.

pub(crate) mod frame;

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderName, HeaderValue};
use axum::response::Response;
use futures::Stream;
use hyper::body::{Bytes, Frame};
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

/// How long a stream may be quiet before a keep-alive comment (axum's default).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// What a keep-alive sends: an empty comment.
const KEEP_ALIVE_COMMENT: &[u8] = b":\n\n";

pin_project! {
    /// The body of a streamed response: each chunk `events` gives, as it comes; a
    /// keep-alive comment after [`KEEP_ALIVE`] without one. Its timer is made the first
    /// time the stream waits; `sent` says whether a chunk went out since it was set.
    pub(crate) struct SseBody<S> {
        #[pin]
        events: S,
        #[pin]
        keep_alive: Option<Sleep>,
        sent: bool,
    }
}

impl<S> SseBody<S> {
    pub(crate) fn new(events: S) -> Self {
        SseBody {
            events,
            keep_alive: None,
            sent: false,
        }
    }
}

impl<S: Stream<Item = Bytes>> HttpBody for SseBody<S> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let mut this = self.project();
        if let Poll::Ready(chunk) = this.events.poll_next(cx) {
            *this.sent = chunk.is_some();
            return Poll::Ready(chunk.map(|chunk| Ok(Frame::data(chunk))));
        }
        let sent = std::mem::take(this.sent);
        let mut timer = this.keep_alive.as_mut();
        let fresh = timer.is_none();
        if fresh {
            timer.set(Some(tokio::time::sleep(KEEP_ALIVE)));
        }
        let Some(mut timer) = timer.as_pin_mut() else {
            return Poll::Pending;
        };
        if sent && !fresh {
            timer.as_mut().reset(Instant::now() + KEEP_ALIVE);
        }
        ready!(timer.as_mut().poll(cx));
        timer.reset(Instant::now() + KEEP_ALIVE);
        let comment = Bytes::from_static(KEEP_ALIVE_COMMENT);
        Poll::Ready(Some(Ok(Frame::data(comment))))
    }
}

/// A streamed response: `text/event-stream`, not to be cached, with `header` after
/// those; its body an [`SseBody`] over `events`.
pub(crate) fn response<S>(events: S, header: (HeaderName, HeaderValue)) -> Response
where
    S: Stream<Item = Bytes> + Send + 'static,
{
    let mut response = Response::new(Body::new(SseBody::new(events)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header.0, header.1);
    response
}

#[cfg(test)]
mod tests {
    use futures::channel::mpsc;

    use super::*;

    /// The body's next frame's bytes (`None` at its end).
    async fn next<S: Stream<Item = Bytes>>(body: &mut Pin<&mut SseBody<S>>) -> Option<Bytes> {
        let frame = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await?;
        frame.ok()?.into_data().ok()
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_stream_gets_a_keep_alive_comment_15_s_after_its_last_chunk() {
        let (chunks, events) = mpsc::unbounded::<Bytes>();
        let body = SseBody::new(events);
        let mut body = std::pin::pin!(body);
        let quiet = |secs| tokio::time::sleep(Duration::from_secs(secs));

        let _ = chunks.unbounded_send(Bytes::from_static(b"event: a\n\n"));
        assert_eq!(next(&mut body).await.as_deref(), Some(&b"event: a\n\n"[..]));
        tokio::select! {
            frame = next(&mut body) => panic!("sent after less than 15 s: {frame:?}"),
            () = quiet(14) => {}
        }
        assert_eq!(next(&mut body).await.as_deref(), Some(KEEP_ALIVE_COMMENT));

        // A chunk puts the next comment off by 15 s again.
        quiet(10).await;
        let _ = chunks.unbounded_send(Bytes::from_static(b"event: b\n\n"));
        assert_eq!(next(&mut body).await.as_deref(), Some(&b"event: b\n\n"[..]));
        tokio::select! {
            frame = next(&mut body) => panic!("sent too early: {frame:?}"),
            () = quiet(14) => {}
        }
        assert_eq!(next(&mut body).await.as_deref(), Some(KEEP_ALIVE_COMMENT));
        drop(chunks);
        assert_eq!(next(&mut body).await, None);
    }
}
