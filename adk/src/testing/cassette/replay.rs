//! [`ReplayModel`]: a model that answers from a cassette.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::future::{Ready, ready};
use futures::stream;
use tower::{BoxError, Service};

use super::canonical::{canonical, diff, first_difference};
use super::error::{CassetteError, RecordedError};
use super::file::{Answer, CassetteFile, End, Interaction, Outcome, Piece};
use super::scrub::Scrubber;
use crate::model::{
    MessageAccumulator, ModelDelta, ModelRequest, ModelResponse, Usage, UsageMeter,
};
use crate::testing::lock;

/// A model that answers from a cassette, deterministically: each call gets the recorded
/// answer's pieces, in their order, at once (no sleeping), or the recorded error. Like
/// the providers, it adds a recorded usage to the [`UsageMeter`] in the request's
/// extensions, if there is one.
///
/// # Matching
///
/// A call is answered by the first recorded call not yet served whose request equals it
/// (in the canonical JSON form, scrubbed as the recording was). In a program that makes
/// its calls one after another that is the next one in the file; calls made concurrently
/// (parallel sub-agents) find theirs whatever order they come in. A call that equals
/// none fails with [`CassetteError::Drift`], a unified diff against the first one not yet
/// served; a call after all were served fails with [`CassetteError::Exhausted`].
///
/// An answer whose stream the caller dropped while it was recorded replays the pieces
/// that were read, then ends.
///
/// Clones share the cassette and what has been served.
///
/// # Example
///
/// ```
/// use tower::{Layer, ServiceExt};
/// use tower_adk::testing::cassette::{Cassette, Mode, ReplayModel};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::{Agent, AgentRequest};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let path = std::env::temp_dir().join(format!("replay-doc-{}.json", std::process::id()));
/// let live = ScriptedModel::new([Turn::text("Recorded.")]);
/// let recording = Cassette::new(&path).mode(Mode::Record).layer()?.layer(live);
/// Agent::builder(recording).build()?.run(AgentRequest::user("hi")).await?;
///
/// // No live model at all.
/// let model = ReplayModel::open(&path)?;
/// let agent = Agent::builder(model.clone()).build()?;
/// let result = agent.run(AgentRequest::user("hi")).await?;
/// assert_eq!(result.final_message.content(), "Recorded.");
/// assert_eq!((model.calls(), model.remaining()), (1, 0));
/// # std::fs::remove_file(&path)?;
/// # Ok::<_, tower_adk::BoxError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct ReplayModel {
    reel: Arc<Reel>,
}

#[derive(Debug)]
struct Reel {
    path: PathBuf,
    interactions: Vec<Interaction>,
    scrubber: Scrubber,
    served: Mutex<Served>,
}

#[derive(Debug, Default)]
struct Served {
    calls: usize,
    used: Vec<bool>,
}

impl ReplayModel {
    /// Replays the cassette at `path`, matching requests scrubbed by the default
    /// [`Scrubber`].
    ///
    /// # Errors
    ///
    /// [`CassetteError::Io`] if it cannot be read, [`CassetteError::Corrupt`] if it is
    /// not a whole cassette, [`CassetteError::UnsupportedVersion`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CassetteError> {
        ReplayModel::load(path.as_ref().to_owned(), Scrubber::default())
    }

    pub(crate) fn load(path: PathBuf, scrubber: Scrubber) -> Result<Self, CassetteError> {
        let file = CassetteFile::load(&path)?;
        let served = Served {
            calls: 0,
            used: vec![false; file.interactions.len()],
        };
        Ok(ReplayModel {
            reel: Arc::new(Reel {
                path,
                interactions: file.interactions,
                scrubber,
                served: Mutex::new(served),
            }),
        })
    }

    /// How many calls the cassette holds.
    pub fn len(&self) -> usize {
        self.reel.interactions.len()
    }

    /// Whether the cassette holds no call.
    pub fn is_empty(&self) -> bool {
        self.reel.interactions.is_empty()
    }

    /// How many calls this model (and its clones) received.
    pub fn calls(&self) -> usize {
        lock(&self.reel.served).calls
    }

    /// How many recorded calls have not been served yet.
    pub fn remaining(&self) -> usize {
        lock(&self.reel.served).used.iter().filter(|u| !**u).count()
    }

    /// The answer to this request, or why there is none.
    fn answer(&self, request: &ModelRequest) -> Result<ModelResponse, BoxError> {
        let reel = &*self.reel;
        let mut requested = canonical(request)?;
        reel.scrubber.scrub_value(&mut requested);
        let mut served = lock(&reel.served);
        served.calls += 1;
        let call = served.calls;
        let mut unused = (served.used.iter().enumerate()).filter_map(|(i, u)| (!u).then_some(i));
        let Some(first) = unused.clone().next() else {
            return Err(CassetteError::Exhausted {
                cassette: reel.path.clone(),
                call,
                recorded: reel.interactions.len(),
            }
            .into());
        };
        let Some(found) = unused.find(|i| reel.interactions[*i].request == requested) else {
            let recorded = &reel.interactions[first].request;
            return Err(CassetteError::Drift {
                cassette: reel.path.clone(),
                call,
                path: first_difference(recorded, &requested).unwrap_or_default(),
                diff: diff(recorded, &requested),
            }
            .into());
        };
        served.used[found] = true;
        match &reel.interactions[found].outcome {
            Outcome::Response(answer) => {
                let meter = request.extensions().get::<UsageMeter>().cloned();
                Ok(response(answer, meter))
            }
            Outcome::Error(message) => Err(RecordedError(message.clone()).into()),
        }
    }
}

impl Service<ModelRequest> for ReplayModel {
    type Response = ModelResponse;
    type Error = BoxError;
    type Future = Ready<Result<ModelResponse, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: ModelRequest) -> Self::Future {
        ready(self.answer(&request))
    }
}

/// The response a recorded answer makes: a stream of its pieces (its error last, if it
/// failed), or, for an answer that came whole, the same message whole. Its usage goes to
/// `meter`, as the provider that answered put it in the request's [`UsageMeter`]: when
/// the piece is read, or at once for a whole answer.
pub(crate) fn response(answer: &Answer, meter: Option<UsageMeter>) -> ModelResponse {
    let record = move |usage: &Usage| {
        if let Some(meter) = &meter {
            meter.record(*usage);
        }
    };
    if answer.streamed || answer.end != End::Done {
        let deltas = (answer.pieces.clone().into_iter())
            .map(Piece::into_delta)
            .inspect(move |delta| {
                if let Ok(ModelDelta::Usage { usage, .. }) = delta {
                    record(usage);
                }
            });
        return ModelResponse::stream(stream::iter(deltas));
    }
    let mut message = MessageAccumulator::default();
    let mut metered = None;
    for piece in answer.pieces.iter().cloned() {
        match piece.into_delta() {
            Ok(ModelDelta::Usage { model, usage }) => {
                record(&usage);
                metered = Some((model, usage));
            }
            Ok(delta) => message.push(delta),
            Err(_) => {}
        }
    }
    let whole = ModelResponse::message(message.finish());
    match metered {
        Some((model, usage)) => whole.with_usage(model, usage),
        None => whole,
    }
}

impl Piece {
    fn into_delta(self) -> Result<ModelDelta, BoxError> {
        Ok(match self {
            Piece::Text { text } => ModelDelta::Text(text),
            Piece::Reasoning(reasoning) => ModelDelta::Reasoning(reasoning),
            Piece::ToolCall {
                index,
                id,
                name,
                arguments,
            } => ModelDelta::ToolCall {
                index,
                id,
                name,
                arguments,
            },
            Piece::Part { part } => ModelDelta::Part(part),
            Piece::Usage { model, usage } => ModelDelta::Usage { model, usage },
            Piece::Error { message } => return Err(RecordedError(message).into()),
        })
    }
}
