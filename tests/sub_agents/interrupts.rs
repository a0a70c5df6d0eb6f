//! A sub-agent's interrupt surfaces through its caller and is resumed through it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::checkpoint::MemoryStore;
use tower_adk::compose::SubAgentEvent;
use tower_adk::interrupt::{Decision, Interrupt};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, RunStatus, Tool, ToolInfo, ToolOutput, ToolRequest,
};

use crate::drain;

/// A refund tool that asks first, and counts how many refunds it made.
pub(crate) fn refund_tool(made: Arc<AtomicUsize>) -> Tool {
    Tool::from_fn(
        ToolInfo::new("refund", "Refunds an invoice"),
        move |request: ToolRequest| {
            let made = Arc::clone(&made);
            async move {
                if request.decision().is_none() {
                    return Err(Interrupt::new(json!({"question": "Refund 40 EUR?"})).into());
                }
                made.fetch_add(1, Ordering::SeqCst);
                Ok::<_, tower_adk::BoxError>(ToolOutput::new("refunded 40 EUR"))
            }
        },
    )
}

struct Desk {
    support: Agent,
    billing_model: ScriptedModel,
    refunds: Arc<AtomicUsize>,
}

fn desk() -> Desk {
    let refunds = Arc::new(AtomicUsize::new(0));
    let billing_model = ScriptedModel::new([
        Turn::call("c1", "refund", json!({})),
        Turn::text("Refund handled."),
    ]);
    let billing = Agent::builder(billing_model.clone())
        .name("billing")
        .tool(refund_tool(Arc::clone(&refunds)))
        .checkpoints(MemoryStore::new())
        .build()
        .unwrap();
    let support = Agent::builder(ScriptedModel::new([
        Turn::call("c1", "billing", json!({"request": "Refund invoice 7"})),
        Turn::text("Billing is done."),
    ]))
    .name("support")
    .tool(billing.as_tool("Billing"))
    .checkpoints(MemoryStore::new())
    .build()
    .unwrap();
    Desk {
        support,
        billing_model,
        refunds,
    }
}

const NESTED_ID: &str = "agent:support/tool:c1/agent:billing/tool:c1";

#[tokio::test]
async fn a_sub_agents_interrupt_surfaces_with_a_nested_id_and_resumes_through_the_caller() {
    let desk = desk();
    let (events, stopped) = drain(desk.support.run(AgentRequest::user("Refund invoice 7"))).await;

    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(stopped.interrupts.len(), 1);
    let pending = &stopped.interrupts[0];
    assert_eq!(pending.id, NESTED_ID);
    assert_eq!(pending.payload["question"], "Refund 40 EUR?");
    // The caller's own interrupt event, and billing's, nested.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Interrupt(p) if p.id == NESTED_ID))
    );
    assert!(
        events
            .iter()
            .filter_map(SubAgentEvent::of)
            .any(|n| matches!(
                &n.event,
                AgentEvent::Interrupt(p) if p.id == "agent:billing/tool:c1"
            ))
    );
    assert_eq!(desk.refunds.load(Ordering::SeqCst), 0);

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(NESTED_ID, Decision::Approve)],
    );
    let done = desk.support.run(resume).await.unwrap();

    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(done.final_message.content(), "Billing is done.");
    assert_eq!(done.tool_record("c1").unwrap().content, "Refund handled.");
    assert_eq!(desk.refunds.load(Ordering::SeqCst), 1);
    // Billing's run went on from its checkpoint: its model was called once more, with
    // the refund's result.
    let requests = desk.billing_model.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].messages.last().unwrap();
    assert_eq!(last.content(), "refunded 40 EUR");
    // The checkpoint bookkeeping does not leak into the caller's values.
    assert!(done.locals.is_empty());
}

#[tokio::test]
async fn a_rejection_reaches_the_sub_agents_model_not_the_callers() {
    let desk = desk();
    let stopped = desk
        .support
        .run(AgentRequest::user("Refund invoice 7"))
        .await
        .unwrap();
    let reject = Decision::Reject {
        reason: "over the limit".into(),
    };
    let resume = AgentRequest::resume(stopped.checkpoint.clone().unwrap(), [(NESTED_ID, reject)]);
    let done = desk.support.run(resume).await.unwrap();

    assert_eq!(desk.refunds.load(Ordering::SeqCst), 0);
    // Billing's model read the rejection; support's model read billing's answer.
    let billing_saw = desk.billing_model.requests()[1]
        .messages
        .last()
        .unwrap()
        .clone();
    assert!(
        billing_saw.content().contains("over the limit"),
        "{billing_saw:?}"
    );
    assert_eq!(done.tool_record("c1").unwrap().content, "Refund handled.");
}

#[tokio::test]
async fn a_decision_for_the_callers_own_id_is_refused() {
    let desk = desk();
    let stopped = desk
        .support
        .run(AgentRequest::user("Refund invoice 7"))
        .await
        .unwrap();
    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [("agent:support/tool:c1", Decision::Approve)],
    );
    let error = desk.support.run(resume).await.unwrap_err();
    assert!(
        error.to_string().contains(NESTED_ID) || error.to_string().contains("decision"),
        "{error}"
    );
    assert_eq!(desk.refunds.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_interrupt_two_levels_down_nests_its_id_twice_and_resumes_through_both() {
    let refunds_made = Arc::new(AtomicUsize::new(0));
    let payments = Agent::builder(ScriptedModel::new([
        Turn::call("p1", "refund", json!({})),
        Turn::text("Payment reversed."),
    ]))
    .name("payments")
    .tool(refund_tool(Arc::clone(&refunds_made)))
    .build()
    .unwrap();
    let billing = Agent::builder(ScriptedModel::new([
        Turn::call("b1", "payments", json!({"request": "Reverse 40 EUR"})),
        Turn::text("Billing reversed it."),
    ]))
    .name("billing")
    .tool(payments.as_tool("Payments"))
    .build()
    .unwrap();
    let support = Agent::builder(ScriptedModel::new([
        Turn::call("c1", "billing", json!({"request": "Refund invoice 7"})),
        Turn::text("Done."),
    ]))
    .name("support")
    .tool(billing.as_tool("Billing"))
    .build()
    .unwrap();

    let stopped = support.run(AgentRequest::user("Refund")).await.unwrap();
    let id = "agent:support/tool:c1/agent:billing/tool:b1/agent:payments/tool:p1";
    assert_eq!(stopped.interrupts.len(), 1);
    assert_eq!(stopped.interrupts[0].id, id);

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(id, Decision::Approve)],
    );
    let done = support.run(resume).await.unwrap();
    assert_eq!(refunds_made.load(Ordering::SeqCst), 1);
    assert_eq!(
        done.tool_record("c1").unwrap().content,
        "Billing reversed it."
    );
    assert_eq!(done.final_message.content(), "Done.");
}
