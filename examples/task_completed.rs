//! A built-in `task_completed` tool: a support agent says when it is done.
//!
//! - the model refunds an order and calls `task_completed` in the same turn, with its
//!   closing text: the refund runs, then the run completes with that text, without
//!   another model call;
//! - the model cancels a subscription and calls `task_completed` without any text: the
//!   model is called once more, with no tools and a one-turn system message asking for a
//!   short closing line, and that reply is the final message.
//!
//! It runs on the scripted model from `tower_adk::testing`, so it needs no API key:
//!
//! ```text
//! cargo run --example task_completed
//! ```

mod common;

use futures::StreamExt;
use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentEvent, AgentRequest, handlers};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([
        // The first run: the closing text comes with the call.
        Turn::stream([
            "Your refund of $18 is on its way; ",
            "thanks for your patience!",
        ])
        .with_call("c1", "refund_order", json!({"order": "A-1042"}))
        .with_call("c2", "task_completed", json!({})),
        // The second run: no text with the call, so the model is asked for a closing line.
        Turn::call("c3", "cancel_subscription", json!({"plan": "pro"})).with_call(
            "c4",
            "task_completed",
            json!({}),
        ),
        Turn::stream(["Your Pro plan is cancelled. ", "Sorry to see you go!"]),
    ]);
    let agent = Agent::builder(model.clone())
        .instruction("You are the support desk. Call `task_completed` when you are done.")
        .tool(text_tool("refund_order", "refunded $18"))
        .tool(text_tool("cancel_subscription", "cancelled"))
        .build()?;
    let completed = handlers::task_completed();

    for question in ["Please refund order A-1042.", "Cancel my Pro plan."] {
        println!("\n=== {question}");
        let calls_before = model.calls();
        let request = AgentRequest::user(question).with_handler(completed.clone());
        let mut run = agent.run(request);
        while let Some(event) = run.next().await {
            let event = event?;
            common::print_event(&event);
            if let AgentEvent::Completed(result) = &event {
                println!("  final message: {}", result.final_message.content());
            }
        }
        for (n, request) in model.requests().iter().enumerate().skip(calls_before) {
            let last = request
                .messages
                .last()
                .map(|m| m.content())
                .unwrap_or_default();
            println!(
                "  model call {}: {} tool(s) offered, last message: {last:?}",
                n + 1 - calls_before,
                request.tools.len(),
            );
        }
    }
    Ok(())
}
