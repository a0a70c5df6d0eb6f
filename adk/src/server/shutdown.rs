//! [`Shutdown`]: a served router's graceful shutdown. The server stops taking runs, the
//! runs in flight get a deadline to finish, and the rest are cancelled, each that held a
//! thread leaving a checkpoint that a resume takes it over from. [`Readiness`]: what
//! `GET /readyz` answers meanwhile.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tokio_util::task::TaskTracker;
use tokio_util::task::task_tracker::TaskTrackerToken;

use super::error::ApiError;

/// How long [`Shutdown::drain`] waits after its deadline for the runs it cancelled to
/// write their checkpoints and end.
const CUT_GRACE: Duration = Duration::from_secs(5);

/// The graceful shutdown of a served router ([`Server::shutdown_handle`]); clones share
/// it.
///
/// [`drain`](Shutdown::drain) starts it: `GET /readyz` answers 503 `shutting_down`,
/// and every new run (a resume too, on any route) is refused with 503 `shutting_down`,
/// while the other routes still answer. The runs in flight get `deadline` to finish and
/// reach their clients as usual. Then the rest are cancelled ([`AgentRun::cancel`]):
/// each ends with an `error` event (AG-UI: `RUN_ERROR`; a run awaited as JSON: 503),
/// code `cancelled`, whose `checkpoint`, for a run that held a thread (a durable run,
/// or one on a thread), names the checkpoint it left, marked failed: resuming it takes
/// the run over, in this process or in one that shares the agent's store.
///
/// [`signal`](Shutdown::signal) resolves once the drain is over, to hand to axum's
/// `with_graceful_shutdown`: the listener takes connections (and refuses runs) until
/// then, so that a load balancer sees the 503s rather than refused connections, and
/// then axum closes the idle ones and returns.
///
/// A run whose client stopped reading is not polled (the response drives the run), so
/// it notices the cut only when its connection goes; `drain` waits 5 s for such runs
/// and counts them as [`unfinished`](Drained::unfinished). A durable one keeps the
/// checkpoint of its last turn, which a resume takes over too.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower_adk::Agent;
/// use tower_adk::server::Server;
/// use tower_adk::testing::{ScriptedModel, Turn};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::per_run([Turn::text("Hello!")])).build()?;
/// let server = Server::new().agent("greeter", agent);
/// let shutdown = server.shutdown_handle();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let serving = axum::serve(listener, server.into_router())
///     .with_graceful_shutdown(shutdown.signal())
///     .into_future();
/// let serving = tokio::spawn(serving);
///
/// // On Ctrl-C (`tokio::signal::ctrl_c().await`) or SIGTERM, say:
/// let drained = shutdown.drain(Duration::from_secs(30)).await;
/// assert_eq!((drained.in_flight, drained.cancelled), (0, 0));
/// serving.await??;
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// [`Server::shutdown_handle`]: super::Server::shutdown_handle
/// [`AgentRun::cancel`]: crate::AgentRun::cancel
#[derive(Debug, Clone)]
pub struct Shutdown(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    readiness: Readiness,
    draining: AtomicBool,
    /// The runs in flight: one token each, until its response is dropped.
    runs: TaskTracker,
    /// Cancelled at the deadline; each run that waits watches a child of its own.
    cut: CancellationToken,
    /// Set at the deadline, before `cut` is cancelled: what a run that does not wait
    /// looks at between its events.
    is_cut: AtomicBool,
    /// Cancelled when the drain is over.
    drained: CancellationToken,
    cancelled: AtomicUsize,
}

/// What a [drain](Shutdown::drain) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Drained {
    /// The runs in flight when the drain started.
    pub in_flight: usize,
    /// The runs cancelled at the deadline.
    pub cancelled: usize,
    /// The runs that had not ended 5 s after the deadline: their clients stopped
    /// reading. They end with the process.
    pub unfinished: usize,
}

impl Shutdown {
    pub(crate) fn new(readiness: Readiness) -> Self {
        Shutdown(Arc::new(Inner {
            readiness,
            draining: AtomicBool::new(false),
            runs: TaskTracker::new(),
            cut: CancellationToken::new(),
            is_cut: AtomicBool::new(false),
            drained: CancellationToken::new(),
            cancelled: AtomicUsize::new(0),
        }))
    }

    /// The server's readiness, which a drain sets to not ready.
    pub fn readiness(&self) -> &Readiness {
        &self.0.readiness
    }

    /// Whether a drain has started.
    pub fn is_draining(&self) -> bool {
        self.0.draining.load(Ordering::SeqCst)
    }

    /// Resolves once a drain is over: every run finished or was cancelled. For axum's
    /// `serve(..).with_graceful_shutdown(..)`.
    pub fn signal(&self) -> impl Future<Output = ()> + Send + 'static {
        self.0.drained.clone().cancelled_owned()
    }

    /// Drains the server: refuses new runs, waits up to `deadline` for the runs in
    /// flight, cancels the rest and waits for them to end; then
    /// [`signal`](Shutdown::signal) resolves. See the [type docs](Shutdown).
    pub async fn drain(&self, deadline: Duration) -> Drained {
        let inner = &self.0;
        inner.draining.store(true, Ordering::SeqCst);
        inner.readiness.set_ready(false);
        inner.runs.close();
        let in_flight = inner.runs.len();
        let mut unfinished = 0;
        if tokio::time::timeout(deadline, inner.runs.wait())
            .await
            .is_err()
        {
            inner.is_cut.store(true, Ordering::SeqCst);
            inner.cut.cancel();
            if tokio::time::timeout(CUT_GRACE, inner.runs.wait())
                .await
                .is_err()
            {
                unfinished = inner.runs.len();
            }
        }
        inner.drained.cancel();
        Drained {
            in_flight,
            cancelled: inner.cancelled.load(Ordering::SeqCst),
            unfinished,
        }
    }

    /// Takes a new run in, or refuses it with 503 `shutting_down` once a drain started.
    pub(crate) fn admit(&self) -> Result<Admitted, ApiError> {
        // Counted before the check: a drain that starts in between waits for it.
        let tracked = self.0.runs.token();
        if self.is_draining() {
            let message = "the server is shutting down and takes no new runs";
            let status = StatusCode::SERVICE_UNAVAILABLE;
            return Err(ApiError::new(status, "shutting_down", message));
        }
        Ok(Admitted {
            shutdown: self.clone(),
            tracked,
        })
    }

    /// Whether the drain's deadline has passed: the runs in flight are cut.
    pub(crate) fn is_cut(&self) -> bool {
        self.0.is_cut.load(Ordering::Relaxed)
    }

    /// Resolves at the drain's deadline (at once if it has passed). A child token of
    /// its own: its polls touch no lock that other runs share.
    pub(crate) fn cut(&self) -> WaitForCancellationFutureOwned {
        self.0.cut.child_token().cancelled_owned()
    }

    /// Counts a run cancelled at the deadline.
    pub(crate) fn count_cancelled(&self) {
        self.0.cancelled.fetch_add(1, Ordering::SeqCst);
    }
}

/// A run taken in: counted as in flight until dropped.
#[derive(Debug)]
pub(crate) struct Admitted {
    pub(crate) shutdown: Shutdown,
    pub(crate) tracked: TaskTrackerToken,
}

/// What `GET /readyz` answers: ready (the default) or not, e.g. while the process drains
/// before it stops. Clones share the flag.
///
/// ```
/// use tower_adk::server::Server;
///
/// let server = Server::new();
/// let readiness = server.readiness();
/// readiness.set_ready(false); // from a shutdown handler, say
/// assert!(!server.readiness().is_ready());
/// ```
#[derive(Debug, Clone)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    pub(crate) fn new() -> Self {
        Readiness(Arc::new(AtomicBool::new(true)))
    }

    /// Says whether the server is ready.
    pub fn set_ready(&self, ready: bool) {
        self.0.store(ready, Ordering::Relaxed);
    }

    /// Whether the server is ready.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
