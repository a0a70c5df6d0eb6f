//! The main example: one agent, two callers with different roles.
//!
//! - a few tools, one of which streams its progress;
//! - a handler that filters the tools by the caller's role, read from the request's
//!   extensions, on every request;
//! - a tool-call wrapper that logs every call;
//! - the run's events printed as they arrive.
//!
//! It runs on the scripted model from `tower_adk::testing`, so it needs no API key:
//!
//! ```text
//! cargo run --example quickstart
//! ```
//!
//! With the `openai` feature and `OPENAI_BASE_URL` set, it runs on that OpenAI-compatible
//! server instead (with `OPENAI_MODEL`, and `OPENAI_API_KEY` if the server wants one):
//!
//! ```text
//! OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_MODEL=smollm2 \
//!     cargo run --features openai --example quickstart
//! ```

mod common;

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tower::{ServiceBuilder, ServiceExt};
use tower_adk::model::BoxModel;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, HandlerLayer, Tool, ToolInfo, ToolOutput, ToolRequest, handlers,
};

/// The caller's role, set by the web layer from its session.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    Admin,
    Viewer,
}

fn list_orders() -> Tool {
    Tool::from_fn(
        ToolInfo::new("list_orders", "Lists the orders with a status").parameters(json!({
            "type": "object",
            "properties": {"status": {"type": "string"}},
            "required": ["status"]
        })),
        |req: ToolRequest| async move {
            let status = req.arguments["status"].as_str().unwrap_or("any").to_owned();
            Ok::<_, std::convert::Infallible>(ToolOutput::from(json!([
                {"id": 7, "status": status},
                {"id": 9, "status": status}
            ])))
        },
    )
}

fn delete_order() -> Tool {
    Tool::from_fn(
        ToolInfo::new("delete_order", "Deletes an order (admins only)").parameters(json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "required": ["id"]
        })),
        |req: ToolRequest| async move {
            Ok::<_, std::convert::Infallible>(ToolOutput::new(format!(
                "deleted order {}",
                req.arguments["id"]
            )))
        },
    )
}

/// A streaming tool: reports its progress chunk by chunk.
fn export_report() -> Tool {
    Tool::stream_fn(
        ToolInfo::new("export_report", "Exports the orders report"),
        |_req| {
            futures::stream::iter(["10%", " 50%", " 100%", " -> report.csv"]).then(
                |chunk| async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok::<_, std::convert::Infallible>(chunk)
                },
            )
        },
    )
}

/// The model: the server named by `OPENAI_BASE_URL` if it is set (with the `openai`
/// feature), else the scripted one.
fn model() -> Result<BoxModel, Box<dyn std::error::Error>> {
    #[cfg(feature = "openai")]
    if std::env::var_os("OPENAI_BASE_URL").is_some() {
        let model = tower_adk::providers::openai::OpenAiModel::from_env()?;
        println!("(model {} at {})", model.model_name(), model.endpoint());
        return Ok(BoxModel::new(model.map_err(Into::into)));
    }
    Ok(BoxModel::new(scripted_model()))
}

/// The scripted model's turns for the two runs below, in order.
fn scripted_model() -> ScriptedModel {
    ScriptedModel::new([
        // The admin's run.
        Turn::stream(["Let me look ", "at the open orders."])
            .with_call("c1", "list_orders", json!({"status": "open"}))
            .with_call("c2", "export_report", json!({})),
        Turn::stream(["Orders 7 and 9 are open; ", "the report is in report.csv."]),
        // The viewer's run: the model tries a tool the viewer does not have.
        Turn::call("c3", "delete_order", json!({"id": 7})),
        Turn::text("Sorry, I cannot delete orders for you."),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::builder(model()?)
        .instruction("You help the shop staff with orders.")
        .tools([list_orders(), delete_order(), export_report()])
        .build()?;

    let agent = ServiceBuilder::new()
        // Per request: only admins get `delete_order`.
        .layer(HandlerLayer::new(handlers::filter_tools(|ext, tool| {
            tool.name() != "delete_order" || ext.get::<Role>() == Some(&Role::Admin)
        })))
        // Every tool call is logged: whole calls and streamed ones.
        .layer(HandlerLayer::new(handlers::wrap_tool_invoke(
            |req, next| async move {
                println!("  [log] call {} {}", req.name, req.arguments);
                next.run(req).await
            },
        )))
        .layer(HandlerLayer::new(handlers::wrap_tool_stream(
            |req, next| async move {
                println!("  [log] stream {} {}", req.name, req.arguments);
                next.run(req).await
            },
        )))
        .service(agent);

    for (role, question) in [
        (Role::Admin, "Which orders are open? Export the report."),
        (Role::Viewer, "Delete order 7."),
    ] {
        println!("\n=== {role:?}: {question}");
        let request = AgentRequest::user(question).with_extension(role);
        let mut run = agent.clone().oneshot(request).await?;
        while let Some(event) = run.next().await {
            if common::print_event(&event?) {
                break;
            }
        }
    }
    Ok(())
}
