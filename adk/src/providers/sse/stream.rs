//! The deltas of a streamed reply, read from its body: the bytes go through the
//! [`SseParser`] and a provider's [`Decode`], and the stream ends when the decoder says
//! so, recording the usage in the request's meter and passing it on as the last delta,
//! or at the first error.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use pin_project_lite::pin_project;

use super::{Flow, SseError, SseEvent, SseParser};
use crate::model::ModelDelta;
use crate::model::Usage;
use crate::model::UsageMeter;

/// How a provider reads the events of its streamed replies into [`ModelDelta`]s.
pub(crate) trait Decode {
    /// The provider's error.
    type Error: From<SseError>;

    /// Reads one event, adding its deltas to `out`; says whether the reply is complete.
    fn decode(
        &mut self,
        event: &SseEvent<'_>,
        out: &mut VecDeque<ModelDelta>,
    ) -> Result<Flow, Self::Error>;

    /// The usage the reply reported, once it is complete.
    fn usage(&self) -> Option<Usage>;

    /// Whether the reply is complete when the body ends without an event saying so.
    /// Providers whose streams have no terminator (Gemini's end with the body, after the
    /// chunk that carries the finish reason) answer from what they read; the default
    /// says no, and the stream then fails with [`SseError::Incomplete`].
    fn end(&mut self) -> Result<Flow, Self::Error> {
        Ok(Flow::More)
    }
}

pin_project! {
    /// The deltas of a streamed reply, read from its body.
    ///
    /// It ends when the decoder says the reply is complete (recording the usage in the
    /// meter, if any, and passing it on as [`ModelDelta::Usage`]), and fails with the
    /// body's error, [`SseError::Incomplete`] if the body ends first, or the decoder's
    /// first error. After an error it ends.
    #[project = DeltaStreamProj]
    pub(crate) struct DeltaStream<S, D> {
        #[pin]
        body: S,
        body_ended: bool,
        parser: SseParser,
        decoder: D,
        ready: VecDeque<ModelDelta>,
        meter: Option<UsageMeter>,
        // The model asked for: the name the usage is reported under.
        model: Option<String>,
        ended: bool,
    }
}

impl<S, D> DeltaStream<S, D> {
    pub(crate) fn new(
        body: S,
        decoder: D,
        meter: Option<UsageMeter>,
        model: Option<String>,
    ) -> Self {
        DeltaStream {
            body,
            body_ended: false,
            parser: SseParser::default(),
            decoder,
            ready: VecDeque::new(),
            meter,
            model,
            ended: false,
        }
    }
}

impl<S, B, D> Stream for DeltaStream<S, D>
where
    S: Stream<Item = Result<B, D::Error>>,
    B: AsRef<[u8]>,
    D: Decode,
{
    type Item = Result<ModelDelta, D::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        let next = this.poll_delta(cx);
        if let Poll::Ready(Some(Err(_))) = next {
            *this.ended = true;
            this.ready.clear();
        }
        next
    }
}

impl<S, B, D> DeltaStreamProj<'_, S, D>
where
    S: Stream<Item = Result<B, D::Error>>,
    B: AsRef<[u8]>,
    D: Decode,
{
    fn poll_delta(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<ModelDelta, D::Error>>> {
        loop {
            if let Some(delta) = self.ready.pop_front() {
                return Poll::Ready(Some(Ok(delta)));
            }
            if *self.ended {
                return Poll::Ready(None);
            }
            let event = match self.parser.next_event()? {
                Some(event) => event,
                None if *self.body_ended => match self.parser.finish() {
                    Some(event) => event,
                    None if self.decoder.end()? == Flow::Done => {
                        self.complete();
                        continue;
                    }
                    None => Err(SseError::Incomplete)?,
                },
                None => match ready!(self.body.as_mut().poll_next(cx)) {
                    Some(bytes) => {
                        self.parser.feed(bytes?.as_ref());
                        continue;
                    }
                    None => {
                        *self.body_ended = true;
                        continue;
                    }
                },
            };
            if self.decoder.decode(&event, self.ready)? == Flow::Done {
                self.complete();
            }
        }
    }

    /// The reply is complete: its usage goes to the meter and ends the deltas.
    fn complete(&mut self) {
        *self.ended = true;
        if let Some(usage) = self.decoder.usage() {
            if let Some(meter) = self.meter.as_ref() {
                meter.record(usage);
            }
            let model = self.model.take();
            self.ready.push_back(ModelDelta::Usage { model, usage });
        }
    }
}
