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
use std::task::Poll;
use std::time::Duration;
#[cfg(feature = "metrics")]
use std::time::Instant;

#[cfg(feature = "metrics")]
use metrics::SharedString;

#[cfg(feature = "metrics")]
use crate::agent::RunStatus;
use crate::agent::{AgentError, AgentEvent, CheckpointStatus};
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

    /// Sees what one poll of the run gave: its last event ends it.
    #[inline]
    pub(crate) fn saw(&mut self, poll: &Poll<Option<Result<AgentEvent, AgentError>>>) {
        #[cfg(feature = "metrics")]
        match poll {
            Poll::Ready(Some(Ok(AgentEvent::Completed(result)))) => {
                self.raised(result.interrupts.len());
                self.end(match result.status {
                    RunStatus::Completed => "completed",
                    RunStatus::Degraded => "degraded",
                    RunStatus::Interrupted => "interrupted",
                });
            }
            Poll::Ready(Some(Err(error))) => self.end(match error {
                AgentError::Timeout { .. } => "timeout",
                AgentError::Cancelled { .. } => "cancelled",
                _ => "failed",
            }),
            _ => {}
        }
        #[cfg(not(feature = "metrics"))]
        let _ = poll;
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

    /// The call of `agent`'s run failed with `error`.
    #[inline]
    pub(crate) fn failed(self, agent: &Arc<str>, error: &AgentError) {
        #[cfg(feature = "metrics")]
        self.end(agent, Some(error.code()));
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
    status: CheckpointStatus,
    took: Duration,
    ok: bool,
) {
    #[cfg(feature = "metrics")]
    {
        let status = match status {
            CheckpointStatus::Running => "running",
            CheckpointStatus::Interrupted => "interrupted",
            CheckpointStatus::Completed => "completed",
            CheckpointStatus::Failed => "failed",
        };
        let outcome = if ok { "ok" } else { "error" };
        let labels = [("store", store), ("status", status), ("outcome", outcome)];
        metrics::histogram!(CHECKPOINT_WRITE, &labels).record(took);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (store, status, took, ok);
}

#[cfg(all(test, feature = "metrics"))]
mod tests {
    use std::future::Future;
    use std::time::Duration;

    use futures::StreamExt;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    use serde_json::json;
    use tower::BoxError;

    use super::{
        CHECKPOINT_WRITE, INTERRUPTS_WAITING, MODEL_DURATION, RUN_DURATION, RUNS_FINISHED,
        RUNS_IN_FLIGHT, RUNS_STARTED, TOKEN_USAGE, TOOL_CALLS, TOOL_DURATION,
    };
    use crate::agent::{Agent, AgentEvent, AgentRequest};
    use crate::interrupt::{Decision, Interrupt};
    use crate::message::{Message, ToolCall};
    use crate::model::{ModelRequest, ModelResponse, Usage};
    use crate::testing::{ScriptedModel, Turn, echo_tool, failing_tool, sleep_tool};
    use crate::tool::{Tool, ToolInfo, ToolOutput, ToolRequest};

    /// What a recorder of its own saw while `run` ran (on one thread, so that the
    /// recorder is the one every metric of the run goes to).
    fn recorded(run: impl Future<Output = ()>) -> Recorded {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        metrics::with_local_recorder(&recorder, || runtime.block_on(run));
        let seen = snapshotter.snapshot().into_vec().into_iter();
        Recorded(
            seen.map(|(key, _, _, value)| {
                let (name, labels) = key.key().clone().into_parts();
                let labels = labels
                    .into_iter()
                    .map(|l| (l.key().to_owned(), l.value().to_owned()))
                    .collect();
                (name.as_str().to_owned(), labels, value)
            })
            .collect(),
        )
    }

    type Labels = Vec<(String, String)>;

    struct Recorded(Vec<(String, Labels, DebugValue)>);

    impl Recorded {
        /// The values of `name` whose labels include `labels`.
        fn values<'a>(
            &'a self,
            name: &'a str,
            labels: &'a [(&str, &str)],
        ) -> impl Iterator<Item = &'a DebugValue> {
            self.0.iter().filter_map(move |(n, l, value)| {
                let has = |(k, v): &(&str, &str)| l.iter().any(|(lk, lv)| lk == k && lv == v);
                (n == name && labels.iter().all(has)).then_some(value)
            })
        }

        fn counter(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
            let counts = self.values(name, labels).map(|v| match v {
                DebugValue::Counter(n) => *n,
                other => panic!("{name} is {other:?}"),
            });
            counts.sum()
        }

        fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
            let gauges = self.values(name, labels).map(|v| match v {
                DebugValue::Gauge(n) => n.into_inner(),
                other => panic!("{name} is {other:?}"),
            });
            gauges.sum()
        }

        fn samples(&self, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
            let samples = self.values(name, labels).flat_map(|v| match v {
                DebugValue::Histogram(samples) => samples.iter().map(|s| s.into_inner()),
                other => panic!("{name} is {other:?}"),
            });
            samples.collect()
        }
    }

    /// An agent whose model reports 1,000 tokens in and 100 out, as `small`: it calls
    /// `tool` while its history has no tool result, then answers.
    fn metered_agent(name: &str, tool: Tool) -> Agent {
        let called = tool.name().to_owned();
        let model = tower::service_fn(move |request: ModelRequest| {
            let called = called.clone();
            async move {
                let answered = request.messages.iter().any(|m| m.tool_call_id().is_some());
                let reply = if answered {
                    Message::assistant("Done.")
                } else {
                    let call = ToolCall::new("c1", called, json!({}));
                    Message::assistant_with_calls("", vec![call])
                };
                let usage = Usage::new(1_000, 100, 1_100);
                let response = ModelResponse::message(reply);
                Ok::<_, BoxError>(response.with_usage(Some("small".into()), usage))
            }
        });
        let built = Agent::builder(model).name(name).tool(tool).build();
        built.unwrap_or_else(|e| panic!("{e}"))
    }

    /// A tool that asks before it pays, and pays once approved.
    fn asking_tool() -> Tool {
        Tool::from_fn(
            ToolInfo::new("pay", "Pays"),
            |request: ToolRequest| async move {
                if request.decision().is_none() {
                    return Err(BoxError::from(Interrupt::new(json!({"question": "Pay?"}))));
                }
                Ok(ToolOutput::new("paid"))
            },
        )
    }

    #[test]
    fn a_completed_run_counts_its_model_calls_tokens_and_tool_call() {
        let agent = metered_agent("done", echo_tool("lookup"));
        let seen = recorded(async {
            let result = agent.run(AgentRequest::user("go")).await;
            assert!(result.is_ok());
        });
        let run = [("agent", "done")];
        assert_eq!(seen.counter(RUNS_STARTED, &run), 1);
        let completed = [("agent", "done"), ("status", "completed")];
        assert_eq!(seen.counter(RUNS_FINISHED, &completed), 1);
        assert_eq!(seen.counter(RUNS_FINISHED, &run), 1);
        assert_eq!(seen.samples(RUN_DURATION, &completed).len(), 1);
        assert_eq!(seen.gauge(RUNS_IN_FLIGHT, &run), 0.0);

        let chat = [
            ("gen_ai_agent_name", "done"),
            ("gen_ai_operation_name", "chat"),
        ];
        assert_eq!(seen.samples(MODEL_DURATION, &chat).len(), 2);
        let input = [
            ("gen_ai_agent_name", "done"),
            ("gen_ai_token_type", "input"),
            ("gen_ai_response_model", "small"),
        ];
        assert_eq!(seen.samples(TOKEN_USAGE, &input), [1_000.0, 1_000.0]);
        let output = [
            ("gen_ai_agent_name", "done"),
            ("gen_ai_token_type", "output"),
        ];
        assert_eq!(seen.samples(TOKEN_USAGE, &output), [100.0, 100.0]);

        let ok = [("tool", "lookup"), ("outcome", "ok")];
        assert_eq!(seen.counter(TOOL_CALLS, &ok), 1);
        assert_eq!(seen.samples(TOOL_DURATION, &ok).len(), 1);
        // A run on no thread writes no checkpoint.
        assert!(seen.samples(CHECKPOINT_WRITE, &[]).is_empty());
    }

    #[test]
    fn failed_and_unknown_tools_count_by_outcome_and_never_by_the_models_name() {
        let model = ScriptedModel::new([
            Turn::call("c1", "broken", json!({})).with_call(
                "c2",
                "made_up_by_the_model",
                json!({}),
            ),
            Turn::text("Sorry."),
        ]);
        let agent = Agent::builder(model)
            .name("tools")
            .tool(failing_tool("broken", "out of order"))
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let seen = recorded(async {
            assert!(agent.run(AgentRequest::user("go")).await.is_ok());
        });
        let failed = [("tool", "broken"), ("outcome", "tool_error")];
        assert_eq!(seen.counter(TOOL_CALLS, &failed), 1);
        let unknown = [("tool", "(unknown)"), ("outcome", "unknown_tool")];
        assert_eq!(seen.counter(TOOL_CALLS, &unknown), 1);
        let named = [("tool", "made_up_by_the_model")];
        assert_eq!(seen.counter(TOOL_CALLS, &named), 0);
        let completed = [("agent", "tools"), ("status", "completed")];
        assert_eq!(seen.counter(RUNS_FINISHED, &completed), 1);
    }

    #[test]
    fn a_failed_model_call_fails_the_run_and_records_its_error_type() {
        let model = ScriptedModel::new([Turn::error("the provider is down")]);
        let agent = Agent::builder(model).name("down").build();
        let agent = agent.unwrap_or_else(|e| panic!("{e}"));
        let seen = recorded(async {
            assert!(agent.run(AgentRequest::user("go")).await.is_err());
        });
        let failed = [("agent", "down"), ("status", "failed")];
        assert_eq!(seen.counter(RUNS_FINISHED, &failed), 1);
        assert_eq!(seen.gauge(RUNS_IN_FLIGHT, &[("agent", "down")]), 0.0);
        let error = [
            ("gen_ai_agent_name", "down"),
            ("error_type", "model_failed"),
        ];
        assert_eq!(seen.samples(MODEL_DURATION, &error).len(), 1);
    }

    #[test]
    fn a_run_dropped_mid_call_is_cancelled_and_leaves_the_runs_in_flight() {
        let model = ScriptedModel::new([Turn::call("c1", "slow", json!({}))]);
        let slow = sleep_tool("slow", Duration::from_secs(3600), "late");
        let agent = Agent::builder(model).name("dropped").tool(slow).build();
        let agent = agent.unwrap_or_else(|e| panic!("{e}"));
        let seen = recorded(async {
            let mut run = agent.run(AgentRequest::user("go"));
            while let Some(event) = run.next().await {
                if matches!(event, Ok(AgentEvent::ToolCallStarted { .. })) {
                    break;
                }
            }
            drop(run);
        });
        let run = [("agent", "dropped")];
        assert_eq!(seen.counter(RUNS_STARTED, &run), 1);
        let cancelled = [("agent", "dropped"), ("status", "cancelled")];
        assert_eq!(seen.counter(RUNS_FINISHED, &cancelled), 1);
        assert_eq!(seen.gauge(RUNS_IN_FLIGHT, &run), 0.0);
        // The call never ended: it is not counted as one.
        assert_eq!(seen.counter(TOOL_CALLS, &[("tool", "slow")]), 0);
    }

    #[test]
    fn an_interrupt_waits_until_a_resume_takes_it_up() {
        let agent = metered_agent("bank", asking_tool());
        let stopped = recorded(async {
            let result = agent.run(AgentRequest::user("pay")).await;
            assert_eq!(result.map(|r| r.interrupts.len()).ok(), Some(1));
        });
        assert_eq!(stopped.gauge(INTERRUPTS_WAITING, &[("agent", "bank")]), 1.0);
        let interrupted = [("agent", "bank"), ("status", "interrupted")];
        assert_eq!(stopped.counter(RUNS_FINISHED, &interrupted), 1);
        let asked = [("tool", "pay"), ("outcome", "interrupted")];
        assert_eq!(stopped.counter(TOOL_CALLS, &asked), 1);
        let written = [
            ("store", "memory"),
            ("status", "interrupted"),
            ("outcome", "ok"),
        ];
        assert_eq!(stopped.samples(CHECKPOINT_WRITE, &written).len(), 1);

        let resumed = recorded(async {
            let result = agent.run(AgentRequest::user("pay")).await;
            let Ok(result) = result else {
                panic!("the run stops at its interrupt");
            };
            let (Some(checkpoint), Some(pending)) = (result.checkpoint, result.interrupts.first())
            else {
                panic!("an interrupted run has a checkpoint");
            };
            let approve = [(pending.id.clone(), Decision::Approve)];
            let resumed = agent.run(AgentRequest::resume(checkpoint, approve)).await;
            assert!(resumed.is_ok());
        });
        // Raised once, taken up once.
        assert_eq!(resumed.gauge(INTERRUPTS_WAITING, &[("agent", "bank")]), 0.0);
        let completed = [("agent", "bank"), ("status", "completed")];
        assert_eq!(resumed.counter(RUNS_FINISHED, &completed), 1);
        assert_eq!(resumed.counter(RUNS_STARTED, &[("agent", "bank")]), 2);
        let paid = [("tool", "pay"), ("outcome", "ok")];
        assert_eq!(resumed.counter(TOOL_CALLS, &paid), 1);
        let claimed = [("store", "memory"), ("status", "running")];
        assert_eq!(resumed.samples(CHECKPOINT_WRITE, &claimed).len(), 1);
        let done = [("store", "memory"), ("status", "completed")];
        assert_eq!(resumed.samples(CHECKPOINT_WRITE, &done).len(), 1);
    }
}
