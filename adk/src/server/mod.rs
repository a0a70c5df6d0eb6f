//! Agents served over HTTP (feature `server`): an axum [`Router`] for one or more named
//! agents, which stock tower-http layers wrap and any axum app mounts.
//!
//! # Routes
//!
//! | route | what |
//! |---|---|
//! | `GET /agents` | `{"v": 1, "agents": [{"name", "description", "tools": [...]}]}`: the tools each agent's model would see in this caller's runs (its `before_agent` hooks run for the caller's identity, without a model call: a role filter shows here); an agent whose hooks would fail or interrupt for the caller has `"error": {"code", "message"}` (`interrupted` for an interrupt) instead of `tools` |
//! | `POST /agents/{name}/runs` | starts a run (body below): with `Accept: text/event-stream` its events stream as SSE, else the answer is its last event (`completed`) as JSON; 429 `too_many_runs` past the caller's [runs in flight](Limits::runs_per_principal) |
//! | `GET /agents/{name}/runs/{run_id}/events` | a streamed run's events after `Last-Event-ID`, then live until it ends (the caller's own runs only) |
//! | `GET /agents/{name}/threads` | the caller's threads, the most recently written first: `{"v": 1, "threads": [{"thread", "version", "written"}], "next"}`; `?limit=N` (at most 100) and `?after=` a page's `next` |
//! | `GET /agents/{name}/threads/{thread}` | where the thread stands: `{"v": 1, "thread", "checkpoint", "status", "messages", "interrupts", "owner", "audit"}` ([`WireThread`](crate::wire::WireThread)) |
//! | `DELETE /agents/{name}/threads/{thread}` | deletes the thread: 204, or 404 (a `{thread}` past the [bounds](crate::agent::check_thread) of a thread's name: 400 `invalid_thread`, here and in `GET`) |
//! | `GET /` | a chat page for the agents, when [`Server::page`] turns it on |
//! | `GET /metrics` | the process's metrics in Prometheus's text format, when `Server::metrics` turns it on (feature `prometheus`; see `PrometheusMetrics`) |
//! | `GET /healthz`, `GET /readyz` | the process answers; the server takes runs ([`Readiness`]; 503 `shutting_down` once it drains: [`Shutdown`]) |
//! | `POST /agents/{name}/agui` | a run driven by an AG-UI front end: `RunAgentInput` in, AG-UI events out ([`agui`]) |
//! | `GET /v1/models`, `POST /v1/chat/completions` | the agents as models of an OpenAI-compatible API ([`openai`]) |
//! | `GET /agents/{name}/.well-known/agent-card.json`, `POST /agents/{name}/a2a` | the agent over A2A, when [`Server::a2a`] turns it on (feature `a2a`; see `a2a`) |
//!
//! A run's body is `{"input": "text"}` or `{"messages": [...]}` (each a
//! [`Message`](crate::Message), tagged by `role`), with an optional `"thread"`; or, to
//! resume an interrupted run, `{"resume": {"checkpoint": "ID", "decisions": {"INTERRUPT
//! ID": {"type": "approve"}}}}` (see [`Decision`](crate::interrupt::Decision)). It is
//! read as JSON whatever its content type (JSON, text, a form as `curl -d` sends, or
//! none; others are refused: see [`Limits`](Limits#bodies)). `messages` may not be
//! empty, and a `thread` is 1 to 256 bytes without control characters
//! ([`check_thread`](crate::agent::check_thread)).
//!
//! Events and results are in the [`wire`](crate::wire) form. A streamed event is
//! `event:` its type, `id:` its number in the run (from 1), `data:` its JSON; the first
//! is `run_started` with the run's id, which the `adk-run-id` header gives too; a
//! resume's decisions follow it as `decided` events, each naming who decided (the
//! resumer's subject). Each streamed event's JSON also carries `at_ms`, when it was sent
//! (see [the wire form's times](crate::wire#times)): the page draws a run's timeline
//! from them.
//!
//! # Identity and ownership
//!
//! Before anything else (except health, readiness, the page, and the metrics unless
//! `PrometheusMetrics::require_identity` says otherwise), the server's
//! [`Identify`] turns the request into the caller's [`Identity`](crate::auth::Identity):
//! its [`Principal`](crate::auth::Principal) and typed values for the extensions of its
//! runs, so role filters, policies and approvals see the caller ([`BearerTokens`] maps
//! each token to a principal of its own and a typed role). A request it refuses gets 401
//! and starts nothing.
//!
//! A thread belongs to the principal whose run created it, and every route that touches
//! a thread or a checkpoint (a run on a thread, a resume, AG-UI's, reading, listing and
//! deleting threads, replaying a streamed run) asks the agent's
//! [`Authorize`](crate::auth::Authorize) (the default: its owner only). A caller it
//! refuses gets 404 (`unknown_thread`, `checkpoint_unknown`, `unknown_run`), as for
//! something that does not exist, and nothing runs or is written. A manager who may
//! [decide](crate::auth::Action::Decide) on a clerk's pending calls resumes the clerk's
//! checkpoint: the run goes on as the clerk's (with the clerk's role, when the agent
//! [keeps](crate::agent::AgentBuilder::keep_identity) it), and the thread's `audit`
//! records who decided what, and when. See [`auth`](crate::auth).
//!
//! # Limits
//!
//! [`Server::limits`] bounds what each caller may ask ([`Limits`]): runs in flight and
//! requests per period for each principal (off by default; past them 429
//! `too_many_runs` or `rate_limited`, with `Retry-After`), the size of a body (2 MiB: 413
//! `body_too_large`) and how long it may take to arrive (30 s: 408 `body_timeout`).
//! [`Server::serve`] serves the router with a deadline for each request's headers too
//! (30 s), which `axum::serve` does not set.
//!
//! # Errors
//!
//! Every error is `{"error": {"code": "...", "message": "..."}}` with a stable code and
//! a fitting status: see [`ApiError`]; so are those of axum's own (an unknown route, a
//! wrong method, a path segment or a query that does not read, a body too large) on
//! every path. A streamed run that fails after its first event ends with an `error`
//! event instead (the status is sent by then); one refused at its start (busy thread,
//! used checkpoint, decisions that do not fit, the caller's runs at their limit) gets
//! its status, because the response starts only with the run's first event. Bytes that
//! are not HTTP at all (a request line or header hyper cannot parse) get hyper's bare
//! 400, before the router sees them.
//!
//! # Disconnects and reconnects
//!
//! The response drives the run, in the connection's task: a client that goes away drops
//! it, which cancels the model and tool calls in flight and frees its thread. Its events
//! are logged as they are sent, within [`ReplayLimits`]: a client that reconnects to
//! `GET .../runs/{run_id}/events` with `Last-Event-ID` gets those it missed and, while
//! the run still streams to its first connection, the next ones live. A run whose first
//! client went away ends in the log with an `error` event, code `cancelled`. The log is
//! in memory, per process, and each run in it is its caller's: another principal asking
//! for it gets 404 `unknown_run`.
//!
//! # Graceful shutdown
//!
//! [`Server::shutdown_handle`] gives a [`Shutdown`]: its `drain(deadline)` refuses new
//! runs (503 `shutting_down`, `/readyz` too), lets the runs in flight finish within the
//! deadline and cancels the rest, a run that held a thread leaving a checkpoint to
//! resume; its `signal()` is what axum's `with_graceful_shutdown` waits for.
//!
//! # Example
//!
//! ```
//! use tower_adk::Agent;
//! use tower_adk::server::{BearerTokens, Limits, ServedAgent, Server};
//! use tower_adk::testing::{ScriptedModel, Turn};
//!
//! #[derive(Clone)]
//! struct Role(&'static str);
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let agent = Agent::builder(ScriptedModel::per_run([Turn::text("Hello!")])).build()?;
//! let server = Server::new()
//!     .agent("support", ServedAgent::new(agent).description("Answers customers"))
//!     .identify(BearerTokens::new().token("t0ken", Role("admin")))
//!     .limits(Limits::default().runs_per_principal(4));
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! println!("listening on http://{}", listener.local_addr()?);
//! // server.serve(listener).await?; // serves it until the server is drained
//! # let _ = (listener, server);
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

#[cfg(feature = "a2a")]
pub mod a2a;
mod agents;
pub mod agui;
mod body;
mod chat;
mod error;
mod extract;
#[doc(hidden)]
pub mod fuzzing;
mod identity;
mod limit;
mod log;
#[cfg(feature = "prometheus")]
mod metrics;
pub mod openai;
mod page;
mod router;
mod runs;
mod serve;
mod served_run;
mod shown;
mod shutdown;
mod sse;
mod state;
mod streamed_run;
mod threads;
#[cfg(feature = "otel")]
mod trace;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceExt};

pub use self::error::ApiError;
pub use self::identity::{Anonymous, BearerTokens, Identify, Rejection};
pub use self::limit::{Limits, Rate};
use self::limit::{PrincipalRate, RunSlots};
pub use self::log::ReplayLimits;
use self::log::RunLogs;
#[cfg(feature = "prometheus")]
pub use self::metrics::{MetricsError, PrometheusMetrics};
pub use self::shutdown::{Drained, Readiness, Shutdown};
use self::state::{AppState, Shared};
use crate::agent::Agent;
use crate::agent::AgentError;
use crate::agent::AgentRequest;
use crate::agent::AgentRun;

/// The header that gives a streamed run's id (the `run_id` of its `run_started` event).
pub const RUN_ID_HEADER: &str = "adk-run-id";

/// Builds the [`Router`] that serves agents; see the [module docs](self).
pub struct Server {
    agents: BTreeMap<String, ServedAgent>,
    identify: Arc<dyn identity::DynIdentify>,
    replay: ReplayLimits,
    limits: Limits,
    shutdown: Shutdown,
    page: bool,
    #[cfg(feature = "prometheus")]
    metrics: Option<PrometheusMetrics>,
    #[cfg(feature = "a2a")]
    a2a: Option<a2a::A2a>,
}

impl Server {
    /// A server with no agents, which lets everyone in ([`Anonymous`]).
    pub fn new() -> Self {
        Server {
            agents: BTreeMap::new(),
            identify: Arc::new(Anonymous),
            replay: ReplayLimits::default(),
            limits: Limits::default(),
            shutdown: Shutdown::new(Readiness::new()),
            page: false,
            #[cfg(feature = "prometheus")]
            metrics: None,
            #[cfg(feature = "a2a")]
            a2a: None,
        }
    }

    /// Serves `agent` under `/agents/{name}` (a later agent of the same name replaces
    /// it).
    pub fn agent(mut self, name: impl Into<String>, agent: impl Into<ServedAgent>) -> Self {
        self.agents.insert(name.into(), agent.into());
        self
    }

    /// How callers are identified (default: [`Anonymous`]).
    pub fn identify(mut self, identify: impl Identify) -> Self {
        self.identify = Arc::new(identify);
        self
    }

    /// How much of the streamed runs is kept for clients that reconnect.
    pub fn replay(mut self, limits: ReplayLimits) -> Self {
        self.replay = limits;
        self
    }

    /// What one caller may ask, and what a request may be: runs in flight and requests
    /// per period for each principal (default: no limit), a body's size and how long it
    /// and the headers may take to arrive. See [`Limits`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Whether `GET /` serves a chat page for the agents (default: no).
    ///
    /// The page is one self-contained HTML file built into the binary (nothing loaded
    /// from elsewhere, so it works offline). It asks for a bearer token, or takes one
    /// from the URL's fragment (`/#token=...`, which browsers never send to the server);
    /// lists the agents of `GET /agents`; and chats with the one picked, on a thread of
    /// its own across turns, showing the text and tool chunks of each streamed run as
    /// they arrive. A call that waits for approval gets Approve and Reject buttons, which
    /// resume the run with the decision.
    ///
    /// The page itself carries no data, so it is served without identity; the API calls
    /// it makes go through [`Identify`] like any other. Its `Content-Security-Policy`
    /// lets it talk to its own origin only. It calls the API relative to its own
    /// address, so it works in a nested router too when opened with a trailing `/`.
    ///
    /// ```
    /// use tower_adk::server::Server;
    ///
    /// let router = Server::new().page(true).into_router();
    /// # let _ = router;
    /// ```
    pub fn page(mut self, serve: bool) -> Self {
        self.page = serve;
        self
    }

    /// Serves `GET /metrics` (feature `prometheus`): the process's metrics in
    /// Prometheus's text format, open unless [`PrometheusMetrics::require_identity`]
    /// says otherwise (default: no route).
    ///
    /// ```
    /// use tower_adk::server::{PrometheusMetrics, Server};
    ///
    /// # fn main() -> Result<(), tower_adk::server::MetricsError> {
    /// let router = Server::new().metrics(PrometheusMetrics::install()?).into_router();
    /// # let _ = router;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "prometheus")]
    pub fn metrics(mut self, metrics: PrometheusMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Serves the agents over A2A (feature `a2a`): each agent's card and JSON-RPC
    /// endpoint, and a root agent's if [`A2a::root`](a2a::A2a::root) names one (default:
    /// no A2A routes). See [`a2a`].
    ///
    /// ```
    /// use tower_adk::server::Server;
    /// use tower_adk::server::a2a::A2a;
    ///
    /// let router = Server::new().a2a(A2a::new()).into_router();
    /// # let _ = router;
    /// ```
    #[cfg(feature = "a2a")]
    pub fn a2a(mut self, a2a: a2a::A2a) -> Self {
        self.a2a = Some(a2a);
        self
    }

    /// What `GET /readyz` answers; set it to not ready to drain the process.
    pub fn readiness(&self) -> Readiness {
        self.shutdown.readiness().clone()
    }

    /// The handle that drains the server when it shuts down gracefully (see
    /// [`Shutdown`]).
    pub fn shutdown_handle(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// The router, to serve ([`Server::serve`], or `axum::serve`), wrap in layers or
    /// nest in an app.
    pub fn into_router(self) -> Router {
        let limits = self.limits;
        let rate = limits.requests_per_principal.and_then(PrincipalRate::new);
        router::routes(AppState::new(Shared {
            agents: self.agents,
            identify: self.identify,
            logs: RunLogs::new(self.replay),
            shutdown: self.shutdown,
            created: openai::unix_now(),
            page: self.page,
            limits,
            rate: rate.map(Arc::new),
            runs: limits.runs_per_principal.map(RunSlots::new),
            #[cfg(feature = "prometheus")]
            metrics: self.metrics,
            #[cfg(feature = "a2a")]
            a2a: self.a2a.map(a2a::face::Face::new),
        }))
    }

    /// Serves the router on `listener` until the server's [`Shutdown`] is
    /// [drained](Shutdown::drain) (then it stops taking connections, and returns once
    /// those open have closed), with the [`Limits::header_timeout`] that
    /// `axum::serve` cannot set.
    ///
    /// It is hyper's HTTP/1.1 server, as `axum::serve` runs it (without upgrades: no
    /// route of the server takes one), given a timer so that hyper bounds how long a request's headers take: a client that
    /// trickles them, or holds a kept-alive connection idle, is disconnected after the
    /// timeout. Connections are accepted with `TCP_NODELAY`, so that streamed events go
    /// out as they are written. An error accepting a connection (too many open files,
    /// say) is waited out a second, as `axum::serve` does.
    ///
    /// # Errors
    ///
    /// None so far: the result leaves room for a listener that fails for good.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    /// use tower_adk::server::{Limits, Server};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let server = Server::new().limits(Limits::default().header_timeout(Duration::from_secs(10)));
    /// let shutdown = server.shutdown_handle();
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let serving = tokio::spawn(server.serve(listener));
    ///
    /// // On Ctrl-C (`tokio::signal::ctrl_c().await`) or SIGTERM, say:
    /// shutdown.drain(Duration::from_secs(30)).await;
    /// serving.await??;
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let header_timeout = self.limits.header_timeout;
        let stop = self.shutdown.signal();
        serve::serve(listener, self.into_router(), header_timeout, stop).await
    }
}

impl Default for Server {
    fn default() -> Self {
        Server::new()
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .field("replay", &self.replay)
            .field("limits", &self.limits)
            .field("page", &self.page)
            .finish_non_exhaustive()
    }
}

/// An agent as served: the agent, the layers around it for served runs, and what
/// `GET /agents` says about it.
///
/// Threads are read and deleted through the agent itself; runs go through its layers
/// (a [`HandlerLayer`](crate::HandlerLayer) that filters tools by role, say), outermost
/// added last, as with `ServiceBuilder`'s `layer` read bottom up.
///
/// ```
/// use tower_adk::{Agent, HandlerLayer};
/// use tower_adk::server::ServedAgent;
/// use tower_adk::testing::ScriptedModel;
///
/// #[derive(Clone)]
/// struct Admin;
///
/// let agent = Agent::builder(ScriptedModel::default()).build()?;
/// let admins_only = tower_adk::handlers::filter_tools(|ext, tool| {
///     tool.name() != "refund" || ext.get::<Admin>().is_some()
/// });
/// let served = ServedAgent::new(agent)
///     .description("Answers billing questions")
///     .layer(HandlerLayer::new(admins_only));
/// # let _ = served;
/// # Ok::<_, tower_adk::BuildError>(())
/// ```
#[derive(Clone)]
pub struct ServedAgent {
    agent: Agent,
    service: AgentService,
    /// The same layers around a service that gives the request back as they left it,
    /// for the listing: see [`ServedAgent::config_for`].
    probe: AgentService,
    description: String,
}

/// The agent with its layers, erased once.
type AgentService = BoxCloneSyncService<AgentRequest, AgentRun, BoxError>;

impl ServedAgent {
    /// Serves `agent`, with no layers and no description.
    pub fn new(agent: Agent) -> Self {
        let service = AgentService::new(agent.clone().map_err(BoxError::from));
        ServedAgent {
            agent,
            service,
            probe: AgentService::new(tower::service_fn(agents::probed)),
            description: String::new(),
        }
    }

    /// What the agent does, for the listing.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Wraps the served runs in `layer`: any tower layer whose service still answers
    /// with the [`AgentRun`], such as a [`HandlerLayer`](crate::HandlerLayer) or a
    /// `ConcurrencyLimitLayer`.
    ///
    /// `GET /agents` lists the tools a caller's runs would give the model by sending a
    /// request with the caller's identity through a second stack of the same layers
    /// (made with a second `layer.layer(..)`, so it shares no limit that a layer makes
    /// per service), then running its `before_agent` hooks without a model call.
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<AgentService>,
        L::Service: Service<AgentRequest, Response = AgentRun> + Clone + Send + Sync + 'static,
        <L::Service as Service<AgentRequest>>::Error: Into<BoxError>,
        <L::Service as Service<AgentRequest>>::Future: Send + 'static,
    {
        let probe = layer.layer(self.probe).map_err(Into::into);
        self.probe = AgentService::new(probe);
        let layered = layer.layer(self.service).map_err(Into::into);
        self.service = AgentService::new(layered);
        self
    }

    /// The agent, without its layers.
    #[cfg(feature = "mcp-server")]
    pub(crate) fn agent(&self) -> &Agent {
        &self.agent
    }

    /// What the agent does, as the listing says.
    #[cfg(feature = "mcp-server")]
    pub(crate) fn about(&self) -> &str {
        &self.description
    }

    /// Starts a run through the layers. Dispatching per request, it calls a clone of the
    /// service with `oneshot`, which waits for the clone to be ready.
    pub(crate) async fn call(&self, request: AgentRequest) -> Result<AgentRun, ApiError> {
        let started = self.service.clone().oneshot(request).await;
        started.map_err(|error| match error.downcast::<AgentError>() {
            Ok(error) => ApiError::from(&*error),
            Err(error) => {
                let status = StatusCode::SERVICE_UNAVAILABLE;
                ApiError::new(status, "service_failed", error.to_string())
            }
        })
    }
}

impl From<Agent> for ServedAgent {
    fn from(agent: Agent) -> Self {
        ServedAgent::new(agent)
    }
}

impl fmt::Debug for ServedAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServedAgent")
            .field("agent", &self.agent)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}
