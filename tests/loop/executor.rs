//! A handler can replace the executor of a turn's batch of tool calls; removing the
//! handler restores the default.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tower_adk::agent::{ToolBatch, ToolExecutor};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool, text_tool};
use tower_adk::{Agent, AgentConfig, AgentError, AgentEvent, AgentRequest, BoxError, Handler};
use tower_adk::{RunContext, Tool, ToolErrorKind, ToolInfo, ToolOutput, ToolRecord};

/// Installs an executor in `before_agent`.
struct Install<E>(Arc<E>);

struct Shared<E>(Arc<E>);

impl<E: ToolExecutor> ToolExecutor for Shared<E> {
    async fn execute(&self, batch: ToolBatch) -> Result<Vec<ToolRecord>, BoxError> {
        self.0.execute(batch).await
    }
}

impl<E: ToolExecutor> Handler for Install<E> {
    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        config.set_executor(Shared(Arc::clone(&self.0)));
        Ok(config)
    }
}

/// Runs calls one at a time in the model's order, answers `cached` itself, and labels
/// each record with a purpose.
#[derive(Default)]
struct Planner {
    batches: AtomicUsize,
}

impl ToolExecutor for Planner {
    async fn execute(&self, batch: ToolBatch) -> Result<Vec<ToolRecord>, BoxError> {
        self.batches.fetch_add(1, Ordering::SeqCst);
        let (calls, executor) = batch.into_parts();
        let mut records = Vec::new();
        for call in calls {
            let record = if call.name == "cached" {
                ToolRecord::success(&call, "from cache")
            } else {
                executor.run_one(call).await?
            };
            records.push(record.with_purpose("planned"));
        }
        Ok(records)
    }
}

/// A tool that tracks how many of its calls run at once.
fn probe(name: &str, in_flight: &Arc<AtomicUsize>, peak: &Arc<AtomicUsize>) -> Tool {
    let (in_flight, peak) = (Arc::clone(in_flight), Arc::clone(peak));
    Tool::from_fn(ToolInfo::new(name, "probe"), move |_| {
        let (in_flight, peak) = (Arc::clone(&in_flight), Arc::clone(&peak));
        async move {
            peak.fetch_max(
                in_flight.fetch_add(1, Ordering::SeqCst) + 1,
                Ordering::SeqCst,
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>(ToolOutput::new("probed"))
        }
    })
}

fn script() -> ScriptedModel {
    ScriptedModel::per_run([
        Turn::call("c1", "probe", json!({}))
            .with_call("c2", "probe", json!({}))
            .with_call("c3", "cached", json!({})),
        Turn::text("done"),
    ])
}

#[tokio::test]
async fn a_custom_executor_replaces_the_batch_and_removing_it_restores_the_default() {
    let (in_flight, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let cached_runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&cached_runs);
    let cached = Tool::from_fn(ToolInfo::new("cached", "slow lookup"), move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, std::convert::Infallible>(ToolOutput::new("looked up")) }
    });
    let agent = Agent::builder(script())
        .tool(probe("probe", &in_flight, &peak))
        .tool(cached)
        .build()
        .unwrap();
    let planner = Arc::new(Planner::default());

    let planned = agent
        .run(AgentRequest::user("go").with_handler(Install(Arc::clone(&planner))))
        .await
        .unwrap();

    assert_eq!(planner.batches.load(Ordering::SeqCst), 1);
    assert_eq!(
        peak.load(Ordering::SeqCst),
        1,
        "the planner ran the calls one by one"
    );
    assert_eq!(
        cached_runs.load(Ordering::SeqCst),
        0,
        "the planner answered `cached` itself"
    );
    let contents: Vec<_> = planned
        .tool_records
        .iter()
        .map(|r| r.content.as_str())
        .collect();
    assert_eq!(contents, ["probed", "probed", "from cache"]);
    assert!(
        planned
            .tool_records
            .iter()
            .all(|r| r.purpose.as_deref() == Some("planned"))
    );
    assert_eq!(planned.final_message.content(), "done");

    // Without the handler: the default executor, all calls at once, the real tool.
    peak.store(0, Ordering::SeqCst);
    let default = agent.run(AgentRequest::user("go")).await.unwrap();
    assert_eq!(peak.load(Ordering::SeqCst), 2);
    assert_eq!(cached_runs.load(Ordering::SeqCst), 1);
    assert!(default.tool_records.iter().all(|r| r.purpose.is_none()));
    assert_eq!(planner.batches.load(Ordering::SeqCst), 1);
}

/// Returns a record for the first call only.
struct Forgetful;

impl ToolExecutor for Forgetful {
    async fn execute(&self, batch: ToolBatch) -> Result<Vec<ToolRecord>, BoxError> {
        let (calls, executor) = batch.into_parts();
        let first = calls.into_iter().next().ok_or("no calls")?;
        Ok(vec![executor.run_one(first).await?])
    }
}

#[tokio::test]
async fn a_call_the_executor_leaves_unanswered_gets_a_failed_record() {
    let model = ScriptedModel::new([
        Turn::call("c1", "a", json!({})).with_call("c2", "b", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("a", "A"))
        .tool(text_tool("b", "B"))
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("go").with_handler(Install(Arc::new(Forgetful))))
        .await
        .unwrap();

    assert_eq!(result.tool_records[0].content, "A");
    assert_eq!(
        result.tool_records[1].error.as_ref().unwrap().kind(),
        ToolErrorKind::Failed
    );
    // The history still answers both calls, so the model sees a complete turn.
    let requests = model.requests();
    let answered: Vec<_> = requests[1]
        .messages
        .iter()
        .filter_map(|m| m.tool_call_id())
        .collect();
    assert_eq!(answered, ["c1", "c2"]);
}

/// Streams through the default executor, so chunk events must reach the caller.
struct PassThrough;

impl ToolExecutor for PassThrough {
    async fn execute(&self, batch: ToolBatch) -> Result<Vec<ToolRecord>, BoxError> {
        batch.run_default().await
    }
}

#[tokio::test]
async fn events_of_calls_run_by_a_custom_executor_reach_the_caller() {
    let model = ScriptedModel::new([Turn::call("c1", "report", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model)
        .tool(chunk_tool("report", &["a", "b", "c"], Duration::ZERO))
        .build()
        .unwrap();

    let events: Vec<AgentEvent> = agent
        .run(AgentRequest::user("go").with_handler(Install(Arc::new(PassThrough))))
        .map(Result::unwrap)
        .collect()
        .await;

    let chunks: Vec<_> = events.iter().filter_map(AgentEvent::output_chunk).collect();
    assert_eq!(chunks, ["a", "b", "c"]);
    let results = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolResult(r) if r.content == "abc"))
        .count();
    assert_eq!(results, 1);
}

struct Broken;

impl ToolExecutor for Broken {
    async fn execute(&self, _: ToolBatch) -> Result<Vec<ToolRecord>, BoxError> {
        Err("the planner lost its plan".into())
    }
}

#[tokio::test]
async fn a_failing_executor_fails_the_run_with_a_typed_error() {
    let model = ScriptedModel::new([Turn::call("c1", "a", json!({})), Turn::text("never")]);
    let agent = Agent::builder(model)
        .tool(text_tool("a", "A"))
        .build()
        .unwrap();

    let error = agent
        .run(AgentRequest::user("go").with_handler(Install(Arc::new(Broken))))
        .await
        .unwrap_err();

    assert!(
        matches!(&error, AgentError::Executor(e) if e.to_string() == "the planner lost its plan"),
        "{error}"
    );
}
