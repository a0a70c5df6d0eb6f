//! The agent's second face: a service whose response is the run's final result.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tower::{Layer, Service};

use super::{AgentRequest, AgentResult, AgentRun, RunResult};
use crate::agent::error::AgentError;

/// An agent as a `Service` whose response is the run's final [`AgentResult`]: its future
/// completes when the run ends, so the tower layers around it bound whole runs.
///
/// An [`Agent`](super::Agent) answers a request at once with the run (an [`AgentRun`],
/// which does its work as the caller polls it). That is the face to stream events from,
/// but a layer around it sees only the start of each run: a `ConcurrencyLimit` would let
/// any number of runs go on, a `Timeout` would never fire. Around `AwaitRun`, the same
/// layers bound whole runs, from the request to the final result:
///
/// | face | response | use it to | a stock layer around it bounds |
/// |------|----------|-----------|--------------------------------|
/// | [`Agent`](super::Agent) | [`AgentRun`] | read the events as they come (stream text to a UI) | the start of a run only |
/// | `AwaitRun<Agent>` | [`AgentResult`] | call an agent for its answer (a job, a backend call) | the whole run |
///
/// (To bound a run that is read as a stream, use
/// [`AgentBuilder::run_timeout`](super::AgentBuilder::run_timeout), or a limit held by
/// the task that reads it.)
///
/// `AwaitRun` wraps anything that answers an [`AgentRequest`] with an [`AgentRun`]: the
/// agent, or the agent inside [`HandlerLayer`](crate::HandlerLayer)s. It awaits the run
/// with [`AgentRun::result`], so no events are built.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower::{ServiceBuilder, ServiceExt};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::{Agent, AgentRequest, AwaitRunLayer};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::per_run([Turn::text("Hello!")])).build()?;
///
/// // At most 8 runs at a time, each done within a minute.
/// let service = ServiceBuilder::new()
///     .concurrency_limit(8)
///     .timeout(Duration::from_secs(60))
///     .layer(AwaitRunLayer)
///     .service(agent);
///
/// let result = service.oneshot(AgentRequest::user("hi")).await?;
/// assert_eq!(result.final_message.content(), "Hello!");
/// # Ok::<_, tower::BoxError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct AwaitRun<S> {
    inner: S,
}

impl<S> AwaitRun<S> {
    /// Wraps a service that answers with runs.
    pub fn new(inner: S) -> Self {
        AwaitRun { inner }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Consumes this service, returning the inner one.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> Service<AgentRequest> for AwaitRun<S>
where
    S: Service<AgentRequest, Response = AgentRun>,
    S::Error: Into<AgentError>,
{
    type Response = AgentResult;
    type Error = AgentError;
    type Future = AwaitRunFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), AgentError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: AgentRequest) -> Self::Future {
        AwaitRunFuture {
            state: State::Starting {
                start: self.inner.call(request),
            },
        }
    }
}

/// A [`tower::Layer`] that makes an agent an [`AwaitRun`].
#[derive(Debug, Clone, Copy, Default)]
pub struct AwaitRunLayer;

impl<S> Layer<S> for AwaitRunLayer {
    type Service = AwaitRun<S>;

    fn layer(&self, inner: S) -> AwaitRun<S> {
        AwaitRun::new(inner)
    }
}

pin_project! {
    /// The future of [`AwaitRun`]: starts the run, then drives it to its result.
    #[must_use = "futures do nothing unless polled"]
    #[derive(Debug)]
    pub struct AwaitRunFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    #[project = StateProj]
    #[derive(Debug)]
    enum State<F> {
        Starting { #[pin] start: F },
        Running { result: RunResult },
    }
}

impl<F, E> Future for AwaitRunFuture<F>
where
    F: Future<Output = Result<AgentRun, E>>,
    E: Into<AgentError>,
{
    type Output = Result<AgentResult, AgentError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Starting { start } => {
                    let run = ready!(start.poll(cx)).map_err(Into::into)?;
                    state.set(State::Running {
                        result: run.result(),
                    });
                }
                StateProj::Running { result } => return Pin::new(result).poll(cx),
            }
        }
    }
}
