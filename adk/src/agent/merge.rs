//! A merge of a few streams, fair and without allocation per stream: how a turn with a
//! handful of tool calls interleaves the events of its calls.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

/// Merges a few streams: starts them in order, at most `cap` at a time, and on every
/// poll polls each live stream, from the one after the last that yielded, so none
/// starves. No allocation per stream or per wake-up.
pub(super) struct SmallMerge<T> {
    waiting: std::vec::IntoIter<BoxStream<'static, T>>,
    live: Vec<BoxStream<'static, T>>,
    cap: usize,
    /// Where the next round of polls starts.
    from: usize,
}

impl<T> SmallMerge<T> {
    pub(super) fn new(streams: Vec<BoxStream<'static, T>>, cap: Option<usize>) -> Self {
        let cap = cap.unwrap_or(usize::MAX).max(1);
        SmallMerge {
            live: Vec::with_capacity(streams.len().min(cap)),
            waiting: streams.into_iter(),
            cap,
            from: 0,
        }
    }
}

impl<T> Stream for SmallMerge<T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = &mut *self;
        'round: loop {
            while this.live.len() < this.cap {
                match this.waiting.next() {
                    Some(stream) => this.live.push(stream),
                    None => break,
                }
            }
            let live = this.live.len();
            if live == 0 {
                return Poll::Ready(None);
            }
            for offset in 0..live {
                let at = (this.from + offset) % live;
                match this.live[at].poll_next_unpin(cx) {
                    Poll::Ready(Some(event)) => {
                        this.from = at + 1;
                        return Poll::Ready(Some(event));
                    }
                    Poll::Ready(None) => {
                        // Keep the start order of the rest; refill, and poll them all again.
                        drop(this.live.remove(at));
                        this.from = at;
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
