//! Sequential, parallel and loop workflows: services like an agent, so they nest and
//! take tower layers.

use serde_json::json;
use tower::limit::ConcurrencyLimitLayer;
use tower::{ServiceBuilder, ServiceExt};
use tower_adk::compose::{Loop, Parallel, Sequential};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, AwaitRunLayer, Message, RunStatus};

use crate::drain;

fn agent(name: &str, model: &ScriptedModel) -> Agent {
    Agent::builder(model.clone()).name(name).build().unwrap()
}

#[tokio::test]
async fn a_sequential_workflow_passes_each_answer_to_the_next_agent() {
    let researcher = ScriptedModel::new([Turn::text("Facts: tower has layers.")]);
    let writer = ScriptedModel::new([Turn::text("Tower composes layers.")]);
    let flow = Sequential::new()
        .then(agent("researcher", &researcher))
        .then(agent("writer", &writer));

    let (events, result) = drain(flow.run(AgentRequest::user("Explain tower"))).await;

    assert_eq!(result.final_message.content(), "Tower composes layers.");
    let seen: Vec<String> = writer.requests()[0]
        .messages
        .iter()
        .map(|m| m.content().to_owned())
        .collect();
    assert_eq!(seen, ["Explain tower", "Facts: tower has layers."]);
    let replies: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Message(m) => Some(m.content()),
            _ => None,
        })
        .collect();
    assert_eq!(
        replies,
        ["Facts: tower has layers.", "Tower composes layers."]
    );
}

#[tokio::test]
async fn a_parallel_workflow_runs_every_branch_and_merges_their_answers() {
    let flights =
        ScriptedModel::new([Turn::call("c1", "search", json!({})), Turn::text("AF 1234")]);
    let hotels = ScriptedModel::new([Turn::text("Hotel du Nord")]);
    let flights_agent = Agent::builder(flights.clone())
        .name("flights")
        .tool(tower_adk::testing::text_tool("search", "1 flight"))
        .build()
        .unwrap();
    let trip = Parallel::new()
        .branch(flights_agent)
        .branch(agent("hotels", &hotels));

    let (events, result) = drain(trip.run(AgentRequest::user("Paris trip"))).await;

    assert_eq!(
        result.final_message,
        Message::assistant("flights: AF 1234\n\nhotels: Hotel du Nord")
    );
    assert_eq!(result.model_calls, 3);
    assert_eq!(result.tool_records.len(), 1);
    assert_eq!(result.messages.len(), 2);
    assert_eq!(result.status, RunStatus::Completed);
    // Both branches saw the request.
    assert_eq!(hotels.requests()[0].messages[0].content(), "Paris trip");
    assert_eq!(flights.requests()[0].messages[0].content(), "Paris trip");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolResult(r) if r.name == "search"))
    );
}

#[tokio::test]
async fn a_loop_runs_until_its_condition_holds() {
    let model = ScriptedModel::new([
        Turn::text("draft"),
        Turn::text("better draft"),
        Turn::text("APPROVED draft"),
        Turn::text("never reached"),
    ]);
    let refine = Loop::new(agent("writer", &model))
        .until(|result| result.final_message.content().starts_with("APPROVED"));

    let result = refine.run(AgentRequest::user("Write")).await.unwrap();

    assert_eq!(result.final_message.content(), "APPROVED draft");
    assert_eq!(model.calls(), 3);
    // Each round went on from the one before.
    assert_eq!(model.requests()[2].messages.len(), 3);
}

#[tokio::test]
async fn a_loop_stops_at_its_stop_tool_or_its_bound() {
    let model = ScriptedModel::new([
        Turn::text("one"),
        Turn::call("c1", "exit_loop", json!({"answer": "done"})),
    ]);
    let stopping = Loop::new(agent("writer", &model)).stop_tool("exit_loop");
    let result = stopping.run(AgentRequest::user("go")).await.unwrap();
    assert_eq!(result.final_message.content(), "done");
    assert_eq!(
        model.requests()[1].tool_names().collect::<Vec<_>>(),
        ["exit_loop"]
    );

    let endless = ScriptedModel::new((0..5).map(|_| Turn::text("again")));
    let bounded = Loop::new(agent("writer", &endless)).max_rounds(3);
    let result = bounded.run(AgentRequest::user("go")).await.unwrap();
    assert_eq!(endless.calls(), 3);
    assert_eq!(result.final_message.content(), "again");
}

#[tokio::test]
async fn workflows_nest_and_take_tower_layers() {
    let a = ScriptedModel::new([Turn::text("a")]);
    let b = ScriptedModel::new([Turn::text("b")]);
    let c = ScriptedModel::new([Turn::text("c")]);
    let inner = Parallel::new()
        .branch(agent("a", &a))
        .branch(agent("b", &b));
    let flow = Sequential::new()
        .then_named("fan_out", inner)
        .then(agent("c", &c));
    let service = ServiceBuilder::new()
        .layer(AwaitRunLayer)
        .layer(ConcurrencyLimitLayer::new(1))
        .service(flow);

    let result = service.oneshot(AgentRequest::user("go")).await.unwrap();

    assert_eq!(result.final_message.content(), "c");
    // The last agent saw the merged answer of the parallel step.
    let seen = c.requests()[0]
        .messages
        .last()
        .unwrap()
        .content()
        .to_owned();
    assert_eq!(seen, "a: a\n\nb: b");
}

#[tokio::test]
async fn a_sequential_workflow_stopped_at_an_interrupt_resumes_that_agent_and_goes_on() {
    use tower_adk::interrupt::{Decision, Interrupt};
    use tower_adk::{Tool, ToolInfo, ToolOutput, ToolRequest};

    let publish = Tool::from_fn(
        ToolInfo::new("publish", "Publishes"),
        |request: ToolRequest| async move {
            if request.decision().is_none() {
                return Err(Interrupt::new(json!({"question": "Publish?"})).into());
            }
            Ok::<_, tower_adk::BoxError>(ToolOutput::new("published"))
        },
    );
    let editor_model = ScriptedModel::new([
        Turn::call("c1", "publish", json!({})),
        Turn::text("Published."),
    ]);
    let editor = Agent::builder(editor_model)
        .name("editor")
        .tool(publish)
        .build()
        .unwrap();
    let notifier = ScriptedModel::new([Turn::text("Subscribers told.")]);
    let flow = Sequential::new()
        .then(editor)
        .then(agent("notifier", &notifier));

    let stopped = flow
        .run(AgentRequest::user("Publish the post"))
        .await
        .unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(stopped.interrupts[0].id, "agent:editor/tool:c1");
    assert_eq!(notifier.calls(), 0);

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [("agent:editor/tool:c1", Decision::Approve)],
    );
    let done = flow.run(resume).await.unwrap();
    assert_eq!(done.final_message.content(), "Subscribers told.");
    let seen = notifier.requests()[0]
        .messages
        .last()
        .unwrap()
        .content()
        .to_owned();
    assert_eq!(seen, "Published.");
}
