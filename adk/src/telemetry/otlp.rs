//! The spans of runs, model calls and tool calls exported over OTLP (HTTP, protobuf) to an
//! OpenTelemetry backend: Arize Phoenix, Jaeger, Grafana Tempo, Langfuse, a collector.
//!
//! [`Exporter`] builds the exporter from the standard environment variables
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), or
//! from what the program sets, and installs it: as the process's `tracing` subscriber
//! ([`Exporter::install`]), or as a layer of the program's own ([`Exporter::layer`]). The
//! [`Guard`] it gives back sends what is left when it is dropped: keep it until the
//! program ends.
//!
//! With the `server` feature, a request that carries a W3C `traceparent` header has its
//! run's `invoke_agent` span made a child of the caller's span, in the caller's trace.
//!
//! # Example
//!
//! ```no_run
//! use tower_adk::telemetry::otlp::Exporter;
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use tower_adk::{Agent, AgentRequest};
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Phoenix's collector, say (`phoenix serve` listens on 6006).
//! let _guard = Exporter::new()
//!     .endpoint("http://127.0.0.1:6006")
//!     .service_name("support-desk")
//!     .install()?;
//!
//! let agent = Agent::builder(ScriptedModel::new([Turn::text("Hello!")])).build()?;
//! agent.run(AgentRequest::user("hi")).await?;
//! // Dropping the guard sends the spans still buffered.
//! # Ok(()) }
//! ```

use std::fmt;

use opentelemetry::trace::TracerProvider;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkError;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing_opentelemetry::OpenTelemetryLayer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// The name of the instrumentation scope of the spans.
const SCOPE: &str = "tower-adk";

/// Builds and installs an OTLP/HTTP exporter of the spans; see the [module docs](self).
#[derive(Debug, Clone, Default)]
pub struct Exporter {
    endpoint: Option<String>,
    service_name: Option<String>,
}

impl Exporter {
    /// An exporter configured by the environment: `OTEL_EXPORTER_OTLP_ENDPOINT` (the
    /// collector's base URL, `/v1/traces` appended; default `http://localhost:4318`) or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the whole URL), `OTEL_EXPORTER_OTLP_HEADERS`,
    /// `OTEL_SERVICE_NAME`.
    pub fn new() -> Self {
        Exporter::default()
    }

    /// Sends to the collector at this base URL (`/v1/traces` is appended), whatever the
    /// environment says.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// Names the service the spans come from (`service.name`), whatever the environment
    /// says.
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// Installs the exporter as the process's `tracing` subscriber, and W3C trace context
    /// as OpenTelemetry's propagator.
    ///
    /// # Errors
    ///
    /// [`Error::Exporter`] for a configuration the exporter refuses (an endpoint that is
    /// no URL), [`Error::Subscriber`] when the process already has a subscriber (then
    /// use [`Exporter::layer`]).
    pub fn install(self) -> Result<Guard, Error> {
        let (layer, guard) = self.layer()?;
        tracing_subscriber::registry()
            .with(layer)
            .try_init()
            .map_err(|error| Error::Subscriber(error.to_string()))?;
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Ok(guard)
    }

    /// The exporter as a layer of the program's own subscriber (next to a `fmt` layer,
    /// say), and the guard that flushes it.
    ///
    /// # Errors
    ///
    /// [`Error::Exporter`] for a configuration the exporter refuses.
    pub fn layer<S>(self) -> Result<(OpenTelemetryLayer<S, SdkTracer>, Guard), Error>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        let mut exporter = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary);
        if let Some(endpoint) = &self.endpoint {
            let base = endpoint.trim_end_matches('/');
            exporter = exporter.with_endpoint(format!("{base}/v1/traces"));
        }
        let exporter = exporter.build().map_err(Error::Exporter)?;
        let mut resource = Resource::builder();
        if let Some(name) = self.service_name {
            resource = resource.with_service_name(name);
        }
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        // The spans' own attributes only: no source locations, threads or busy times.
        let layer = tracing_opentelemetry::layer()
            .with_tracer(provider.tracer(SCOPE))
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false);
        Ok((layer, Guard { provider }))
    }
}

/// Installs an exporter configured by the environment when it names a collector
/// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set), as
/// the `adk` command does; `None` when it names none.
///
/// # Errors
///
/// Those of [`Exporter::install`].
pub fn install_from_env() -> Result<Option<Guard>, Error> {
    let named = [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    if !named {
        return Ok(None);
    }
    Exporter::new().install().map(Some)
}

/// Keeps the exporter: dropping it sends the spans still buffered and stops it.
#[must_use = "dropping the guard stops the exporter"]
pub struct Guard {
    provider: SdkTracerProvider,
}

impl Guard {
    /// Sends the spans buffered so far, and waits until they are sent.
    ///
    /// # Errors
    ///
    /// [`Error::Export`] when the collector could not be reached or refused them.
    pub fn flush(&self) -> Result<(), Error> {
        self.provider.force_flush().map_err(Error::Export)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Nowhere to report to: the spans that could not be sent are lost.
        let _ = self.provider.force_flush();
        let _ = self.provider.shutdown();
    }
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard").finish_non_exhaustive()
    }
}

/// Why the exporter could not be installed or flushed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The exporter refused its configuration (an endpoint that is no URL, say).
    #[error("the OTLP exporter: {0}")]
    Exporter(opentelemetry_otlp::ExporterBuildError),
    /// The process already has a `tracing` subscriber.
    #[error("the tracing subscriber: {0}")]
    Subscriber(String),
    /// Spans could not be sent.
    #[error("exporting spans: {0}")]
    Export(OTelSdkError),
}

/// The caller's span a request's `traceparent` names, when it names a valid one.
#[cfg(feature = "server")]
pub(crate) fn remote_parent(headers: &http::HeaderMap) -> Option<opentelemetry::Context> {
    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::TraceContextExt;

    headers.get("traceparent")?;
    let extractor = opentelemetry_http::HeaderExtractor(headers);
    let cx = TraceContextPropagator::new().extract(&extractor);
    cx.span().span_context().is_valid().then_some(cx)
}
