//! A remote agent as a handoff target: it takes the conversation over, and its
//! input-required task is the composition's interrupt, resumed through it.

use serde_json::json;
use tower_adk::a2a::client::RemoteAgent;
use tower_adk::compose::Handoffs;
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, RunStatus};

use super::drain;
use super::peer::Peer;

/// A triage agent that hands off to the remote agent, its target named `billing` (the
/// remote agent's own name, from its card, is `ledger`).
fn desk(remote: RemoteAgent) -> Handoffs {
    let triage = ScriptedModel::new([Turn::call("c1", "transfer_to_billing", json!({}))]);
    let triage = Agent::builder(triage).name("triage").build().unwrap();
    Handoffs::new("triage", triage).to("billing", "Invoices and refunds", remote)
}

#[tokio::test]
async fn the_remote_agent_takes_the_conversation_over() {
    let peer = Peer::start().await;
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    let (events, result) = drain(desk(ledger).run(AgentRequest::user("stream invoice 7"))).await;
    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(result.final_message.content(), "Invoice 7 is paid in full.");
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            tower_adk::AgentEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Invoice 7 ", "is paid ", "in full."]);
}

#[tokio::test]
async fn the_remote_agent_s_question_is_answered_through_the_composition() {
    let peer = Peer::start().await;
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    let desk = desk(ledger);
    let (_, stopped) = drain(desk.run(AgentRequest::user("ask about a refund"))).await;
    assert_eq!(stopped.status, RunStatus::Interrupted);
    let pending = &stopped.interrupts[0];
    assert!(
        pending.id.starts_with("agent:ledger/tool:"),
        "{}",
        pending.id
    );
    assert_eq!(pending.payload["text"], "Refund 40 EUR to order 7?");
    let checkpoint = stopped.checkpoint.clone().unwrap();

    let resume = AgentRequest::resume(checkpoint, [(pending.id.clone(), Decision::Approve)]);
    let (_, done) = drain(desk.run(resume)).await;
    assert_eq!(done.status, RunStatus::Completed);
    assert!(
        done.final_message
            .content()
            .starts_with(r#"Refunded. Got: [{"data": {"decisions": {"agent:ledger/tool:"#),
        "{}",
        done.final_message.content()
    );
}
