//! The agent's second face, `AwaitRun`: stock tower layers around it bound whole runs,
//! where around the agent itself they bound only the start of each run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tower::limit::ConcurrencyLimitLayer;
use tower::timeout::TimeoutLayer;
use tower::{Service, ServiceBuilder, ServiceExt};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, AwaitRun, AwaitRunLayer, Tool, ToolInfo, ToolOutput};

/// Leaves the tool when the call ends or is dropped.
struct Inside(Arc<AtomicUsize>);

impl Drop for Inside {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An agent whose every run calls `work` once (which takes 200 ms), then answers. The
/// counters tell how many runs are inside the tool at once, and the most there ever were.
fn agent(open: &Arc<AtomicUsize>, most: &Arc<AtomicUsize>) -> Agent {
    let (open, most) = (Arc::clone(open), Arc::clone(most));
    let work = Tool::from_fn(ToolInfo::new("work", "Works a while."), move |_| {
        let (open, most) = (Arc::clone(&open), Arc::clone(&most));
        async move {
            most.fetch_max(open.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
            let _inside = Inside(open);
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok::<_, std::convert::Infallible>(ToolOutput::new("worked"))
        }
    });
    let model = ScriptedModel::per_run([Turn::call("c1", "work", json!({})), Turn::text("done")]);
    Agent::builder(model).tool(work).build().unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_concurrency_limit_around_await_run_bounds_whole_runs() {
    let (open, most) = (Arc::default(), Arc::default());
    let service = ServiceBuilder::new()
        .layer(ConcurrencyLimitLayer::new(2))
        .layer(AwaitRunLayer)
        .service(agent(&open, &most));

    let runs = (0..6).map(|_| service.clone().oneshot(AgentRequest::user("go")));
    let results = futures::future::join_all(runs).await;

    assert!(
        results
            .iter()
            .all(|r| r.as_ref().unwrap().final_message.content() == "done")
    );
    assert_eq!(most.load(Ordering::SeqCst), 2, "at most two runs at once");
}

#[tokio::test(start_paused = true)]
async fn a_concurrency_limit_around_the_agent_bounds_only_the_start_of_runs() {
    let (open, most) = (Arc::default(), Arc::default());
    let service = ServiceBuilder::new()
        .layer(ConcurrencyLimitLayer::new(2))
        .service(agent(&open, &most));

    let runs = (0..6).map(|_| async {
        let run = service
            .clone()
            .oneshot(AgentRequest::user("go"))
            .await
            .unwrap();
        run.await
    });
    let results = futures::future::join_all(runs).await;

    assert!(results.iter().all(Result::is_ok));
    assert_eq!(
        most.load(Ordering::SeqCst),
        6,
        "the limit let every run go on"
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_around_await_run_bounds_the_whole_run() {
    let (open, most) = (Arc::default(), Arc::default());
    let mut service = ServiceBuilder::new()
        .layer(TimeoutLayer::new(Duration::from_millis(100)))
        .layer(AwaitRunLayer)
        .service(agent(&open, &most));

    let error = service
        .ready()
        .await
        .unwrap()
        .call(AgentRequest::user("go"))
        .await
        .unwrap_err();

    assert!(error.is::<tower::timeout::error::Elapsed>(), "{error}");
    assert_eq!(
        open.load(Ordering::SeqCst),
        0,
        "the run in flight was dropped"
    );
}

#[tokio::test]
async fn await_run_wraps_an_agent_inside_handler_layers() {
    let (open, most) = (Arc::default(), Arc::default());
    let layered = ServiceBuilder::new()
        .layer(tower_adk::HandlerLayer::new(
            tower_adk::handlers::instruction("Be brief."),
        ))
        .service(agent(&open, &most));

    let result = AwaitRun::new(layered)
        .oneshot(AgentRequest::user("go"))
        .await
        .unwrap();

    assert_eq!(result.messages[0].content(), "Be brief.");
    assert_eq!(result.final_message.content(), "done");
}
