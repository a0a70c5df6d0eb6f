//! What a run's metrics say (feature `metrics`), read with the facade's debugging
//! recorder, without HTTP: the agent's runs, model calls, tokens, tool calls, interrupts
//! and checkpoint writes, as `telemetry::metrics` names them.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use serde_json::json;
use tower::BoxError;

use crate::agent::{Agent, AgentEvent, AgentRequest};
use crate::interrupt::{Decision, Interrupt};
use crate::message::{Message, ToolCall};
use crate::model::{ModelRequest, ModelResponse, Usage};
use crate::telemetry::metrics::{
    CHECKPOINT_WRITE, INTERRUPTS_WAITING, MODEL_DURATION, RUN_DURATION, RUNS_FINISHED,
    RUNS_IN_FLIGHT, RUNS_STARTED, TOKEN_USAGE, TOOL_CALLS, TOOL_DURATION,
};
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
        Turn::call("c1", "broken", json!({})).with_call("c2", "made_up_by_the_model", json!({})),
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
