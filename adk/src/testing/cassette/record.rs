//! Recording: the calls of a live model, each written to the cassette when it ends.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use serde_json::Value;
use tower::BoxError;

use super::error::CassetteError;
use super::file::{Answer, CassetteFile, End, Interaction, Outcome, Piece, VERSION};
use super::replay::response;
use super::scrub::Scrubber;
use crate::model::{ModelDelta, ModelResponse};
use crate::testing::lock;

/// The calls recorded so far, one slot per call in the order the calls were made; a slot
/// is filled when its call ends (its answer read to the end, failed, or dropped).
#[derive(Debug)]
pub(crate) struct Recording {
    path: PathBuf,
    scrubber: Scrubber,
    calls: Mutex<Vec<Option<Interaction>>>,
}

impl Recording {
    pub(crate) fn new(path: PathBuf, scrubber: Scrubber) -> Self {
        Recording {
            path,
            scrubber,
            calls: Mutex::default(),
        }
    }

    /// Keeps a slot for a call that starts now.
    pub(crate) fn start(&self) -> usize {
        let mut calls = lock(&self.calls);
        calls.push(None);
        calls.len() - 1
    }

    /// Fills a call's slot and writes every ended call, in order, atomically. The lock is
    /// held while writing, so writes of concurrent calls follow each other.
    fn end(&self, slot: usize, request: Value, outcome: Outcome) -> Result<(), CassetteError> {
        let mut calls = lock(&self.calls);
        if let Some(place) = calls.get_mut(slot) {
            *place = Some(Interaction { request, outcome });
        }
        let file = CassetteFile {
            version: VERSION,
            interactions: calls.iter().flatten().cloned().collect(),
        };
        file.save(&self.path, &self.scrubber)
    }

    /// Records a call that failed before answering.
    pub(crate) fn failed(
        &self,
        slot: usize,
        request: Value,
        error: &BoxError,
    ) -> Result<(), CassetteError> {
        self.end(slot, request, Outcome::Error(message(&**error)))
    }

    /// Records an answer: a whole one at once (and gives it back, rebuilt from what was
    /// recorded, as a replay will; the live model metered its usage already), a streamed
    /// one as it is read.
    pub(crate) async fn answered(
        self: Arc<Self>,
        slot: usize,
        request: Value,
        answer: ModelResponse,
    ) -> Result<ModelResponse, BoxError> {
        if answer.is_streamed() {
            let stream = RecordingStream {
                inner: answer.into_stream(),
                pieces: Vec::new(),
                call: Some((self, slot, request)),
            };
            return Ok(ModelResponse::stream(stream));
        }
        // A whole answer's stream is ready at once.
        let pieces: Vec<Piece> = (answer.into_stream())
            .map(|delta| delta.map_or_else(|e| Piece::error(&*e), Piece::from))
            .collect()
            .await;
        let answer = Answer {
            streamed: false,
            pieces,
            end: End::Done,
        };
        self.end(slot, request, Outcome::Response(answer.clone()))?;
        Ok(response(&answer, None))
    }
}

/// A streamed answer being recorded: its deltas pass through unchanged, and its call is
/// written when the stream ends, fails or is dropped.
struct RecordingStream {
    inner: BoxStream<'static, Result<ModelDelta, BoxError>>,
    pieces: Vec<Piece>,
    call: Option<(Arc<Recording>, usize, Value)>,
}

impl RecordingStream {
    fn end(&mut self, end: End) -> Result<(), CassetteError> {
        let Some((recording, slot, request)) = self.call.take() else {
            return Ok(());
        };
        let answer = Answer {
            streamed: true,
            pieces: std::mem::take(&mut self.pieces),
            end,
        };
        recording.end(slot, request, Outcome::Response(answer))
    }
}

impl Stream for RecordingStream {
    type Item = Result<ModelDelta, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.call.is_none() {
            return Poll::Ready(None);
        }
        let item = match this.inner.poll_next_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(item) => item,
        };
        Poll::Ready(match item {
            Some(Ok(delta)) => {
                this.pieces.push(Piece::from(delta.clone()));
                Some(Ok(delta))
            }
            // A cassette that cannot be written is the failure that matters here.
            Some(Err(error)) => {
                this.pieces.push(Piece::error(&*error));
                Some(Err(this.end(End::Error).err().map_or(error, Into::into)))
            }
            None => this.end(End::Done).err().map(|e| Err(e.into())),
        })
    }
}

impl Drop for RecordingStream {
    fn drop(&mut self) {
        // Nobody is left to tell of a failed write.
        let _ = self.end(End::Dropped);
    }
}

impl std::fmt::Debug for RecordingStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingStream")
            .field("pieces", &self.pieces.len())
            .finish_non_exhaustive()
    }
}

impl From<ModelDelta> for Piece {
    fn from(delta: ModelDelta) -> Self {
        match delta {
            ModelDelta::Text(text) => Piece::Text { text },
            ModelDelta::Reasoning(reasoning) => Piece::Reasoning(reasoning),
            ModelDelta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => Piece::ToolCall {
                index,
                id,
                name,
                arguments,
            },
            ModelDelta::Part(part) => Piece::Part { part },
            ModelDelta::Usage { model, usage } => Piece::Usage { model, usage },
        }
    }
}

impl Piece {
    fn error(error: &(dyn std::error::Error + 'static)) -> Self {
        Piece::Error {
            message: message(error),
        }
    }
}

/// An error's message with its sources' (those that add something), `: `-separated.
fn message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}
