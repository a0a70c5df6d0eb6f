//! Dropping a run cancels what it has in flight.

use std::convert::Infallible;
use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tokio::sync::Notify;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, Tool, ToolInfo, ToolOutput};

/// Sets its flag when dropped.
struct DropGuard(Arc<AtomicBool>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Probe {
    entered: Notify,
    release: Notify,
    guard_dropped: Arc<AtomicBool>,
    after_await: AtomicBool,
}

/// A tool that holds a guard, says it has started, and waits for `release`.
fn blocking_tool(probe: &Arc<Probe>) -> Tool {
    let probe = Arc::clone(probe);
    Tool::from_fn(ToolInfo::new("block", "Waits for the test."), move |_| {
        let probe = Arc::clone(&probe);
        async move {
            let _guard = DropGuard(Arc::clone(&probe.guard_dropped));
            probe.entered.notify_one();
            probe.release.notified().await;
            probe.after_await.store(true, Ordering::SeqCst);
            Ok::<_, Infallible>(ToolOutput::new("released"))
        }
    })
}

fn agent(probe: &Arc<Probe>, model: &ScriptedModel) -> Agent {
    Agent::builder(model.clone())
        .tool(blocking_tool(probe))
        .build()
        .unwrap()
}

fn script() -> ScriptedModel {
    ScriptedModel::new([Turn::call("c1", "block", json!({})), Turn::text("done")])
}

#[tokio::test]
async fn dropping_the_awaited_run_mid_tool_cancels_the_tool() {
    let probe = Arc::new(Probe::default());
    let model = script();
    // `AgentRun` is both a `Stream` and `IntoFuture`; name the trait to get the future.
    let mut run = IntoFuture::into_future(agent(&probe, &model).run(AgentRequest::user("go")));

    let entered = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::select! {
            result = &mut run => panic!("the run ended while its tool was blocked: {result:?}"),
            () = probe.entered.notified() => {}
        }
    });
    entered.await.expect("the tool never started");
    assert!(!probe.guard_dropped.load(Ordering::SeqCst));

    drop(run);
    // Synchronously: nothing of the run is left running elsewhere.
    assert!(probe.guard_dropped.load(Ordering::SeqCst));

    probe.release.notify_waiters();
    tokio::task::yield_now().await;
    assert!(!probe.after_await.load(Ordering::SeqCst));
    assert_eq!(model.calls(), 1);
}

#[tokio::test]
async fn dropping_the_event_stream_mid_tool_cancels_the_tool() {
    let probe = Arc::new(Probe::default());
    let model = script();
    let mut run = agent(&probe, &model).run(AgentRequest::user("go"));

    // Read events until the tool has started, then stop reading and poll once more so
    // the tool's body is entered.
    let started = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match run.next().await {
                Some(Ok(AgentEvent::ToolCallStarted { call_id, .. })) => break call_id,
                Some(Ok(_)) => {}
                other => panic!("unexpected: {other:?}"),
            }
        }
    })
    .await
    .expect("the tool call never started");
    assert_eq!(&*started, "c1");
    tokio::select! {
        event = run.next() => panic!("the run moved on while its tool was blocked: {event:?}"),
        () = probe.entered.notified() => {}
    }

    drop(run);
    assert!(probe.guard_dropped.load(Ordering::SeqCst));
    probe.release.notify_waiters();
    tokio::task::yield_now().await;
    assert!(!probe.after_await.load(Ordering::SeqCst));
    assert_eq!(model.calls(), 1);
}
