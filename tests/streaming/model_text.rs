//! Model text reaches the caller as it streams, before the turn's tools run.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentEvent, AgentRequest, Tool, ToolInfo, ToolOutput};

use crate::Log;

#[tokio::test]
async fn model_text_reaches_the_caller_before_the_turns_tools_run() {
    // Set by the caller when it has read the text of the turn; read by the tool.
    let caller_saw_text = Arc::new(AtomicBool::new(false));
    let tool_saw_text = Arc::new(AtomicBool::new(false));
    let tool = {
        let caller_saw_text = Arc::clone(&caller_saw_text);
        let tool_saw_text = Arc::clone(&tool_saw_text);
        Tool::from_fn(ToolInfo::new("lookup", "Looks up."), move |_| {
            tool_saw_text.store(caller_saw_text.load(Ordering::SeqCst), Ordering::SeqCst);
            async { Ok::<_, Infallible>(ToolOutput::new("found")) }
        })
    };
    let model = ScriptedModel::new([
        Turn::stream(["Let me ", "look that up."]).with_call("c1", "lookup", json!({})),
        Turn::text("Found it."),
    ]);
    let agent = Agent::builder(model).tool(tool).build().unwrap();

    let mut run = agent.run(AgentRequest::user("find it"));
    let mut text = String::new();
    let mut order = Vec::new();
    while let Some(event) = run.next().await {
        match event.unwrap() {
            AgentEvent::TextDelta(delta) => {
                text.push_str(&delta);
                if text == "Let me look that up." {
                    caller_saw_text.store(true, Ordering::SeqCst);
                }
                order.push("text");
            }
            AgentEvent::ToolCallStarted { .. } => order.push("started"),
            AgentEvent::ToolResult(_) => order.push("result"),
            AgentEvent::Completed(_) => order.push("completed"),
            _ => {}
        }
    }

    assert!(
        tool_saw_text.load(Ordering::SeqCst),
        "the tool ran before the caller had the turn's text"
    );
    assert_eq!(
        order,
        ["text", "text", "started", "result", "text", "completed"]
    );
    assert_eq!(text, "Let me look that up.Found it.");
}

#[tokio::test]
async fn text_deltas_arrive_one_by_one_as_the_model_streams() {
    let log = Log::default();
    let model = ScriptedModel::new([Turn::stream(["a", "b", "c"])]);
    // Log each delta as the model produces it, then each event as the caller reads it.
    let producer_log = log.clone();
    let model = tower::ServiceBuilder::new()
        .map_response(move |response: tower_adk::ModelResponse| {
            let log = producer_log.clone();
            tower_adk::ModelResponse::stream(response.into_stream().inspect(move |delta| {
                if let Ok(tower_adk::ModelDelta::Text(text)) = delta {
                    log.push(format!("model {text}"));
                }
            }))
        })
        .service(model);
    let agent = Agent::builder(model).build().unwrap();

    let mut run = agent.run(AgentRequest::user("hi"));
    while let Some(event) = run.next().await {
        if let AgentEvent::TextDelta(text) = event.unwrap() {
            log.push(format!("caller {text}"));
        }
    }

    assert_eq!(
        log.entries(),
        [
            "model a", "caller a", "model b", "caller b", "model c", "caller c"
        ]
    );
}

#[tokio::test]
async fn a_reply_with_text_and_calls_emits_its_message_before_the_tools_start() {
    let model = ScriptedModel::new([
        Turn::call("c1", "t", json!({})).with_text("Checking."),
        Turn::text("Done."),
    ]);
    let agent = Agent::builder(model)
        .tool(text_tool("t", "ok"))
        .build()
        .unwrap();

    let events: Vec<_> = agent
        .run(AgentRequest::user("go"))
        .map(Result::unwrap)
        .collect()
        .await;

    let position = |pred: &dyn Fn(&AgentEvent) -> bool| events.iter().position(pred).unwrap();
    let delta = position(&|e| matches!(e, AgentEvent::TextDelta(t) if t == "Checking."));
    let message = position(&|e| matches!(e, AgentEvent::Message(m) if m.content() == "Checking."));
    let started = position(&|e| matches!(e, AgentEvent::ToolCallStarted { .. }));
    assert!(delta < message && message < started, "{events:?}");
}
