//! Text that the model sends with tool calls reaches the caller, marked as filler, before
//! the (slow) tools finish; it can be switched off.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tokio::sync::Notify;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, Tool, ToolInfo, ToolOutput};

/// A tool that finishes only when the test says so.
fn gated_tool(gate: &Arc<Notify>) -> Tool {
    let gate = Arc::clone(gate);
    Tool::from_fn(ToolInfo::new("slow_search", "slow"), move |_| {
        let gate = Arc::clone(&gate);
        async move {
            gate.notified().await;
            Ok::<_, std::convert::Infallible>(ToolOutput::new("found it"))
        }
    })
}

fn script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call("c1", "slow_search", json!({})).with_text("Let me look that up."),
        Turn::text("Here it is."),
    ])
}

#[tokio::test]
async fn filler_text_reaches_the_caller_before_a_slow_tool_finishes() {
    let gate = Arc::new(Notify::new());
    let agent = Agent::builder(script())
        .tool(gated_tool(&gate))
        .build()
        .unwrap();
    let mut run = agent.run(AgentRequest::user("find it"));

    let mut seen = Vec::new();
    let filler = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(event) = run.next().await {
            match event.unwrap() {
                AgentEvent::Filler(text) => return Some(text),
                AgentEvent::ToolResult(_) => seen.push("result"),
                _ => {}
            }
        }
        None
    })
    .await
    .expect("the filler arrives while the tool is still blocked");

    assert_eq!(filler.as_deref(), Some("Let me look that up."));
    assert!(seen.is_empty(), "no tool had finished yet");
    gate.notify_one();
    let result = run.result().await.unwrap();
    assert_eq!(result.final_message.content(), "Here it is.");
}

#[tokio::test]
async fn filler_messages_can_be_switched_off() {
    let gate = Arc::new(Notify::new());
    gate.notify_one();
    let agent = Agent::builder(script())
        .tool(gated_tool(&gate))
        .filler_messages(false)
        .build()
        .unwrap();

    let events: Vec<AgentEvent> = agent
        .run(AgentRequest::user("find it"))
        .map(Result::unwrap)
        .collect()
        .await;

    assert!(
        !events.iter().any(|e| matches!(e, AgentEvent::Filler(_))),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::TextDelta(t) if t == "Let me look that up."))
    );
}

#[tokio::test]
async fn a_reply_without_tool_calls_is_not_filler() {
    let agent = Agent::builder(ScriptedModel::new([Turn::text("Just an answer.")]))
        .build()
        .unwrap();

    let events: Vec<AgentEvent> = agent
        .run(AgentRequest::user("hi"))
        .map(Result::unwrap)
        .collect()
        .await;

    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Filler(_))));
}
