//! Recorded traffic: a model layer that records a real provider's requests and answers
//! to a cassette file, and a model that replays the file in tests, deterministically,
//! failing with a readable diff when a request drifts (feature `cassette`).
//!
//! - [`Cassette`] names the file and picks the mode: [`Mode::Record`] (call the live
//!   model and write each call), [`Mode::Replay`] (answer from the file; the live model
//!   is never called) or [`Mode::Auto`] (replay when the file exists, record when it does
//!   not). The mode is the program's if it sets one, else `ADK_CASSETTE_MODE`
//!   (`record`, `replay` or `auto`), else `auto`: delete the file, or run with
//!   `ADK_CASSETTE_MODE=record`, to record it again.
//! - [`CassetteLayer`] is a tower layer around any model ([`CassetteModel`]);
//!   [`ReplayModel`] replays without a live model at all.
//!
//! # What is recorded
//!
//! Each call, in the order the calls were made: the request in a canonical JSON form
//! (the messages with all their parts, the tools' names, descriptions and schemas, the
//! options that are set; not the run's extensions, which no provider sees), and the
//! answer's pieces in the order they came (text, reasoning with its opaque data byte for
//! byte, tool call pieces, parts, usage), how its stream ended (`done`, `error` with the
//! error as its last piece, or `dropped` by the caller), and whether it streamed at all.
//! A call that failed before answering keeps its error's message.
//!
//! The file is pretty JSON, made to be read and diffed in review. It is rewritten whole
//! after each call ends, through a temporary file renamed over it: a crash leaves the
//! previous version, never half a file. A recording starts empty: the calls of the last
//! recording are replaced by the first call that ends.
//!
//! # Secrets
//!
//! A [`Scrubber`] takes secrets out of everything written (the default: the values of the
//! usual API key variables and the patterns `sk-...`, `Bearer ...`, `AIza...`; add the
//! program's own). A provider's key travels in its HTTP headers, which are not recorded;
//! what the scrubber catches is a key that reached a message, a tool's output or an
//! error's text (some servers echo a rejected key back).
//!
//! # Replay
//!
//! See [`ReplayModel`] for how calls are matched. A recorded error comes back as a
//! [`RecordedError`] with the original's message; the original's type is not kept.
//!
//! # Differences from HTTP cassettes
//!
//! Recorders such as VCR or yakbak keep HTTP exchanges; a cassette here keeps model calls,
//! at the model seam, above the provider. So one cassette serves any provider's model and
//! every layer above it, a recorded request reads as the conversation it was, and the
//! check for drift is on what the agent asked rather than on bytes. What it does not do:
//! replay the provider's own HTTP and SSE parsing (the provider tests run real servers for
//! that), keep the timing of the pieces, or keep the type of an error.
//!
//! # Example
//!
//! ```
//! use tower::{Layer, ServiceExt};
//! use tower_adk::testing::cassette::{Cassette, CassetteError, Mode};
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use tower_adk::{Agent, AgentRequest};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let path = std::env::temp_dir().join(format!("cassette-doc-{}.json", std::process::id()));
//!
//! // Record: the live model (scripted here) answers, and the call is written.
//! let live = ScriptedModel::new([Turn::stream(["Hello", " there."])]);
//! let layer = Cassette::new(&path).mode(Mode::Record).layer()?;
//! let agent = Agent::builder(layer.layer(live)).build()?;
//! let recorded = agent.run(AgentRequest::user("hi")).await?;
//!
//! // Replay: the same answer from the file; the live model is never called.
//! let unused = ScriptedModel::new([]);
//! let layer = Cassette::new(&path).mode(Mode::Replay).layer()?;
//! let agent = Agent::builder(layer.layer(unused.clone())).build()?;
//!
//! // A request that drifted fails with a diff naming what changed.
//! let error = agent.run(AgentRequest::user("hello")).await.unwrap_err();
//! let drift = CassetteError::find(&error).unwrap();
//! assert!(drift.to_string().contains("first difference at `messages[0].content`"), "{drift}");
//!
//! let replayed = agent.run(AgentRequest::user("hi")).await?;
//! assert_eq!(replayed.final_message, recorded.final_message);
//! assert_eq!(unused.calls(), 0);
//! # std::fs::remove_file(&path)?;
//! # Ok::<_, tower_adk::BoxError>(())
//! # }).unwrap();
//! ```

mod canonical;
mod error;
mod file;
mod record;
mod replay;
mod scrub;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;
use tower::{BoxError, Layer, Service};

use self::canonical::canonical;
pub use self::error::{CassetteError, RecordedError};
use self::record::Recording;
pub use self::replay::ReplayModel;
pub use self::scrub::{KEY_VARIABLES, REDACTED, Scrubber};
use crate::model::{ModelRequest, ModelResponse};

/// The environment variable that picks the mode when the program does not.
pub const MODE_VARIABLE: &str = "ADK_CASSETTE_MODE";

/// Whether a cassette records or replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Mode {
    /// Call the live model and write every call to the file (replacing what it held).
    Record,
    /// Answer from the file; the live model is never called.
    Replay,
    /// Replay when the file exists, record when it does not.
    #[default]
    Auto,
}

impl Mode {
    /// The mode `ADK_CASSETTE_MODE` names (`record`, `replay` or `auto`, any case);
    /// `Auto` when it is unset or empty.
    ///
    /// # Errors
    ///
    /// [`CassetteError::Mode`] for any other value.
    pub fn from_env() -> Result<Mode, CassetteError> {
        let value = std::env::var(MODE_VARIABLE).unwrap_or_default();
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Mode::Auto),
            "record" => Ok(Mode::Record),
            "replay" => Ok(Mode::Replay),
            _ => Err(CassetteError::Mode(value)),
        }
    }
}

/// A cassette file and how to use it: the start of recording and replaying.
///
/// ```
/// use tower_adk::testing::cassette::{Cassette, Mode, Scrubber};
///
/// let cassette = Cassette::new("tests/cassettes/booking.json")
///     .mode(Mode::Auto)
///     .scrubber(Scrubber::default().variable("BOOKING_API_TOKEN"));
/// # let _ = cassette;
/// ```
#[derive(Debug, Clone)]
pub struct Cassette {
    path: PathBuf,
    mode: Option<Mode>,
    scrubber: Scrubber,
}

impl Cassette {
    /// The cassette at `path`, in the mode `ADK_CASSETTE_MODE` names (default `auto`),
    /// with the default [`Scrubber`].
    pub fn new(path: impl AsRef<Path>) -> Self {
        Cassette {
            path: path.as_ref().to_owned(),
            mode: None,
            scrubber: Scrubber::default(),
        }
    }

    /// Uses this mode, whatever `ADK_CASSETTE_MODE` says.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Scrubs with this scrubber (when writing, and each request before it is matched).
    pub fn scrubber(mut self, scrubber: Scrubber) -> Self {
        self.scrubber = scrubber;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The mode this cassette will run in: the program's, else the environment's, with
    /// `Auto` resolved by whether the file exists.
    ///
    /// # Errors
    ///
    /// [`CassetteError::Mode`] if `ADK_CASSETTE_MODE` is not a mode.
    pub fn resolved_mode(&self) -> Result<Mode, CassetteError> {
        let mode = match self.mode {
            Some(mode) => mode,
            None => Mode::from_env()?,
        };
        Ok(match mode {
            Mode::Auto if self.path.exists() => Mode::Replay,
            Mode::Auto => Mode::Record,
            mode => mode,
        })
    }

    /// The layer: it reads the file now when it replays.
    ///
    /// # Errors
    ///
    /// [`CassetteError::Mode`] for a bad `ADK_CASSETTE_MODE`; when replaying, the errors
    /// of [`ReplayModel::open`].
    pub fn layer(self) -> Result<CassetteLayer, CassetteError> {
        let tape = match self.resolved_mode()? {
            Mode::Replay => Tape::Replay(ReplayModel::load(self.path, self.scrubber)?),
            _ => Tape::Record(Arc::new(Recording::new(self.path, self.scrubber))),
        };
        Ok(CassetteLayer { tape })
    }

    /// A model that replays the file, whatever the mode.
    ///
    /// # Errors
    ///
    /// Those of [`ReplayModel::open`].
    pub fn replay(self) -> Result<ReplayModel, CassetteError> {
        ReplayModel::load(self.path, self.scrubber)
    }
}

/// A tower layer that records the calls of the model it wraps, or replays them, as its
/// [`Cassette`] says. Clones (and every model it wraps) share one recording or one replay.
#[derive(Debug, Clone)]
pub struct CassetteLayer {
    tape: Tape,
}

#[derive(Debug, Clone)]
enum Tape {
    Record(Arc<Recording>),
    Replay(ReplayModel),
}

impl CassetteLayer {
    /// Whether it replays (the live model is never called).
    pub fn is_replaying(&self) -> bool {
        matches!(self.tape, Tape::Replay(_))
    }
}

impl<S> Layer<S> for CassetteLayer {
    type Service = CassetteModel<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CassetteModel {
            inner,
            tape: self.tape.clone(),
        }
    }
}

/// A model that records the calls of the live model it wraps, or replays them without
/// calling it (see [`CassetteLayer`] and the [module docs](self)).
#[derive(Clone)]
pub struct CassetteModel<S> {
    inner: S,
    tape: Tape,
}

impl<S> CassetteModel<S> {
    /// Whether it replays (the live model is never called).
    pub fn is_replaying(&self) -> bool {
        matches!(self.tape, Tape::Replay(_))
    }

    /// The live model.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The live model, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The live model.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> Service<ModelRequest> for CassetteModel<S>
where
    S: Service<ModelRequest, Response = ModelResponse> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = ModelResponse;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ModelResponse, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        match &self.tape {
            Tape::Record(_) => self.inner.poll_ready(cx).map_err(Into::into),
            Tape::Replay(_) => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, request: ModelRequest) -> Self::Future {
        let recording = match &mut self.tape {
            Tape::Replay(replay) => return replay.call(request).boxed(),
            Tape::Record(recording) => Arc::clone(recording),
        };
        let canonical = canonical(&request);
        // The service made ready answers this call; a clone takes its place.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let slot = recording.start();
        let call = ready.call(request);
        async move {
            let canonical = canonical?;
            let answer = match call.await {
                Ok(answer) => answer,
                Err(error) => {
                    let error: BoxError = error.into();
                    recording.failed(slot, canonical, &error)?;
                    return Err(error);
                }
            };
            recording.answered(slot, canonical, answer).await
        }
        .boxed()
    }
}

impl<S: fmt::Debug> fmt::Debug for CassetteModel<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CassetteModel")
            .field("inner", &self.inner)
            .field("replaying", &self.is_replaying())
            .finish()
    }
}
