//! Stock tower middleware around tools and models.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tower::limit::ConcurrencyLimitLayer;
use tower::retry::{Policy, RetryLayer};
use tower::timeout::TimeoutLayer;
use tower::{BoxError, ServiceBuilder};
use tower_adk::handlers::{model_layer, tool_layer};
use tower_adk::testing::{ScriptedError, ScriptedModel, Turn, echo_tool};
use tower_adk::{
    Agent, AgentError, AgentRequest, AgentResult, ModelError, ModelRequest, ModelResponse, Tool,
    ToolCall, ToolErrorKind, ToolInfo, ToolOutput, ToolRequest,
};

use crate::tool_result;

/// A tool that never answers; it can only end by being cancelled.
fn hanging_tool(name: &str) -> Tool {
    Tool::from_fn(ToolInfo::new(name, "Never answers."), |_| async {
        std::future::pending::<()>().await;
        Ok::<_, Infallible>(ToolOutput::new("unreachable"))
    })
}

async fn run_hanging_call(agent_tool: Tool, request: AgentRequest) -> (ScriptedModel, AgentResult) {
    let model = ScriptedModel::new([Turn::call("c1", "hang", json!({})), Turn::text("gave up")]);
    let agent = Agent::builder(model.clone())
        .tool(agent_tool)
        .build()
        .unwrap();
    // A guard against hanging forever if the timeout does not fire; the timeout under
    // test is far shorter.
    let result = tokio::time::timeout(Duration::from_secs(60), agent.run(request))
        .await
        .expect("the tool call was never timed out")
        .unwrap();
    (model, result)
}

fn assert_timed_out(model: &ScriptedModel, result: &AgentResult) {
    assert_eq!(result.final_message.content(), "gave up");
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Timeout);
    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(is_error);
    assert!(content.contains("timeout"), "{content}");
}

#[tokio::test]
async fn a_tower_timeout_as_tool_wrapper_gives_the_model_a_timeout_result() {
    let timeout = tool_layer(TimeoutLayer::new(Duration::from_millis(10)));
    let request = AgentRequest::user("go").with_handler(timeout);

    let (model, result) = run_hanging_call(hanging_tool("hang"), request).await;

    assert_timed_out(&model, &result);
}

#[tokio::test]
async fn a_tower_timeout_on_one_tool_gives_the_model_a_timeout_result() {
    let tool = hanging_tool("hang").layer(TimeoutLayer::new(Duration::from_millis(10)));

    let (model, result) = run_hanging_call(tool, AgentRequest::user("go")).await;

    assert_timed_out(&model, &result);
}

/// Counts how many calls are inside the tool at once; each call yields a few times so
/// that concurrent calls overlap.
#[derive(Debug, Default)]
struct InFlight {
    now: AtomicUsize,
    max: AtomicUsize,
    calls: AtomicUsize,
}

impl InFlight {
    fn tool(self: &Arc<Self>, name: &str) -> Tool {
        let probe = Arc::clone(self);
        Tool::from_fn(
            ToolInfo::new(name, "Counts overlapping calls."),
            move |req: ToolRequest| {
                let probe = Arc::clone(&probe);
                async move {
                    let now = probe.now.fetch_add(1, Ordering::SeqCst) + 1;
                    probe.max.fetch_max(now, Ordering::SeqCst);
                    for _ in 0..8 {
                        tokio::task::yield_now().await;
                    }
                    probe.now.fetch_sub(1, Ordering::SeqCst);
                    probe.calls.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, Infallible>(ToolOutput::new(req.call_id))
                }
            },
        )
    }

    fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

fn calls_of(tool: &str, ids: &[&str]) -> Vec<ToolCall> {
    ids.iter()
        .map(|id| ToolCall::new(*id, tool, json!({})))
        .collect()
}

#[tokio::test]
async fn without_a_limit_the_probe_sees_calls_overlap() {
    // The control for the two tests below: the same calls do overlap when nothing limits
    // them.
    let probe = Arc::new(InFlight::default());
    let model = ScriptedModel::new([
        Turn::calls(calls_of("probe", &["c1", "c2", "c3"])),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(probe.tool("probe"))
        .build()
        .unwrap();

    agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(probe.calls(), 3);
    assert_eq!(probe.max(), 3);
}

#[tokio::test]
async fn a_tower_concurrency_limit_as_tool_wrapper_serialises_the_calls_of_a_turn() {
    let probe = Arc::new(InFlight::default());
    let model = ScriptedModel::new([
        Turn::calls(calls_of("probe", &["c1", "c2", "c3", "c4"])),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(probe.tool("probe"))
        .build()
        .unwrap();
    let limit = tool_layer(ConcurrencyLimitLayer::new(1));

    let result = agent
        .run(AgentRequest::user("go").with_handler(limit))
        .await
        .unwrap();

    assert_eq!(probe.calls(), 4);
    assert_eq!(probe.max(), 1);
    assert!(result.tool_records.iter().all(|r| r.is_success()));
    assert_eq!(result.final_message.content(), "done");
}

#[tokio::test]
async fn a_tower_concurrency_limit_on_one_tool_serialises_only_that_tool() {
    let limited = Arc::new(InFlight::default());
    let free = Arc::new(InFlight::default());
    let mut calls = calls_of("limited", &["l1", "l2", "l3"]);
    calls.extend(calls_of("free", &["f1", "f2", "f3"]));
    let model = ScriptedModel::new([Turn::calls(calls), Turn::text("done")]);
    let agent = Agent::builder(model)
        .tool(limited.tool("limited").layer(ConcurrencyLimitLayer::new(1)))
        .tool(free.tool("free"))
        .build()
        .unwrap();

    agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(limited.calls(), 3);
    assert_eq!(limited.max(), 1);
    assert_eq!(free.calls(), 3);
    assert_eq!(free.max(), 3);
}

/// Retries a failed call up to `left` more times, at once.
#[derive(Debug, Clone)]
struct RetryErrors {
    left: usize,
}

impl<Res> Policy<ModelRequest, Res, BoxError> for RetryErrors {
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        _: &mut ModelRequest,
        result: &mut Result<Res, BoxError>,
    ) -> Option<Self::Future> {
        if result.is_err() && self.left > 0 {
            self.left -= 1;
            Some(std::future::ready(()))
        } else {
            None
        }
    }

    fn clone_request(&mut self, request: &ModelRequest) -> Option<ModelRequest> {
        Some(request.clone())
    }
}

#[tokio::test]
async fn a_tower_retry_around_the_model_makes_a_flaky_model_succeed() {
    let model = ScriptedModel::new([
        Turn::error("overloaded"),
        Turn::call("c1", "echo", json!({"n": 1})),
        Turn::error("overloaded"),
        Turn::error("overloaded"),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .build()
        .unwrap();
    let retry = model_layer(RetryLayer::new(RetryErrors { left: 2 }));

    let result = agent
        .run(AgentRequest::user("go").with_handler(retry))
        .await
        .unwrap();

    assert_eq!(result.final_message.content(), "done");
    assert_eq!(model.calls(), 5);
    // Two model calls as the loop counts them; the retries are inside each.
    assert_eq!(result.iterations, 2);
    assert_eq!(result.tool_records.len(), 1);
}

#[tokio::test]
async fn a_tower_retry_around_the_model_gives_up_after_its_budget() {
    let model = ScriptedModel::new([
        Turn::error("down 1"),
        Turn::error("down 2"),
        Turn::error("down 3"),
        Turn::text("too late"),
    ]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let retry = model_layer(RetryLayer::new(RetryErrors { left: 2 }));

    let error = agent
        .run(AgentRequest::user("go").with_handler(retry))
        .await
        .unwrap_err();

    let AgentError::Model(source) = &error else {
        panic!("expected a model error: {error:?}");
    };
    assert_eq!(
        source.downcast_ref::<ScriptedError>(),
        Some(&ScriptedError("down 3".into()))
    );
    assert_eq!(model.calls(), 3);
}

#[tokio::test]
async fn the_retry_policy_sees_the_model_error_as_a_model_error() {
    // Documented: errors of the model reach a model layer wrapped in `ModelError`.
    #[derive(Clone)]
    struct Inspect(Arc<AtomicUsize>);
    impl<Res> Policy<ModelRequest, Res, BoxError> for Inspect {
        type Future = std::future::Ready<()>;
        fn retry(
            &mut self,
            _: &mut ModelRequest,
            r: &mut Result<Res, BoxError>,
        ) -> Option<Self::Future> {
            if let Err(e) = r {
                let model_error = e.downcast_ref::<ModelError>().unwrap();
                assert!(model_error.get_ref().is::<ScriptedError>());
                self.0.fetch_add(1, Ordering::SeqCst);
            }
            None
        }
        fn clone_request(&mut self, request: &ModelRequest) -> Option<ModelRequest> {
            Some(request.clone())
        }
    }
    let seen = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([Turn::error("nope")]);
    let agent = Agent::builder(model).build().unwrap();
    let inspect = model_layer(RetryLayer::new(Inspect(Arc::clone(&seen))));

    let error = agent
        .run(AgentRequest::user("go").with_handler(inspect))
        .await
        .unwrap_err();

    assert!(matches!(error, AgentError::Model(_)), "{error:?}");
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn stock_tower_middleware_around_the_model_before_building_the_agent_works() {
    let model = ScriptedModel::new([Turn::call("c1", "echo", json!({})), Turn::text("done")]);
    let wrapped = ServiceBuilder::new()
        .timeout(Duration::from_secs(60))
        .concurrency_limit(4)
        .service(model.clone());
    let agent = Agent::builder(wrapped)
        .tool(echo_tool("echo"))
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(result.final_message.content(), "done");
    assert_eq!(model.calls(), 2);
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

#[tokio::test]
async fn a_tower_timeout_around_the_model_fails_the_run_with_a_model_error() {
    // A model whose call never answers.
    let hanging = tower::service_fn(
        |_: ModelRequest| -> BoxFuture<Result<ModelResponse, BoxError>> {
            Box::pin(std::future::pending())
        },
    );
    let wrapped = ServiceBuilder::new()
        .timeout(Duration::from_millis(10))
        .service(hanging);
    let agent = Agent::builder(wrapped).build().unwrap();

    let error = tokio::time::timeout(Duration::from_secs(60), agent.run(AgentRequest::user("go")))
        .await
        .expect("the model call was never timed out")
        .unwrap_err();

    let AgentError::Model(source) = &error else {
        panic!("expected a model error: {error:?}");
    };
    assert!(source.is::<tower::timeout::error::Elapsed>(), "{source:?}");
}
