//! The enveloped stream of a streamed tool call.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use adk::BoxError;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

use super::CLOSING;
use super::neutralize::Neutralizer;

/// The stream being wrapped.
type Chunks = BoxStream<'static, Result<String, BoxError>>;

/// Yields the opening, the tool's chunks neutralised, then the held-back tail and the
/// closing. A failing tool's stream ends at its error, without the closing.
pub(super) struct Enveloped {
    /// The opening, until it is yielded.
    opening: Option<String>,
    /// The tool's stream, until it ends or fails.
    inner: Option<Chunks>,
    neutralizer: Neutralizer,
}

impl Enveloped {
    pub(super) fn new(opening: &str, inner: Chunks) -> Self {
        Enveloped {
            opening: Some(opening.to_owned()),
            inner: Some(inner),
            neutralizer: Neutralizer::default(),
        }
    }
}

impl Stream for Enveloped {
    type Item = Result<String, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(opening) = this.opening.take() {
            return Poll::Ready(Some(Ok(opening)));
        }
        while let Some(inner) = this.inner.as_mut() {
            match ready!(inner.poll_next_unpin(cx)) {
                Some(Ok(chunk)) => {
                    let safe = this.neutralizer.push(&chunk);
                    // A chunk held back whole yields nothing yet: read on.
                    if !safe.is_empty() {
                        return Poll::Ready(Some(Ok(safe)));
                    }
                }
                Some(Err(error)) => {
                    this.inner = None;
                    return Poll::Ready(Some(Err(error)));
                }
                None => {
                    this.inner = None;
                    let tail = this.neutralizer.finish();
                    return Poll::Ready(Some(Ok(tail + CLOSING)));
                }
            }
        }
        Poll::Ready(None)
    }
}
