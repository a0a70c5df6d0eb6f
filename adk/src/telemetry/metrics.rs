//! Metrics of runs, model calls, tool calls and checkpoint writes, through the
//! [`metrics`](https://docs.rs/metrics) facade, when the `metrics` feature is on; nothing
//! at all when it is off (every type here is then empty, every function does nothing).
//!
//! The names are in Prometheus form; those of model calls are OpenTelemetry's GenAI
//! metrics (`gen_ai.client.operation.duration`, `gen_ai.client.token.usage`) as an
//! OpenTelemetry collector exports them to Prometheus. Labels are bounded: agent, tool,
//! store and model names, statuses and error codes; never a thread, a run id or text.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `adk_runs_started_total` | counter | `agent` |
//! | `adk_runs_finished_total` | counter | `agent`, `status` (`completed`, `degraded`, `interrupted`, `failed`, `timeout`, `cancelled`) |
//! | `adk_run_duration_seconds` | histogram | `agent`, `status` |
//! | `adk_runs_in_flight` | gauge | `agent` |
//! | `adk_interrupts_waiting` | gauge | `agent` |
//! | `gen_ai_client_operation_duration_seconds` | histogram | `gen_ai_operation_name` (`chat`), `gen_ai_agent_name`, `error_type` (failures) |
//! | `gen_ai_client_token_usage` | histogram | `gen_ai_operation_name`, `gen_ai_agent_name`, `gen_ai_token_type` (`input`, `output`), `gen_ai_response_model` (when reported) |
//! | `adk_tool_calls_total` | counter | `tool`, `outcome` (`ok` or the failure's kind) |
//! | `adk_tool_call_duration_seconds` | histogram | `tool`, `outcome` |
//! | `adk_checkpoint_write_duration_seconds` | histogram | `store`, `status` (of the record), `outcome` (`ok`, `error`) |

// Without the feature, the names are not used; the functions take their arguments and
// do nothing with them.
#![cfg_attr(not(feature = "metrics"), allow(dead_code))]

use std::sync::Arc;
use std::time::Duration;
#[cfg(feature = "metrics")]
use std::time::Instant;

#[cfg(feature = "metrics")]
use metrics::SharedString;

use crate::model::Usage;
use crate::tool::ToolError;
#[cfg(feature = "metrics")]
use crate::tool::ToolErrorKind;

/// Runs asked of an agent.
pub(crate) const RUNS_STARTED: &str = "adk_runs_started_total";
/// Runs that ended, by how.
pub(crate) const RUNS_FINISHED: &str = "adk_runs_finished_total";
/// How long runs took, from being asked for to their last event.
pub(crate) const RUN_DURATION: &str = "adk_run_duration_seconds";
/// Runs asked for and not ended.
pub(crate) const RUNS_IN_FLIGHT: &str = "adk_runs_in_flight";
/// Interrupts that runs stopped at and no resume took up yet.
pub(crate) const INTERRUPTS_WAITING: &str = "adk_interrupts_waiting";
/// OpenTelemetry's `gen_ai.client.operation.duration`: one model call, to its reply's end.
pub(crate) const MODEL_DURATION: &str = "gen_ai_client_operation_duration_seconds";
/// OpenTelemetry's `gen_ai.client.token.usage`: the tokens of one model call, in or out.
pub(crate) const TOKEN_USAGE: &str = "gen_ai_client_token_usage";
/// Tool calls, by outcome.
pub(crate) const TOOL_CALLS: &str = "adk_tool_calls_total";
/// How long tool calls took.
pub(crate) const TOOL_DURATION: &str = "adk_tool_call_duration_seconds";
/// How long writing a checkpoint took (encoding it and the store's append).
pub(crate) const CHECKPOINT_WRITE: &str = "adk_checkpoint_write_duration_seconds";

/// The bucket bounds of each histogram: OpenTelemetry's advice for the GenAI metrics,
/// and bounds of the same shape for ours.
#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
pub(crate) const BUCKETS: [(&str, &[f64]); 5] = [
    (MODEL_DURATION, &SECONDS),
    (TOKEN_USAGE, &TOKENS),
    (RUN_DURATION, &SECONDS),
    (TOOL_DURATION, &SECONDS),
    (CHECKPOINT_WRITE, &WRITES),
];

const SECONDS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const TOKENS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];
const WRITES: [f64; 12] = [
    0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024,
];

/// Describes every metric (its help text and unit) to the installed recorder.
#[cfg(feature = "prometheus")]
pub(crate) fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(RUNS_STARTED, Unit::Count, "Runs asked of an agent.");
    describe_counter!(RUNS_FINISHED, Unit::Count, "Runs that ended, by status.");
    describe_histogram!(RUN_DURATION, Unit::Seconds, "How long runs took.");
    describe_gauge!(RUNS_IN_FLIGHT, Unit::Count, "Runs started and not ended.");
    let waiting = "Interrupts that runs stopped at and no resume took up yet.";
    describe_gauge!(INTERRUPTS_WAITING, Unit::Count, waiting);
    describe_histogram!(MODEL_DURATION, Unit::Seconds, "GenAI operation duration.");
    describe_histogram!(
        TOKEN_USAGE,
        Unit::Count,
        "Measures number of input and output tokens used."
    );
    describe_counter!(TOOL_CALLS, Unit::Count, "Tool calls, by outcome.");
    describe_histogram!(TOOL_DURATION, Unit::Seconds, "How long tool calls took.");
    let writes = "How long writing a checkpoint took, encoding and store append.";
    describe_histogram!(CHECKPOINT_WRITE, Unit::Seconds, writes);
}

/// A run as the metrics see it: counted started and in flight when it is made, then
/// finished (with its status and duration) at its last event, or cancelled when it is
/// dropped before (a client that went away), which takes it out of flight either way.
/// Empty for a run made of another's events, which are not counted twice.
#[derive(Debug, Default)]
pub(crate) struct RunMeter {
    #[cfg(feature = "metrics")]
    open: Option<(SharedString, Instant)>,
}

impl RunMeter {
    /// A run of `agent`, starting.
    pub(crate) fn start(agent: &Arc<str>) -> Self {
        #[cfg(feature = "metrics")]
        {
            let agent = SharedString::from(Arc::clone(agent));
            let labels = [("agent", agent.clone())];
            metrics::counter!(RUNS_STARTED, &labels).increment(1);
            metrics::gauge!(RUNS_IN_FLIGHT, &labels).increment(1.0);
            RunMeter {
                open: Some((agent, Instant::now())),
            }
        }
        #[cfg(not(feature = "metrics"))]
        {
            let _ = agent;
            RunMeter {}
        }
    }

    /// The run ended with `status` (`completed`, `degraded`, `interrupted`, `failed`,
    /// `timeout` or `cancelled`), stopped at `waiting` interrupts.
    #[cfg(feature = "metrics")]
    pub(crate) fn finished(&mut self, status: &'static str, waiting: usize) {
        self.raised(waiting);
        self.end(status);
    }

    /// The run stopped at `waiting` interrupts.
    #[cfg(feature = "metrics")]
    fn raised(&self, waiting: usize) {
        if let (Some((agent, _)), 1..) = (&self.open, waiting) {
            let labels = [("agent", agent.clone())];
            metrics::gauge!(INTERRUPTS_WAITING, &labels).increment(waiting as f64);
        }
    }

    #[cfg(feature = "metrics")]
    fn end(&mut self, status: &'static str) {
        let Some((agent, started)) = self.open.take() else {
            return;
        };
        let labels = [
            ("agent", agent.clone()),
            ("status", SharedString::const_str(status)),
        ];
        metrics::counter!(RUNS_FINISHED, &labels).increment(1);
        metrics::histogram!(RUN_DURATION, &labels).record(started.elapsed());
        metrics::gauge!(RUNS_IN_FLIGHT, &[("agent", agent)]).decrement(1.0);
    }
}

#[cfg(feature = "metrics")]
impl Drop for RunMeter {
    fn drop(&mut self) {
        self.end("cancelled");
    }
}

/// A resumed run of `agent` claimed its thread, taking its checkpoint's `waited`
/// interrupts up: they wait no more (those its decisions left pending wait again when it
/// stops at them).
pub(crate) fn interrupts_taken_up(agent: &Arc<str>, waited: usize) {
    #[cfg(feature = "metrics")]
    if waited > 0 {
        let labels = [("agent", SharedString::from(Arc::clone(agent)))];
        metrics::gauge!(INTERRUPTS_WAITING, &labels).decrement(waited as f64);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (agent, waited);
}

/// When a model call started.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ModelCall {
    #[cfg(feature = "metrics")]
    started: Instant,
}

impl ModelCall {
    /// A model call, starting now.
    #[inline]
    pub(crate) fn start() -> Self {
        ModelCall {
            #[cfg(feature = "metrics")]
            started: Instant::now(),
        }
    }

    /// The call of `agent`'s run ended: its whole reply came, or its stream ended, or
    /// it failed with `error` (an [`AgentError::code`]).
    #[inline]
    pub(crate) fn end(self, agent: &Arc<str>, error: Option<&'static str>) {
        #[cfg(feature = "metrics")]
        {
            let labels = gen_ai_labels(agent);
            let histogram = match error {
                None => metrics::histogram!(MODEL_DURATION, &labels),
                Some(code) => {
                    let error = ("error_type", SharedString::const_str(code));
                    let [operation, agent] = labels;
                    metrics::histogram!(MODEL_DURATION, &[operation, agent, error])
                }
            };
            histogram.record(self.started.elapsed());
        }
        #[cfg(not(feature = "metrics"))]
        let _ = (agent, error);
    }
}

/// What one model call of `agent`'s run used, as its provider reported it.
#[inline]
pub(crate) fn tokens(agent: &Arc<str>, model: Option<&str>, usage: &Usage) {
    #[cfg(feature = "metrics")]
    for (kind, count) in [
        ("input", usage.prompt_tokens),
        ("output", usage.completion_tokens),
    ] {
        let [operation, agent] = gen_ai_labels(agent);
        let kind = ("gen_ai_token_type", SharedString::const_str(kind));
        let histogram = match model {
            Some(model) => {
                let model = ("gen_ai_response_model", model.to_owned().into());
                metrics::histogram!(TOKEN_USAGE, &[operation, agent, kind, model])
            }
            None => metrics::histogram!(TOKEN_USAGE, &[operation, agent, kind]),
        };
        histogram.record(count as f64);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (agent, model, usage);
}

#[cfg(feature = "metrics")]
fn gen_ai_labels(agent: &Arc<str>) -> [(&'static str, SharedString); 2] {
    [
        ("gen_ai_operation_name", SharedString::const_str("chat")),
        ("gen_ai_agent_name", Arc::clone(agent).into()),
    ]
}

/// A tool call ended, after `latency`: with a result, or failed with `error`'s kind. A
/// call of a tool the run does not have counts as the tool `(unknown)`, so that what a
/// model names makes no new series.
#[inline]
pub(crate) fn tool_call(tool: &str, error: Option<&ToolError>, latency: Duration) {
    #[cfg(feature = "metrics")]
    {
        let error = error.map(ToolError::kind);
        let tool = match error {
            Some(ToolErrorKind::UnknownTool) => SharedString::const_str("(unknown)"),
            _ => tool.to_owned().into(),
        };
        let outcome = error.map_or("ok", ToolErrorKind::as_str);
        let labels = [
            ("tool", tool),
            ("outcome", SharedString::const_str(outcome)),
        ];
        metrics::counter!(TOOL_CALLS, &labels).increment(1);
        metrics::histogram!(TOOL_DURATION, &labels).record(latency);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (tool, error, latency);
}

/// A checkpoint, a record of `status`, was written to a `store` (or failed to be) in
/// `took`.
#[inline]
pub(crate) fn checkpoint_written(
    store: &'static str,
    status: &'static str,
    took: Duration,
    ok: bool,
) {
    #[cfg(feature = "metrics")]
    {
        let outcome = if ok { "ok" } else { "error" };
        let labels = [("store", store), ("status", status), ("outcome", outcome)];
        metrics::histogram!(CHECKPOINT_WRITE, &labels).record(took);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (store, status, took, ok);
}
