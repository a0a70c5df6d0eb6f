//! The capped stream of a streamed tool call.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use adk::BoxError;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

use super::{Fit, OutputLimit};

/// The stream being wrapped.
type Chunks = BoxStream<'static, Result<String, BoxError>>;

/// Passes chunks until the cap; then drops the tool's stream and yields the marker.
pub(super) struct Capped {
    /// The tool's stream, until it ends or the cap is reached.
    inner: Option<Chunks>,
    limit: OutputLimit,
    /// What the chunks may still use, in the limit's unit.
    left: usize,
    /// The marker, once a chunk was cut and before it is yielded.
    marker: Option<String>,
}

impl Capped {
    pub(super) fn new(inner: Chunks, limit: OutputLimit) -> Self {
        Capped {
            inner: Some(inner),
            limit,
            left: limit.max,
            marker: None,
        }
    }
}

impl Stream for Capped {
    type Item = Result<String, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(marker) = this.marker.take() {
            return Poll::Ready(Some(Ok(marker)));
        }
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let mut chunk = match ready!(inner.poll_next_unpin(cx)) {
            Some(Ok(chunk)) => chunk,
            other => {
                // The end, or an error (after which the loop reads no further).
                this.inner = None;
                return Poll::Ready(other);
            }
        };
        match this.limit.unit.fit(&chunk, this.left) {
            Fit::Whole(used) => {
                this.left -= used;
                Poll::Ready(Some(Ok(chunk)))
            }
            Fit::Cut(at) => {
                // Dropping the stream cancels the tool: it produces nothing more.
                this.inner = None;
                let marker = this.limit.stream_marker();
                if at == 0 {
                    return Poll::Ready(Some(Ok(marker)));
                }
                chunk.truncate(at);
                this.marker = Some(marker);
                Poll::Ready(Some(Ok(chunk)))
            }
        }
    }
}
