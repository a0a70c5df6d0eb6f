//! Timeouts on the chunks of a streamed call, after the stream was returned.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use adk::BoxError;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use pin_project_lite::pin_project;
use tokio::time::{Sleep, sleep};

use super::error::Limit;
use super::future::Deadline;

pin_project! {
    /// A tool's stream under an idle timeout and a total deadline.
    ///
    /// The idle timer starts when the consumer asks for a chunk and stops when one
    /// arrives, like tower-http's `TimeoutBody`: a slow consumer never makes the tool look
    /// idle. The total deadline runs from the start of the call, whatever the consumer
    /// does, and is checked before each chunk, so a stream that is always ready cannot
    /// outrun it.
    ///
    /// When a limit fires, the inner stream is dropped (which cancels the tool) and the
    /// timeout error is the last item.
    pub(crate) struct TimeoutStream {
        inner: Option<BoxStream<'static, Result<String, BoxError>>>,
        #[pin]
        total: Option<Deadline>,
        idle: Option<Duration>,
        #[pin]
        idle_sleep: Option<Sleep>,
    }
}

impl TimeoutStream {
    pub(crate) fn new(
        inner: BoxStream<'static, Result<String, BoxError>>,
        total: Option<Deadline>,
        idle: Option<Duration>,
    ) -> Self {
        TimeoutStream {
            inner: Some(inner),
            total,
            idle,
            idle_sleep: None,
        }
    }
}

impl Stream for TimeoutStream {
    type Item = Result<String, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let total = this.total.as_pin_mut().map(|d| d.poll_elapsed(cx));
        if let Some(Poll::Ready(limit)) = total {
            *this.inner = None;
            return Poll::Ready(Some(Err(limit.into())));
        }
        if let Some(idle) = *this.idle
            && this.idle_sleep.is_none()
        {
            this.idle_sleep.set(Some(sleep(idle)));
        }
        if let Poll::Ready(item) = inner.poll_next_unpin(cx) {
            this.idle_sleep.set(None);
            if item.is_none() {
                *this.inner = None;
            }
            return Poll::Ready(item);
        }
        let idle = (*this.idle).zip(this.idle_sleep.as_pin_mut());
        if let Some((idle, sleep)) = idle
            && sleep.poll(cx).is_ready()
        {
            *this.inner = None;
            return Poll::Ready(Some(Err(Limit::Idle(idle).into())));
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use futures::stream;

    use super::*;

    /// Sets its flag when dropped.
    struct Guard(Arc<AtomicBool>);

    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn the_tool_stream_is_dropped_as_soon_as_the_timeout_error_is_yielded() {
        let dropped = Arc::new(AtomicBool::new(false));
        let guard = Guard(Arc::clone(&dropped));
        let stalled = stream::iter([Ok::<_, BoxError>("a")])
            .chain(stream::pending())
            .map(move |chunk| {
                let _holds = &guard;
                chunk
            });
        let idle = Duration::from_millis(10);
        let mut timed = std::pin::pin!(TimeoutStream::new(
            stalled.map(|c| c.map(String::from)).boxed(),
            None,
            Some(idle)
        ));

        assert_eq!(timed.next().await.unwrap().unwrap(), "a");
        assert!(!dropped.load(Ordering::SeqCst));
        let error = timed.next().await.unwrap().unwrap_err();
        assert_eq!(
            error.to_string(),
            "timeout: idle timeout: no output for 10ms; the call was cancelled"
        );
        // Dropped while the timed stream itself is still alive, and then it ends.
        assert!(dropped.load(Ordering::SeqCst));
        assert!(timed.next().await.is_none());
    }
}
