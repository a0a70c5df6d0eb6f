//! [`TypedAgent`]: an agent as a service whose response holds its typed final answer.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use serde::de::DeserializeOwned;
use tower::Service;

use super::check::OutputCheck;
use super::error::OutputError;
use super::spec::strip_fence;
use super::{InvalidOutput, Problem};
use crate::agent::Agent;
use crate::agent::AgentError;
use crate::agent::AgentRequest;
use crate::agent::AgentResult;
use crate::agent::AgentRun;
use crate::agent::RunStatus;
use crate::agent::{AwaitRun, AwaitRunFuture};
use crate::handler::BoxHandler;

/// A typed final answer, and the run that gave it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TypedResult<T> {
    /// The answer.
    pub output: T,
    /// The run's result: its history, tool records, model calls. Its final message is
    /// the answer as JSON text.
    pub result: AgentResult,
}

/// An agent whose runs end with a value of type `T`: a `tower::Service<AgentRequest>`
/// whose response is a [`TypedResult<T>`], available when the run ends. Built with
/// [`AgentBuilder::output`](crate::AgentBuilder::output); see the [module docs](super).
///
/// Like [`AwaitRun`], its future completes when the run ends, so the tower layers around
/// it bound whole runs. To read the events as they come, start the run with
/// [`TypedAgent::run`] and read the answer from its result with [`TypedAgent::parse`].
///
/// `S` is the agent service inside: the [`Agent`], or the agent inside
/// [`HandlerLayer`](crate::HandlerLayer)s (see [`TypedAgent::map_inner`]).
///
/// # Example
///
/// The events as they come, then the answer:
///
/// ```
/// use futures::StreamExt;
/// use serde_json::json;
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::{Agent, AgentEvent, AgentRequest, TypedAgent};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct City { name: String }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([Turn::call("c1", "final_answer", json!({"name": "Oslo"}))]);
/// let agent = Agent::builder(model).output::<City>().build()?;
///
/// let mut run = agent.run(AgentRequest::user("Capital of Norway?"));
/// while let Some(event) = run.next().await {
///     if let AgentEvent::Completed(result) = event? {
///         let answer = TypedAgent::<City>::parse(*result)?;
///         assert_eq!(answer.output.name, "Oslo");
///     }
/// }
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct TypedAgent<T, S = Agent> {
    inner: AwaitRun<S>,
    check: BoxHandler,
    _output: PhantomData<fn() -> T>,
}

impl<T, S: Clone> Clone for TypedAgent<T, S> {
    fn clone(&self) -> Self {
        TypedAgent {
            inner: self.inner.clone(),
            check: self.check.clone(),
            _output: PhantomData,
        }
    }
}

impl<T, S: fmt::Debug> fmt::Debug for TypedAgent<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedAgent")
            .field("inner", self.inner.get_ref())
            .field("output", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<T: DeserializeOwned> TypedAgent<T> {
    pub(crate) fn new(agent: Agent, check: OutputCheck) -> Self {
        TypedAgent {
            inner: AwaitRun::new(agent),
            check: BoxHandler::new(check),
            _output: PhantomData,
        }
    }

    /// Starts a run, to read its events; its final result holds the answer as JSON text
    /// (read it with [`TypedAgent::parse`]).
    pub fn run(&self, request: AgentRequest) -> AgentRun {
        self.inner.get_ref().run(self.prepare(request))
    }
}

impl<T: DeserializeOwned, S> TypedAgent<T, S> {
    /// The request with the check of the answer among its handlers (innermost), as the
    /// service sends it to the agent inside.
    pub fn prepare(&self, request: AgentRequest) -> AgentRequest {
        request.with_handler(self.check.clone())
    }

    /// The typed answer of a run's result.
    ///
    /// # Errors
    ///
    /// [`OutputError::NoAnswer`] for a run that did not complete (interrupted,
    /// degraded), [`OutputError::Invalid`] for a final message that is not a `T` (a
    /// handler changed it after the check).
    pub fn parse(result: AgentResult) -> Result<TypedResult<T>, OutputError> {
        if result.status != RunStatus::Completed {
            return Err(OutputError::no_answer(result));
        }
        let text = strip_fence(result.final_message.content());
        match serde_json::from_str(text) {
            Ok(output) => Ok(TypedResult { output, result }),
            Err(e) => Err(OutputError::Invalid(InvalidOutput {
                attempts: 1,
                problems: vec![Problem::new("/", e.to_string())],
            })),
        }
    }

    /// The agent service inside.
    pub fn get_ref(&self) -> &S {
        self.inner.get_ref()
    }

    /// Wraps the agent service inside, e.g. in a [`HandlerLayer`](crate::HandlerLayer):
    ///
    /// ```
    /// use tower::Layer;
    /// use tower_adk::testing::{ScriptedModel, Turn};
    /// use tower_adk::{Agent, HandlerLayer};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Answer { text: String }
    ///
    /// let typed = Agent::builder(ScriptedModel::new([Turn::text("")]))
    ///     .output::<Answer>()
    ///     .build()?
    ///     .map_inner(|agent| HandlerLayer::new(tower_adk::handlers::instruction("Be brief.")).layer(agent));
    /// # let _ = typed;
    /// # Ok::<_, tower_adk::BuildError>(())
    /// ```
    pub fn map_inner<S2>(self, f: impl FnOnce(S) -> S2) -> TypedAgent<T, S2> {
        TypedAgent {
            inner: AwaitRun::new(f(self.inner.into_inner())),
            check: self.check,
            _output: PhantomData,
        }
    }
}

impl<T, S> Service<AgentRequest> for TypedAgent<T, S>
where
    T: DeserializeOwned,
    S: Service<AgentRequest, Response = AgentRun>,
    S::Error: Into<AgentError>,
{
    type Response = TypedResult<T>;
    type Error = OutputError;
    type Future = TypedFuture<S::Future, T>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), OutputError>> {
        self.inner.poll_ready(cx).map_err(OutputError::Run)
    }

    fn call(&mut self, request: AgentRequest) -> Self::Future {
        let request = self.prepare(request);
        TypedFuture {
            run: self.inner.call(request),
            _output: PhantomData,
        }
    }
}

pin_project! {
    /// The future of [`TypedAgent`]: the run, then its answer.
    #[must_use = "futures do nothing unless polled"]
    pub struct TypedFuture<F, T> {
        #[pin]
        run: AwaitRunFuture<F>,
        _output: PhantomData<fn() -> T>,
    }
}

impl<F: fmt::Debug, T> fmt::Debug for TypedFuture<F, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedFuture")
            .field("run", &self.run)
            .finish()
    }
}

impl<F, E, T> Future for TypedFuture<F, T>
where
    F: Future<Output = Result<AgentRun, E>>,
    E: Into<AgentError>,
    T: DeserializeOwned,
{
    type Output = Result<TypedResult<T>, OutputError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let result = ready!(self.project().run.poll(cx)).map_err(OutputError::from_run)?;
        Poll::Ready(TypedAgent::<T, ()>::parse(result))
    }
}
