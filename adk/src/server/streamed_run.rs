//! [`StreamedRun`]: a served run's events as the chunks of its SSE body, logged as they
//! are sent.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use hyper::body::Bytes;

use super::log::{Batch, RunLog};
use super::served_run::ServedRun;
use crate::wire::WireEvent;

/// A chunk this long goes out without the events that may be ready after it.
const MAX_CHUNK: usize = 32 * 1024;

/// The run's events in their SSE frames, each chunk the events that were ready at once:
/// it takes events from the run until the run has to wait (or ends), and gives them
/// together, so that no event waits for one that is not ready yet. Dropped before the
/// run ended (the client went away), it drops the run, which cancels what it was doing,
/// and ends the log.
pub(crate) struct StreamedRun {
    log: Arc<RunLog>,
    /// The events written and not yet sent.
    batch: Batch,
    /// The run, until it ended.
    run: Option<ServedRun>,
}

impl StreamedRun {
    /// Streams `run` after the events already in `batch`.
    pub(crate) fn new(log: Arc<RunLog>, batch: Batch, run: ServedRun) -> Self {
        StreamedRun {
            log,
            batch,
            run: Some(run),
        }
    }
}

impl Stream for StreamedRun {
    type Item = Bytes;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let this = self.get_mut();
        while let Some(run) = this.run.as_mut() {
            if this.batch.len() >= MAX_CHUNK {
                break;
            }
            let event = match run.poll_next_unpin(cx) {
                Poll::Pending => break,
                Poll::Ready(None) => {
                    this.run = None;
                    break;
                }
                Poll::Ready(Some(Ok(event))) => WireEvent::from_event(event),
                Poll::Ready(Some(Err(error))) => WireEvent::from(&error),
            };
            this.log.write(&event, this.log.now(), &mut this.batch);
        }
        if !this.batch.is_empty() {
            Poll::Ready(Some(this.log.keep(&mut this.batch)))
        } else if this.run.is_none() {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    }
}

impl Drop for StreamedRun {
    fn drop(&mut self) {
        self.run = None;
        if !self.batch.is_empty() {
            self.log.keep(&mut self.batch);
        }
        self.log.cancel();
    }
}
