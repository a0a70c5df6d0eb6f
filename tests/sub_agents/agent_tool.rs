//! A billing agent behind a role filter, called as a tool by a support agent.

use serde_json::json;
use tower::ServiceBuilder;
use tower_adk::compose::{AgentTool, SubAgentEvent};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, HandlerLayer, ToolErrorKind, ToolRecord, handlers,
};

use crate::drain;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Viewer,
    Admin,
}

/// Support, whose model asks billing for a refund; billing, whose model calls its admin
/// tool, behind a filter that keeps that tool for admins only.
fn support_desk(billing_model: &ScriptedModel) -> (ScriptedModel, Agent) {
    let billing = Agent::builder(billing_model.clone())
        .name("billing")
        .instruction("You handle billing.")
        .tool(text_tool("invoice", "invoice 7: 40 EUR, paid"))
        .tool(text_tool("refund_admin", "refunded 40 EUR on invoice 7"))
        .build()
        .unwrap();
    let admin_only = handlers::filter_tools(|ext, tool| {
        tool.name() != "refund_admin" || ext.get::<Role>() == Some(&Role::Admin)
    });
    let billing = ServiceBuilder::new()
        .layer(HandlerLayer::new(admin_only))
        .service(billing);
    let support_model = ScriptedModel::new([
        Turn::call("c1", "billing", json!({"request": "Refund invoice 7"})),
        Turn::text("Billing has answered."),
    ]);
    let support = Agent::builder(support_model.clone())
        .name("support")
        .tool(
            AgentTool::named("billing", billing)
                .description("Billing questions and refunds")
                .into_tool(),
        )
        .build()
        .unwrap();
    (support_model, support)
}

/// The billing agent's tool results, as the caller's run reported them.
fn nested_records(events: &[AgentEvent]) -> Vec<ToolRecord> {
    events
        .iter()
        .filter_map(SubAgentEvent::of)
        .filter_map(|nested| match &nested.event {
            AgentEvent::ToolResult(record) => Some((**record).clone()),
            _ => None,
        })
        .collect()
}

fn billing_model() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call("b1", "refund_admin", json!({})),
        Turn::text("Done what I could."),
    ])
}

#[tokio::test]
async fn a_viewer_cannot_reach_the_billing_admin_tool_through_the_support_agent() {
    let billing_model = billing_model();
    let (_, support) = support_desk(&billing_model);

    let request = AgentRequest::user("Refund invoice 7").with_extension(Role::Viewer);
    let (events, result) = drain(support.run(request)).await;

    // Billing's model was not offered the admin tool, and its call of it did not run.
    let offered: Vec<String> = billing_model.requests()[0]
        .tool_names()
        .map(str::to_owned)
        .collect();
    assert_eq!(offered, ["invoice"]);
    let refused = nested_records(&events);
    assert_eq!(refused.len(), 1);
    assert_eq!(
        refused[0].error.as_ref().map(|e| e.kind()),
        Some(ToolErrorKind::UnknownTool)
    );
    // The support agent's model reads billing's final answer as the call's result.
    assert_eq!(
        result.tool_record("c1").unwrap().content,
        "Done what I could."
    );
    assert_eq!(result.final_message.content(), "Billing has answered.");
}

#[tokio::test]
async fn an_admin_reaches_the_billing_admin_tool_through_the_support_agent() {
    let billing_model = billing_model();
    let (_, support) = support_desk(&billing_model);

    let request = AgentRequest::user("Refund invoice 7").with_extension(Role::Admin);
    let (events, _) = drain(support.run(request)).await;

    let offered: Vec<String> = billing_model.requests()[0]
        .tool_names()
        .map(str::to_owned)
        .collect();
    assert_eq!(offered, ["invoice", "refund_admin"]);
    let records = nested_records(&events);
    assert!(records[0].is_success());
    assert_eq!(records[0].content, "refunded 40 EUR on invoice 7");
}

#[tokio::test]
async fn the_sub_agents_text_streams_as_the_calls_chunks_between_its_start_and_its_result() {
    let billing = Agent::builder(ScriptedModel::new([Turn::stream([
        "Invoice 7 ",
        "is ",
        "paid.",
    ])]))
    .name("billing")
    .build()
    .unwrap();
    let support = Agent::builder(ScriptedModel::new([
        Turn::call("c1", "billing", json!({"request": "Is invoice 7 paid?"})),
        Turn::text("It is paid."),
    ]))
    .tool(billing.as_tool("Billing questions"))
    .build()
    .unwrap();

    let (events, result) = drain(support.run(AgentRequest::user("Is invoice 7 paid?"))).await;

    let position = |find: &dyn Fn(&AgentEvent) -> bool| events.iter().position(find).unwrap();
    let started = position(&|e| matches!(e, AgentEvent::ToolCallStarted { .. }));
    let finished = position(&|e| matches!(e, AgentEvent::ToolResult(_)));
    let chunks: Vec<(usize, &str)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((i, e.output_chunk()?)))
        .collect();
    assert_eq!(
        chunks.iter().map(|c| c.1).collect::<Vec<_>>(),
        ["Invoice 7 ", "is ", "paid."]
    );
    assert!(chunks.iter().all(|(i, _)| started < *i && *i < finished));
    // Each chunk comes right after the nested event it belongs to.
    for (at, chunk) in &chunks {
        let nested = SubAgentEvent::of(&events[at - 1]).expect("a nested event");
        assert_eq!(&*nested.agent, "billing");
        assert_eq!(nested.event.text_delta(), Some(*chunk));
    }
    // Every nested event, the billing run's `Completed` last.
    let nested: Vec<&SubAgentEvent> = events.iter().filter_map(SubAgentEvent::of).collect();
    assert!(matches!(
        nested.last().unwrap().event,
        AgentEvent::Completed(_)
    ));
    assert_eq!(
        result.tool_record("c1").unwrap().content,
        "Invoice 7 is paid."
    );
}

#[tokio::test]
async fn the_nested_events_have_a_json_form_on_the_wire() {
    let billing = Agent::builder(ScriptedModel::new([Turn::text("paid")]))
        .name("billing")
        .build()
        .unwrap();
    let support = Agent::builder(ScriptedModel::new([
        Turn::call("c1", "billing", json!({"request": "paid?"})),
        Turn::text("ok"),
    ]))
    .tool(billing.as_tool("Billing questions"))
    .build()
    .unwrap();
    let (events, _) = drain(support.run(AgentRequest::user("paid?"))).await;

    let wire: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| SubAgentEvent::of(e).is_some())
        .map(|e| serde_json::to_value(tower_adk::wire::WireEvent::from(e)).unwrap())
        .collect();
    let message = wire
        .iter()
        .find(|w| w["event"]["event"]["type"] == "message")
        .expect("billing's reply, nested");
    assert_eq!(message["type"], "tool_event");
    assert_eq!(message["call_id"], "c1");
    assert_eq!(message["event"]["agent"], "billing");
    assert_eq!(message["event"]["event"]["message"]["content"], "paid");
}

#[tokio::test]
async fn a_failed_sub_agent_run_is_a_failed_call_the_caller_reads() {
    let broken = Agent::builder(ScriptedModel::new([Turn::error("billing is down")]))
        .name("billing")
        .build()
        .unwrap();
    let support = Agent::builder(ScriptedModel::new([
        Turn::call("c1", "billing", json!({"request": "paid?"})),
        Turn::text("Billing is unavailable."),
    ]))
    .tool(broken.as_tool("Billing questions"))
    .build()
    .unwrap();

    let result = support.run(AgentRequest::user("paid?")).await.unwrap();
    let record = result.tool_record("c1").unwrap();
    assert_eq!(record.error.as_ref().unwrap().kind(), ToolErrorKind::Failed);
    assert!(
        record.content.contains("billing is down"),
        "{}",
        record.content
    );
}

#[tokio::test]
async fn the_result_can_be_the_sub_agents_filled_slots() {
    let intake = Agent::builder(ScriptedModel::new([Turn::text("Got it.")]))
        .name("intake")
        .build()
        .unwrap();
    let tool = tower_adk::compose::AgentTool::new(intake)
        .result_with(|result| format!("{} iteration(s)", result.iterations))
        .into_tool();
    let support = Agent::builder(ScriptedModel::new([
        Turn::call("c1", "intake", json!({"request": "name?"})),
        Turn::text("ok"),
    ]))
    .tool(tool)
    .build()
    .unwrap();
    let result = support.run(AgentRequest::user("hi")).await.unwrap();
    assert_eq!(result.tool_record("c1").unwrap().content, "1 iteration(s)");
}

/// A streaming tool that says, at its first chunk, whether its report is read.
fn read_probe(seen: std::sync::Arc<std::sync::Mutex<Vec<bool>>>) -> tower_adk::Tool {
    use tower_adk::tool::ToolReport;
    use tower_adk::{Tool, ToolInfo, ToolStream};
    Tool::streaming(
        ToolInfo::new("probe", "says whether it is read"),
        tower::service_fn(move |_| {
            let seen = std::sync::Arc::clone(&seen);
            async move {
                let report = ToolReport::new();
                let probe = report.clone();
                let chunks = futures::stream::once(async move {
                    seen.lock().unwrap().push(probe.is_read());
                    Ok::<_, std::convert::Infallible>("x")
                });
                Ok::<_, std::convert::Infallible>(ToolStream::new(chunks).reporting(report))
            }
        }),
    )
}

#[tokio::test]
async fn a_streaming_tool_knows_whether_its_events_are_read() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let agent = Agent::builder(ScriptedModel::per_run([
        Turn::call("c1", "probe", json!({})),
        Turn::text("ok"),
    ]))
    .tool(read_probe(std::sync::Arc::clone(&seen)))
    .build()
    .unwrap();

    drain(agent.run(AgentRequest::user("read"))).await;
    agent.run(AgentRequest::user("awaited")).await.unwrap();

    assert_eq!(*seen.lock().unwrap(), [true, false]);
}
