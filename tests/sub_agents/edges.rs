//! The edges of the compositions: steps without a result, threads, handler order,
//! interrupts in several branches or nested workflows, empty workflows.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::stream;
use serde_json::json;
use tower::ServiceBuilder;
use tower_adk::checkpoint::MemoryStore;
use tower_adk::compose::{Loop, Parallel, Sequential};

use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentConfig, AgentError, AgentEvent, AgentRequest, AgentRun, BoxError, BuildError,
    Handler, HandlerLayer, Message, RunContext, RunStatus,
};

use crate::drain;
use crate::interrupts::refund_tool;

fn agent(name: &str, model: &ScriptedModel) -> Agent {
    Agent::builder(model.clone()).name(name).build().unwrap()
}

/// An agent that asks to refund, then answers `answer` once approved.
fn gated(name: &str, answer: &str, refunds: &Arc<AtomicUsize>) -> Agent {
    let model = ScriptedModel::new([Turn::call("c1", "refund", json!({})), Turn::text(answer)]);
    Agent::builder(model)
        .name(name)
        .tool(refund_tool(Arc::clone(refunds)))
        .checkpoints(MemoryStore::new())
        .build()
        .unwrap()
}

/// A service whose first run is `first`'s, and whose later runs end without a result.
fn then_no_result(
    first: Agent,
) -> impl tower::Service<
    AgentRequest,
    Response = AgentRun,
    Error = Infallible,
    Future = impl Send + 'static,
> + Clone
+ Send
+ Sync
+ 'static {
    let calls = Arc::new(AtomicUsize::new(0));
    tower::service_fn(move |request: AgentRequest| {
        let run = if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            first.run(request)
        } else {
            let event = AgentEvent::Message(Message::assistant("no result follows"));
            AgentRun::from_events(stream::iter([Ok(event)]))
        };
        async move { Ok::<_, Infallible>(run) }
    })
}

#[tokio::test]
async fn a_step_or_round_that_ends_without_a_result_fails_the_run() {
    let writer = agent("writer", &ScriptedModel::per_run([Turn::text("Draft")]));
    let silent = then_no_result(agent("silent", &ScriptedModel::new([])));
    // The silent step's first call is spent by a first workflow; its second has no result.
    let flow = Sequential::new()
        .then(writer.clone())
        .then_named("silent", silent.clone());
    let _ = flow.run(AgentRequest::user("warm up")).await;
    let error = flow.run(AgentRequest::user("Write")).await.unwrap_err();
    assert!(matches!(error, AgentError::Incomplete), "{error:?}");

    let body = then_no_result(writer);
    let rounds = Loop::named("writer", body).max_rounds(3);
    let error = rounds.run(AgentRequest::user("Write")).await.unwrap_err();
    assert!(matches!(error, AgentError::Incomplete), "{error:?}");
}

#[tokio::test]
async fn a_composition_refuses_a_request_on_a_thread() {
    let model = ScriptedModel::new([Turn::text("hi")]);
    let flow = Sequential::new().then(agent("one", &model));
    let error = flow
        .run(AgentRequest::user("hello").on_thread("t1"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, AgentError::Config(BuildError::CompositionOnThread(t)) if t == "t1"),
        "{error:?}"
    );
    assert_eq!(model.calls(), 0);
}

/// Records its label when a run starts.
struct Label(&'static str, Arc<Mutex<Vec<&'static str>>>);

impl Handler for Label {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed(self.0)
    }

    async fn before_agent(
        &self,
        _: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        self.1.lock().unwrap().push(self.0);
        Ok(config)
    }
}

#[tokio::test]
async fn every_step_sees_the_handlers_in_the_same_order() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let step = |name: &str| {
        ServiceBuilder::new()
            .layer(HandlerLayer::new(Label("step", Arc::clone(&seen))))
            .service(agent(name, &ScriptedModel::new([Turn::text(name)])))
    };
    let flow = ServiceBuilder::new()
        .layer(HandlerLayer::new(Label("outer", Arc::clone(&seen))))
        .service(
            Sequential::new()
                .then_named("one", step("one"))
                .then_named("two", step("two")),
        );
    let mut request = AgentRequest::user("go");
    request
        .handlers_mut()
        .push(Label("request", Arc::clone(&seen)).into());
    let run = tower::ServiceExt::oneshot(flow, request).await.unwrap();
    run.await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        ["outer", "step", "request", "outer", "step", "request"]
    );
}

#[tokio::test]
async fn a_parallel_run_with_two_interrupted_branches_lists_what_it_can_resume() {
    let refunds = Arc::new(AtomicUsize::new(0));
    let trip = Parallel::new()
        .branch(gated("a", "A done", &refunds))
        .branch(gated("b", "B done", &refunds));

    let (_, stopped) = drain(trip.run(AgentRequest::user("Refund both"))).await;
    assert_eq!(stopped.status, RunStatus::Interrupted);
    let ids: Vec<&str> = stopped.interrupts.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["agent:a/tool:c1"]);

    let decisions = stopped
        .interrupts
        .iter()
        .map(|i| (i.id.clone(), Decision::Approve));
    let resume = AgentRequest::resume(stopped.checkpoint.clone().unwrap(), decisions);
    let (_, done) = drain(trip.run(resume)).await;
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(done.final_message.content(), "A done");
    assert_eq!(refunds.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_loop_around_a_sequential_workflow_resumes_the_step_that_stopped() {
    let refunds = Arc::new(AtomicUsize::new(0));
    let writer = agent("writer", &ScriptedModel::per_run([Turn::text("Draft")]));
    let review = Sequential::new()
        .then(writer)
        .then(gated("critic", "Good.", &refunds));
    let rounds = Loop::named("review", review).max_rounds(1);

    let (_, stopped) = drain(rounds.run(AgentRequest::user("Write"))).await;
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(stopped.interrupts[0].id, "agent:critic/tool:c1");

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [("agent:critic/tool:c1", Decision::Approve)],
    );
    let (_, done) = drain(rounds.run(resume)).await;
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(done.final_message.content(), "Good.");
    assert_eq!(refunds.load(Ordering::SeqCst), 1);

    // A Sequential inside a Sequential is resumed the same way.
    let inner = Sequential::new().then(gated("critic", "Fine.", &refunds));
    let outer = Sequential::new().then_named("inner", inner);
    let (_, stopped) = drain(outer.run(AgentRequest::user("Write"))).await;
    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [("agent:critic/tool:c1", Decision::Approve)],
    );
    let (_, done) = drain(outer.run(resume)).await;
    assert_eq!(done.final_message.content(), "Fine.");
}

#[tokio::test]
async fn a_workflow_with_two_agents_of_one_name_is_refused() {
    let model = ScriptedModel::new([Turn::text("hi")]);
    let flow = Sequential::new()
        .then(agent("same", &model))
        .then(agent("same", &model));
    let error = flow.run(AgentRequest::user("go")).await.unwrap_err();
    assert!(
        matches!(&error, AgentError::Config(BuildError::DuplicateAgent(n)) if n == "same"),
        "{error:?}"
    );
    assert_eq!(model.calls(), 0);
}

#[tokio::test]
async fn empty_workflows_are_refused_alike() {
    let empty = |error: AgentError| matches!(error, AgentError::Config(BuildError::EmptyWorkflow));
    let sequential = Sequential::new().run(AgentRequest::user("go")).await;
    assert!(empty(sequential.unwrap_err()));
    let parallel = Parallel::new().run(AgentRequest::user("go")).await;
    assert!(empty(parallel.unwrap_err()));
}

#[tokio::test]
async fn a_resumed_round_counts_as_the_round_it_was() {
    let refunds = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::text("Draft 1"),
        Turn::call("c1", "refund", json!({})),
        Turn::text("Draft 2"),
        Turn::text("Draft 3"),
    ]);
    let writer = Agent::builder(model.clone())
        .name("writer")
        .tool(refund_tool(Arc::clone(&refunds)))
        .checkpoints(MemoryStore::new())
        .build()
        .unwrap();
    let rounds = Loop::new(writer).max_rounds(2);

    let (_, stopped) = drain(rounds.run(AgentRequest::user("Write"))).await;
    assert_eq!(stopped.status, RunStatus::Interrupted);
    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [("agent:writer/tool:c1", Decision::Approve)],
    );
    let (_, done) = drain(rounds.run(resume)).await;
    // The resumed round was the second and last: no third round.
    assert_eq!(done.final_message.content(), "Draft 2");
    assert_eq!(model.calls(), 3);
    // The loop's bookkeeping does not leak into the result's values.
    assert!(done.locals.is_empty());
}
