//! A merge of a few streams, fair and without allocation per stream: how a turn with a
//! handful of tool calls interleaves the events of its calls.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

/// Merges a few streams: starts them in order, at most `cap` at a time, and on every
/// poll polls each live stream, from the one after the last that yielded, so none
/// starves. One allocation for all the streams; none per wake-up.
pub(super) struct SmallMerge<T> {
    /// The streams in start order; a finished one leaves an empty slot.
    streams: Vec<Option<BoxStream<'static, T>>>,
    /// How many have started; the rest wait for room under the cap.
    started: usize,
    /// How many of the started ones have not finished.
    running: usize,
    cap: usize,
    /// Where the next round of polls starts.
    from: usize,
}

impl<T> SmallMerge<T> {
    pub(super) fn new(
        streams: impl IntoIterator<Item = BoxStream<'static, T>>,
        cap: Option<usize>,
    ) -> Self {
        SmallMerge {
            streams: streams.into_iter().map(Some).collect(),
            started: 0,
            running: 0,
            cap: cap.unwrap_or(usize::MAX).max(1),
            from: 0,
        }
    }
}

impl<T> Stream for SmallMerge<T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = &mut *self;
        'round: loop {
            while this.running < this.cap && this.started < this.streams.len() {
                this.started += 1;
                this.running += 1;
            }
            if this.running == 0 {
                return Poll::Ready(None);
            }
            let started = this.started;
            for offset in 0..started {
                let at = (this.from + offset) % started;
                let Some(stream) = &mut this.streams[at] else {
                    continue;
                };
                match stream.poll_next_unpin(cx) {
                    Poll::Ready(Some(item)) => {
                        this.from = at + 1;
                        return Poll::Ready(Some(item));
                    }
                    Poll::Ready(None) => {
                        // Free its room; start the next waiting one, and poll them all again.
                        this.streams[at] = None;
                        this.running -= 1;
                        this.from = at + 1;
                        continue 'round;
                    }
                    Poll::Pending => {}
                }
            }
            return Poll::Pending;
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::stream;

    use super::*;

    fn merged(cap: Option<usize>) -> Vec<usize> {
        let merge = SmallMerge::new(
            vec![
                stream::iter([0, 1, 2]).boxed(),
                stream::iter([10, 11]).boxed(),
                stream::iter([20]).boxed(),
            ],
            cap,
        );
        futures::executor::block_on(merge.collect::<Vec<_>>())
    }

    #[test]
    fn small_merge_takes_turns_between_ready_streams() {
        assert_eq!(merged(None), [0, 10, 20, 1, 11, 2]);
    }

    #[test]
    fn small_merge_starts_streams_in_order_within_the_cap() {
        assert_eq!(merged(Some(1)), [0, 1, 2, 10, 11, 20]);
        assert_eq!(merged(Some(2)), [0, 10, 1, 11, 2, 20]);
    }
}
