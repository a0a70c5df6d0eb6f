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

use crate::Message;

/// The whole result of an invoked tool: the text the model sees, and whether the call
/// ends the run.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The output text.
    pub content: String,
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
            finish: None,
        }
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
        let finish = self.finish;
        ToolStream {
            finish,
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
