//! Handoffs: the model moves the conversation on to another agent.

use serde_json::json;
use tower_adk::compose::{HandoffHistory, Handoffs};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, Message};

use crate::drain;

fn agent(name: &str, model: &ScriptedModel) -> Agent {
    Agent::builder(model.clone())
        .name(name)
        .instruction(format!("You are {name}."))
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_model_hands_the_conversation_to_billing_which_sees_it_without_the_transfer() {
    let triage = ScriptedModel::new([Turn::text("Let me pass you on.").with_call(
        "c1",
        "transfer_to_billing",
        json!({"reason": "a refund"}),
    )]);
    let billing = ScriptedModel::new([Turn::text("Refund sent.")]);
    let sales = ScriptedModel::new([]);
    let desk = Handoffs::new("triage", agent("triage", &triage))
        .to(
            "billing",
            "Refunds and invoices",
            agent("billing", &billing),
        )
        .to("sales", "New plans", agent("sales", &sales));

    let (events, result) = drain(desk.run(AgentRequest::user("I want a refund"))).await;

    let offered: Vec<String> = triage.requests()[0]
        .tool_names()
        .map(str::to_owned)
        .collect();
    assert_eq!(offered, ["transfer_to_billing", "transfer_to_sales"]);
    // Billing saw its own instruction, the user, and triage's text without the call.
    let seen = &billing.requests()[0].messages;
    assert_eq!(
        seen.iter().map(Message::content).collect::<Vec<_>>(),
        ["You are billing.", "I want a refund", "Let me pass you on."]
    );
    assert!(
        seen.iter()
            .all(|m| m.tool_calls().is_empty() && m.tool_call_id().is_none())
    );
    assert_eq!(sales.calls(), 0);
    // The run's result is billing's; its events are triage's, then billing's.
    assert_eq!(result.final_message.content(), "Refund sent.");
    let completed = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Completed(_)))
        .count();
    assert_eq!(completed, 1);
    let transfer = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolResult(r) if r.name == "transfer_to_billing"))
        .unwrap();
    let answer = events
        .iter()
        .position(|e| matches!(e, AgentEvent::Message(m) if m.content() == "Refund sent."))
        .unwrap();
    assert!(transfer < answer);
}

#[tokio::test]
async fn a_history_function_decides_what_the_next_agent_sees() {
    let triage = ScriptedModel::new([Turn::call(
        "c1",
        "transfer_to_billing",
        json!({"reason": "refund"}),
    )]);
    let billing = ScriptedModel::new([Turn::text("ok")]);
    let desk = Handoffs::new("triage", agent("triage", &triage))
        .to("billing", "Refunds", agent("billing", &billing))
        .history(HandoffHistory::with(|handoff, history| {
            let reason = handoff.reason.clone().unwrap_or_default();
            let summary = format!(
                "{} passed {} messages on: {reason}",
                handoff.from,
                history.len()
            );
            vec![Message::user(summary)].into()
        }));

    desk.run(AgentRequest::user("refund please")).await.unwrap();

    let seen = &billing.requests()[0].messages;
    assert_eq!(seen[1].content(), "triage passed 1 messages on: refund");
    assert_eq!(seen.len(), 2);
}

#[tokio::test]
async fn without_a_transfer_the_first_agent_answers() {
    let triage = ScriptedModel::new([Turn::text("Opening hours are 9 to 5.")]);
    let billing = ScriptedModel::new([]);
    let desk = Handoffs::new("triage", agent("triage", &triage)).to(
        "billing",
        "Refunds",
        agent("billing", &billing),
    );
    let result = desk.run(AgentRequest::user("hours?")).await.unwrap();
    assert_eq!(result.final_message.content(), "Opening hours are 9 to 5.");
    assert_eq!(billing.calls(), 0);
}

#[tokio::test]
async fn last_n_history_never_starts_with_a_tool_result() {
    let triage = ScriptedModel::new([
        Turn::call("c1", "lookup", json!({})),
        Turn::call("c2", "transfer_to_billing", json!({})),
    ]);
    let billing = ScriptedModel::new([Turn::text("ok")]);
    let first = Agent::builder(triage.clone())
        .tool(tower_adk::testing::text_tool("lookup", "found"))
        .build()
        .unwrap();
    let desk = Handoffs::new("agent", first)
        .to("billing", "Refunds", agent("billing", &billing))
        .history(HandoffHistory::Last(1));
    desk.run(AgentRequest::user("refund")).await.unwrap();
    // The last message was the lookup's result: it is dropped rather than cut from its call.
    let seen = &billing.requests()[0].messages;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].content(), "You are billing.");
}

#[tokio::test]
async fn a_transfer_called_with_a_gated_tool_waits_for_the_approval_then_hands_off() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tower_adk::RunStatus;
    use tower_adk::checkpoint::MemoryStore;
    use tower_adk::interrupt::Decision;

    let refunds = Arc::new(AtomicUsize::new(0));
    let triage = ScriptedModel::new([Turn::call("c1", "refund", json!({})).with_call(
        "c2",
        "transfer_to_billing",
        json!({}),
    )]);
    let billing = ScriptedModel::new([Turn::text("Billing here.")]);
    let triage_agent = Agent::builder(triage.clone())
        .name("triage")
        .tool(crate::interrupts::refund_tool(Arc::clone(&refunds)))
        .checkpoints(MemoryStore::new())
        .build()
        .unwrap();
    let desk =
        Handoffs::new("triage", triage_agent).to("billing", "Refunds", agent("billing", &billing));

    let (_, stopped) = drain(desk.run(AgentRequest::user("Refund me"))).await;
    // The approval is asked before anything hands off.
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(stopped.interrupts[0].id, "agent:triage/tool:c1");
    assert_eq!(billing.calls(), 0);

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [("agent:triage/tool:c1", Decision::Approve)],
    );
    let (_, done) = drain(desk.run(resume)).await;
    assert_eq!(refunds.load(Ordering::SeqCst), 1);
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(done.final_message.content(), "Billing here.");
    assert_eq!(billing.calls(), 1);
}
