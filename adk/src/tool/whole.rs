//! A streamed tool call seen whole by a tower layer.
//!
//! A stock tower layer knows only requests and responses: given a streamed call, it would
//! see the call end the moment the stream is returned, so a `Timeout` would bound only
//! the time to the stream, and a `ConcurrencyLimit` would release its permit before the
//! first chunk. To give every layer the whole call, a streamed call goes through the layer
//! in invoke shape:
//!
//! - inside the layer, [`drain`] runs the stream to its end, sending each chunk to the
//!   call's [`ChunkSink`] as it comes, and only then answers (an empty [`ToolOutput`]);
//! - outside it, [`Resurfaced`] turns the layer's future back into a [`ToolStream`]: it
//!   drives the future and hands the chunks on as they arrive, and ends when the future
//!   does, with its error if it fails (a timeout that fires mid-stream, for instance).
//!
//! The channel between the two holds one chunk, so the tool produces a chunk only when
//! the reader asks for one (backpressure), as a stream does. Everything runs in the
//! reader's task: dropping the stream drops the layer's future, and with it the tool's.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt, TryFutureExt};
use tokio::sync::mpsc;
use tower::{BoxError, Service};

use super::{Finish, ToolOutput, ToolReport, ToolRequest, ToolStream};

/// What the inside of the layer tells the outside.
enum Signal {
    /// The stream was returned; how it finishes the run, if it does, and its report.
    Started(Option<Finish>, Option<ToolReport>),
    /// A chunk of it.
    Chunk(String),
}

/// Where a streamed call's chunks go while a tower layer sees the call whole. It rides
/// in the [`ToolRequest`], so it reaches the inside of any layer (and a retrying layer
/// that clones the request sends each attempt's chunks).
#[derive(Clone, Debug)]
pub(crate) struct ChunkSink(mpsc::Sender<Signal>);

impl std::fmt::Debug for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Signal::Started(..) => "Started",
            Signal::Chunk(_) => "Chunk",
        })
    }
}

/// Runs `stream` to its end inside a layer, sending its chunks to `sink`. Without a sink
/// (the call was not made through [`Resurfaced`]), the chunks are joined into the output.
pub(crate) async fn drain(
    mut stream: ToolStream,
    sink: Option<ChunkSink>,
) -> Result<ToolOutput, BoxError> {
    let finish = stream.take_finish();
    let report = stream.take_report();
    let Some(ChunkSink(sink)) = sink else {
        if let Some(report) = &report {
            report.set_unread();
        }
        let mut content = String::new();
        while let Some(chunk) = stream.next().await {
            content.push_str(&chunk?);
        }
        let mut parts = Vec::new();
        if let Some(report) = report {
            content = report.take_result().unwrap_or(content);
            parts = report.take_parts();
        }
        return Ok(ToolOutput {
            content,
            parts,
            finish,
        });
    };
    let gone = || BoxError::from("the reader of the streamed call went away");
    sink.send(Signal::Started(finish.clone(), report))
        .await
        .map_err(|_| gone())?;
    while let Some(chunk) = stream.next().await {
        sink.send(Signal::Chunk(chunk?)).await.map_err(|_| gone())?;
    }
    Ok(ToolOutput {
        content: String::new(),
        parts: Vec::new(),
        finish,
    })
}

/// Makes a streamed call through a layer that sees it whole: `call` sends the request
/// through the layer (around [`drain`]); the future resolves to the stream once the tool
/// has returned it inside, or to the layer's error if it fails before.
pub(crate) fn resurface<F>(
    mut request: ToolRequest,
    call: impl FnOnce(ToolRequest) -> F,
) -> impl Future<Output = Result<ToolStream, BoxError>> + Send + 'static
where
    F: Future<Output = Result<ToolOutput, BoxError>> + Send + 'static,
{
    let (sender, receiver) = mpsc::channel(1);
    request.sink = Some(ChunkSink(sender));
    Resurfaced {
        call: Some(Box::pin(call(request))),
        receiver,
        failure: None,
    }
    .started()
}

/// The layer's future and the chunks it sends, as a stream of chunks.
struct Resurfaced {
    /// The layer's future, until it completes.
    call: Option<BoxFuture<'static, Result<ToolOutput, BoxError>>>,
    receiver: mpsc::Receiver<Signal>,
    /// The layer's error, given after the chunks sent before it.
    failure: Option<BoxError>,
}

/// What the stream is waiting for first.
enum Start {
    Stream(Option<Finish>, Option<ToolReport>),
    /// The layer answered without streaming (it did not call the tool, say).
    Whole(ToolOutput),
}

impl Resurfaced {
    /// Waits for the tool's stream to be returned inside the layer.
    async fn started(mut self) -> Result<ToolStream, BoxError> {
        let start = std::future::poll_fn(|cx| self.poll_start(cx)).await?;
        Ok(match start {
            Start::Stream(finish, report) => {
                let mut stream = ToolStream::new(self);
                if let Some(report) = report {
                    stream = stream.reporting(report);
                }
                match finish {
                    Some(finish) => stream.finishing(finish),
                    None => stream,
                }
            }
            Start::Whole(output) => {
                let stream = ToolStream::from_chunks([output.content]);
                match output.finish {
                    Some(finish) => stream.finishing(finish),
                    None => stream,
                }
            }
        })
    }

    fn poll_start(&mut self, cx: &mut Context<'_>) -> Poll<Result<Start, BoxError>> {
        if let Poll::Ready(Some(signal)) = self.receiver.poll_recv(cx) {
            return Poll::Ready(Ok(match signal {
                Signal::Started(finish, report) => Start::Stream(finish, report),
                // Not sent before `Started`; kept rather than lost.
                Signal::Chunk(chunk) => Start::Whole(ToolOutput::new(chunk)),
            }));
        }
        let Some(call) = &mut self.call else {
            return Poll::Ready(Err("the streamed call ended before it started".into()));
        };
        let output = std::task::ready!(call.as_mut().poll(cx));
        self.call = None;
        self.receiver.close();
        // The tool may have started just before the layer answered.
        if let Ok(Signal::Started(finish, report)) = self.receiver.try_recv() {
            self.failure = output.err();
            return Poll::Ready(Ok(Start::Stream(finish, report)));
        }
        Poll::Ready(output.map(Start::Whole))
    }
}

impl Stream for Resurfaced {
    type Item = Result<String, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Poll::Ready(Some(signal)) = this.receiver.poll_recv(cx) {
                match signal {
                    Signal::Chunk(chunk) => return Poll::Ready(Some(Ok(chunk))),
                    // A retried attempt starting again.
                    Signal::Started(..) => continue,
                }
            }
            let Some(call) = &mut this.call else {
                // The layer is done and every chunk it sent has been read.
                return Poll::Ready(this.failure.take().map(Err));
            };
            match call.as_mut().poll(cx) {
                Poll::Pending => {
                    // The call may have sent a chunk while it was polled.
                    return match this.receiver.poll_recv(cx) {
                        Poll::Ready(Some(Signal::Chunk(chunk))) => Poll::Ready(Some(Ok(chunk))),
                        Poll::Ready(Some(Signal::Started(..))) => continue,
                        _ => Poll::Pending,
                    };
                }
                Poll::Ready(output) => {
                    this.call = None;
                    this.failure = output.err();
                    // Its senders are gone with it: what is left in the channel is read
                    // before the end (or the failure).
                    this.receiver.close();
                }
            }
        }
    }
}

/// A tool's stream service in invoke shape, for a layer to wrap: each call runs the
/// stream to its end with [`drain`].
#[derive(Clone, Debug)]
pub(crate) struct Drained<S>(pub(crate) S);

impl<S> Service<ToolRequest> for Drained<S>
where
    S: Service<ToolRequest, Response = ToolStream, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = ToolOutput;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ToolOutput, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut request: ToolRequest) -> Self::Future {
        let sink = request.sink.take();
        self.0
            .call(request)
            .and_then(|stream| drain(stream, sink))
            .boxed()
    }
}

/// A layer around [`Drained`], as a stream service again (see [`resurface`]).
#[derive(Clone, Debug)]
pub(crate) struct Resurface<S>(pub(crate) S);

impl<S> Service<ToolRequest> for Resurface<S>
where
    S: Service<ToolRequest, Response = ToolOutput>,
    S::Error: Into<BoxError> + 'static,
    S::Future: Send + 'static,
{
    type Response = ToolStream;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ToolStream, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: ToolRequest) -> Self::Future {
        resurface(request, |request| self.0.call(request).map_err(Into::into)).boxed()
    }
}
