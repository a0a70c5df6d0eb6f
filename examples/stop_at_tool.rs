//! End a run at a tool: an order-intake agent must finish by submitting the order.
//!
//! - the until-success form: the model's first `submit_order` is rejected (no quantity),
//!   it reads the error and tries again, and the accepted order ends the run, with the
//!   tool's result as the final message and no further model call;
//! - a run in which the model answers in prose instead fails with `StopToolNotCalled`;
//! - configuring both forms at once is rejected when the handler is built.
//!
//! It runs on the scripted model from `tower_adk::testing`, so it needs no API key:
//!
//! ```text
//! cargo run --example stop_at_tool
//! ```

mod common;

use futures::StreamExt;
use serde_json::json;
use tower_adk::handlers::{StopAtTool, StopToolNotCalled};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, Tool, ToolError, ToolErrorKind, ToolInfo, ToolOutput,
    ToolRequest,
};

/// Accepts an order with a product and a positive quantity; rejects anything else.
fn submit_order() -> Tool {
    Tool::from_fn(
        ToolInfo::new("submit_order", "Submits the customer's order").parameters(json!({
            "type": "object",
            "properties": {
                "product": {"type": "string"},
                "quantity": {"type": "integer"}
            },
            "required": ["product"]
        })),
        |req: ToolRequest| async move {
            let product = req.arguments["product"].as_str().unwrap_or_default();
            match req.arguments["quantity"].as_i64() {
                Some(quantity) if quantity > 0 => Ok(ToolOutput::from(json!({
                    "order": "A-1042",
                    "product": product,
                    "quantity": quantity
                }))),
                _ => Err(ToolError::new(
                    ToolErrorKind::Failed,
                    "the order needs a positive quantity",
                )),
            }
        },
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([
        // The first run: a rejected attempt, then an accepted one.
        Turn::call("c1", "submit_order", json!({"product": "espresso beans"}))
            .with_text("Submitting your order."),
        Turn::call(
            "c2",
            "submit_order",
            json!({"product": "espresso beans", "quantity": 2}),
        ),
        // The second run: the model answers without submitting.
        Turn::text("Sure, two bags of espresso beans are on their way!"),
    ]);
    let agent = Agent::builder(model)
        .instruction("Take the customer's order and submit it with `submit_order`.")
        .tool(submit_order())
        .build()?;
    let stop = StopAtTool::builder()
        .until_success(["submit_order"])
        .build()?;

    println!("=== The order is submitted, on the second try");
    let request =
        AgentRequest::user("Two bags of espresso beans, please.").with_handler(stop.clone());
    let mut run = agent.run(request);
    while let Some(event) = run.next().await {
        let event = event?;
        common::print_event(&event);
        if let AgentEvent::Completed(result) = &event {
            println!("  final message: {}", result.final_message.content());
        }
    }

    println!("\n=== The model answers without submitting");
    let request = AgentRequest::user("Two bags of espresso beans, please.").with_handler(stop);
    let mut run = agent.run(request);
    while let Some(event) = run.next().await {
        match event {
            Ok(event) => {
                common::print_event(&event);
            }
            Err(error) => {
                let not_called = error
                    .as_handler()
                    .and_then(|e| std::error::Error::source(e))
                    .and_then(|source| source.downcast_ref::<StopToolNotCalled>());
                println!("\n  run failed: {error}");
                if let Some(not_called) = not_called {
                    println!("  (stop tools: {:?})", not_called.tools);
                }
            }
        }
    }

    println!("\n=== Both forms at once");
    let both = StopAtTool::builder()
        .on_call(["submit_order"])
        .until_success(["submit_order"])
        .build();
    if let Err(error) = both {
        println!("  rejected when built: {error}");
    }
    Ok(())
}
