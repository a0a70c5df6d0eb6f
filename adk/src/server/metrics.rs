//! `GET /metrics` (feature `prometheus`): the process's metrics in Prometheus's text
//! format, from metrics-exporter-prometheus's recorder, on the server's own router.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};

use super::error::ApiError;
use super::state::AppState;
use crate::telemetry::metrics::{BUCKETS, describe};

/// The metrics that `GET /metrics` serves, once [`Server::metrics`](super::Server::metrics)
/// turns the route on: runs started and finished by status, runs in flight, interrupts
/// waiting, model call latency and tokens (OpenTelemetry's `gen_ai` metrics), tool calls by
/// outcome, checkpoint write latency. The names and labels are in the README's
/// "Metrics" section.
///
/// The metrics are the process's, from the recorder of the `metrics` facade that
/// [`install`](PrometheusMetrics::install) makes global: every agent of the process is
/// counted, served or not, and every server of the process serves the same figures.
///
/// # Who may read it
///
/// The metrics carry no message text, thread or run ids, or principals: only counts,
/// durations and the names of agents, tools, models and stores. The route is open, like
/// `/healthz`, since most scrapers send no credentials; behind a network that others
/// reach, [`require_identity`](PrometheusMetrics::require_identity) puts it behind the
/// server's [`Identify`](super::Identify) (Prometheus sends a bearer token with
/// `authorization: {credentials: ...}` in its scrape config).
///
/// # Example
///
/// ```
/// use tower_adk::server::{PrometheusMetrics, Server};
///
/// # fn main() -> Result<(), tower_adk::server::MetricsError> {
/// let metrics = PrometheusMetrics::install()?.require_identity(true);
/// let router = Server::new().metrics(metrics).into_router();
/// # let _ = router;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct PrometheusMetrics {
    handle: PrometheusHandle,
    identified: bool,
}

/// The handle of the recorder [`PrometheusMetrics::install`] installed.
static INSTALLED: Mutex<Option<PrometheusHandle>> = Mutex::new(None);

/// How often the recorder folds what was recorded into its histograms, between scrapes.
const UPKEEP: Duration = Duration::from_secs(5);

impl PrometheusMetrics {
    /// Installs a Prometheus recorder as the process's global recorder of the `metrics`
    /// facade, with histograms (OpenTelemetry's bucket bounds for the `gen_ai` metrics),
    /// and a thread that folds samples into them every 5 seconds between scrapes. Once
    /// per process: later calls give the same recorder.
    ///
    /// # Errors
    ///
    /// [`MetricsError::Install`] when the program installed another recorder (give
    /// [`from_handle`](PrometheusMetrics::from_handle) the handle of yours instead).
    pub fn install() -> Result<Self, MetricsError> {
        let mut installed = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(handle) = &*installed {
            return Ok(PrometheusMetrics::from_handle(handle.clone()));
        }
        let mut builder = PrometheusBuilder::new();
        for (name, buckets) in BUCKETS {
            let matcher = Matcher::Full(name.to_owned());
            builder = builder.set_buckets_for_metric(matcher, buckets)?;
        }
        let handle = builder.install_recorder()?;
        let upkeep = handle.clone();
        // Without it, samples recorded between scrapes wait in memory until the next.
        let _ = std::thread::Builder::new()
            .name("adk-metrics-upkeep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(UPKEEP);
                    upkeep.run_upkeep();
                }
            });
        *installed = Some(handle.clone());
        Ok(PrometheusMetrics::from_handle(handle))
    }

    /// Serves the metrics of a Prometheus recorder the program built and installed
    /// itself (its own buckets or global labels, say); describes this crate's metrics
    /// to it.
    pub fn from_handle(handle: PrometheusHandle) -> Self {
        describe();
        PrometheusMetrics {
            handle,
            identified: false,
        }
    }

    /// Whether `GET /metrics` asks the server's [`Identify`](super::Identify) first, as
    /// the agent routes do: a request it refuses gets 401 (default: no, the route is
    /// open).
    pub fn require_identity(mut self, required: bool) -> Self {
        self.identified = required;
        self
    }

    /// Whether `GET /metrics` asks for an identity.
    pub(crate) fn identified(&self) -> bool {
        self.identified
    }

    /// The metrics now, in Prometheus's text format (what `GET /metrics` answers).
    pub fn render(&self) -> String {
        self.handle.render()
    }
}

impl std::fmt::Debug for PrometheusMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusMetrics")
            .field("identified", &self.identified)
            .finish_non_exhaustive()
    }
}

/// Why [`PrometheusMetrics::install`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// The recorder could not be built or installed: another recorder is the process's.
    #[error("the Prometheus recorder could not be installed: {0}")]
    Install(#[from] BuildError),
}

/// `GET /metrics`: the text format, version 0.0.4.
pub(crate) async fn show(State(state): State<AppState>) -> Response {
    let Some(metrics) = &state.metrics else {
        return ApiError::not_found("not_found", "no such route").into_response();
    };
    let headers = [
        (
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        ),
        (CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    (headers, metrics.render()).into_response()
}
