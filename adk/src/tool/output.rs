//! What a tool answers: a whole output or a stream of chunks, and whether the call ends
//! the run.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::BoxStream;
use futures::{Stream, StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower::BoxError;

use super::ToolReport;
use crate::content::Part;
use crate::message::Message;

/// The whole result of an invoked tool: the text the model sees, what else it sees (an
/// image, a file), and whether the call ends the run.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The output text.
    pub content: String,
    /// Parts the model sees after the text: an image or a file the tool returned (see
    /// [`content`](crate::content)). A provider that cannot send them in a tool result
    /// tells the model what they were.
    pub parts: Vec<Part>,
    /// Set when this call ends the run once the turn's calls are done; see [`Finish`].
    pub finish: Option<Finish>,
}

/// How a tool call ends the run: the turn's other calls still finish, then the run
/// completes with a final message chosen here, without another model call.
///
/// A tool or a wrapper sets it on a successful call with [`ToolOutput::finishing`] or
/// [`ToolStream::finishing`]; the return-directly tools of a run get
/// [`Finish::WithResult`] from the loop. When several calls of a turn finish the run, the
/// first in the model's order wins, and its `ToolResult` event is the last of the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Finish {
    /// The call's own result is the final message.
    WithResult,
    /// The turn's assistant text is the final message (as a plain assistant message).
    WithTurnText,
    /// This message is the final message.
    With(Message),
}

impl ToolOutput {
    /// An output with this text.
    pub fn new(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            parts: Vec::new(),
            finish: None,
        }
    }

    /// Adds a part the model sees after the text, e.g. an image.
    ///
    /// ```
    /// use tower_adk::ToolOutput;
    /// use tower_adk::content::{Part, Source};
    ///
    /// let chart = ToolOutput::new("The chart:").with_part(Part::image(Source::base64("image/png", "iVBORw0KGgo=")));
    /// assert_eq!(chart.parts.len(), 1);
    /// ```
    #[must_use]
    pub fn with_part(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }

    /// Makes this call end the run, as `finish` says, once the turn's calls are done.
    pub fn finishing(mut self, finish: Finish) -> Self {
        self.finish = Some(finish);
        self
    }

    /// An output whose text is `value` serialized as JSON, e.g. a typed tool's report.
    ///
    /// # Errors
    ///
    /// If `value` cannot be serialized as JSON (a map with non-string keys, a failing
    /// `Serialize` impl).
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::to_string(value).map(ToolOutput::new)
    }
}

impl From<String> for ToolOutput {
    fn from(content: String) -> Self {
        ToolOutput::new(content)
    }
}

impl From<&str> for ToolOutput {
    fn from(content: &str) -> Self {
        ToolOutput::new(content)
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        ToolOutput::new(value.to_string())
    }
}

/// The streamed result of a tool: text chunks, pulled one at a time.
///
/// The stream is lazy and has backpressure: a chunk is produced when the consumer (a
/// wrapper, the loop, and in the end the caller reading the run's events) asks for it.
pub struct ToolStream {
    chunks: BoxStream<'static, Result<String, BoxError>>,
    finish: Option<Finish>,
    report: Option<ToolReport>,
}

impl ToolStream {
    /// Boxes a stream of chunks.
    pub fn new<S, C, E>(stream: S) -> Self
    where
        S: Stream<Item = Result<C, E>> + Send + 'static,
        C: Into<String> + 'static,
        E: Into<BoxError> + 'static,
    {
        ToolStream {
            chunks: stream.map_ok(Into::into).map_err(Into::into).boxed(),
            finish: None,
            report: None,
        }
    }

    /// A stream of chunks that cannot fail.
    pub fn from_chunks<I>(chunks: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
        I::IntoIter: Send + 'static,
    {
        ToolStream::new(futures::stream::iter(
            chunks.into_iter().map(|c| Ok::<String, BoxError>(c.into())),
        ))
    }

    /// Transforms every chunk, lazily, as it passes.
    pub fn map_chunks<F>(self, f: F) -> Self
    where
        F: FnMut(String) -> String + Send + 'static,
    {
        self.wrap(|chunks| chunks.map_ok(f))
    }

    /// Replaces the stream of chunks with one made from it (e.g. one that stops early),
    /// keeping what the stream says about [finishing](Self::finishing) the run.
    pub fn wrap<F, S, C, E>(self, f: F) -> Self
    where
        F: FnOnce(BoxStream<'static, Result<String, BoxError>>) -> S,
        S: Stream<Item = Result<C, E>> + Send + 'static,
        C: Into<String> + 'static,
        E: Into<BoxError> + 'static,
    {
        let (finish, report) = (self.finish, self.report);
        ToolStream {
            finish,
            report,
            ..ToolStream::new(f(self.chunks))
        }
    }

    /// Makes this call end the run, as `finish` says, once the stream is done (and if it
    /// ends without an error) and the turn's other calls are done.
    pub fn finishing(mut self, finish: Finish) -> Self {
        self.finish = Some(finish);
        self
    }

    /// How this call ends the run, if it does.
    pub fn finish(&self) -> Option<&Finish> {
        self.finish.as_ref()
    }

    pub(crate) fn take_finish(&mut self) -> Option<Finish> {
        self.finish.take()
    }

    /// Attaches the report the tool fills as it streams: events for the run's caller,
    /// and the result the model reads in place of the chunks joined (see
    /// [`ToolReport`]). Kept through [`wrap`](Self::wrap) and tool layers.
    pub fn reporting(mut self, report: ToolReport) -> Self {
        self.report = Some(report);
        self
    }

    /// The attached report, if any.
    pub fn report(&self) -> Option<&ToolReport> {
        self.report.as_ref()
    }

    pub(crate) fn take_report(&mut self) -> Option<ToolReport> {
        self.report.take()
    }
}

impl Stream for ToolStream {
    type Item = Result<String, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.chunks.poll_next_unpin(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl fmt::Debug for ToolStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolStream").finish_non_exhaustive()
    }
}

/// What a tool call answers, whole or streamed: the response a
/// [`Handler::wrap_tool`](crate::Handler::wrap_tool) wrapper sees, whichever way the call
/// was made.
///
/// A wrapper that only touches the output works on it with the methods here, the same
/// way for both: it reads or sets how the call [finishes](ToolResponse::finish) the run,
/// or maps the text ([`map_text`](ToolResponse::map_text), each chunk as it comes for a
/// stream).
///
/// ```
/// use tower_adk::{Finish, ToolOutput, ToolResponse, ToolStream};
///
/// # futures::executor::block_on(async {
/// let whole = ToolResponse::Output(ToolOutput::new("4 results"));
/// let streamed = ToolResponse::Stream(ToolStream::from_chunks(["4 ", "results"]));
/// for response in [whole, streamed] {
///     let response = response.map_text(|text| text.to_uppercase()).finishing(Finish::WithResult);
///     assert_eq!(response.finish(), Some(&Finish::WithResult));
///     let output = response.into_output().await?;
///     assert_eq!(output.content, "4 RESULTS");
/// }
/// # Ok::<_, tower_adk::BoxError>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub enum ToolResponse {
    /// The whole output of an invoked call.
    Output(ToolOutput),
    /// The chunks of a streamed call.
    Stream(ToolStream),
}

impl ToolResponse {
    /// How the call ends the run, if it does; see [`Finish`].
    pub fn finish(&self) -> Option<&Finish> {
        match self {
            ToolResponse::Output(output) => output.finish.as_ref(),
            ToolResponse::Stream(stream) => stream.finish(),
        }
    }

    /// Makes the call end the run, as `finish` says.
    pub fn finishing(self, finish: Finish) -> Self {
        match self {
            ToolResponse::Output(output) => ToolResponse::Output(output.finishing(finish)),
            ToolResponse::Stream(stream) => ToolResponse::Stream(stream.finishing(finish)),
        }
    }

    /// Maps the output's text, or each chunk of a stream as it comes.
    pub fn map_text<F>(self, mut f: F) -> Self
    where
        F: FnMut(String) -> String + Send + 'static,
    {
        match self {
            ToolResponse::Output(mut output) => {
                output.content = f(output.content);
                ToolResponse::Output(output)
            }
            ToolResponse::Stream(stream) => ToolResponse::Stream(stream.map_chunks(f)),
        }
    }

    /// The whole output: a stream's chunks, joined, with how it finishes.
    ///
    /// # Errors
    ///
    /// The stream's first error.
    pub async fn into_output(self) -> Result<ToolOutput, BoxError> {
        match self {
            ToolResponse::Output(output) => Ok(output),
            ToolResponse::Stream(mut stream) => {
                let finish = stream.take_finish();
                let report = stream.take_report();
                if let Some(report) = &report {
                    report.set_unread();
                }
                let mut content: String = stream.try_collect::<Vec<String>>().await?.concat();
                let mut parts = Vec::new();
                if let Some(report) = report {
                    content = report.take_result().unwrap_or(content);
                    parts = report.take_parts();
                }
                Ok(ToolOutput {
                    content,
                    parts,
                    finish,
                })
            }
        }
    }

    /// The chunks: an output becomes a stream of one chunk, with how it finishes.
    pub fn into_stream(self) -> ToolStream {
        match self {
            ToolResponse::Output(output) => {
                let stream = ToolStream::from_chunks([output.content]);
                match output.finish {
                    Some(finish) => stream.finishing(finish),
                    None => stream,
                }
            }
            ToolResponse::Stream(stream) => stream,
        }
    }
}

impl From<ToolOutput> for ToolResponse {
    fn from(output: ToolOutput) -> Self {
        ToolResponse::Output(output)
    }
}

impl From<ToolStream> for ToolResponse {
    fn from(stream: ToolStream) -> Self {
        ToolResponse::Stream(stream)
    }
}
