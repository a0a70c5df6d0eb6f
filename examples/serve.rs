//! Two agents served over HTTP on the scripted model: `support` (a tool that streams and
//! a refund that only admins have) and `bank` (a payment that waits for approval), with
//! the chat page at `/` (open `http://127.0.0.1:3000/#token=admin-token` in a browser).
//!
//! ```sh
//! PORT=3000 cargo run --example serve --features server
//! curl -N -H 'authorization: Bearer admin-token' -H 'accept: text/event-stream' \
//!      -d '{"input": "Where is order 7?"}' http://127.0.0.1:3000/agents/support/runs
//! ```
//!
//! Ctrl-C shuts it down gracefully: no new runs, 10 s for those in flight.

use std::time::Duration;

use serde_json::json;
use tower_adk::interrupt::Interrupt;
use tower_adk::server::{BearerTokens, ServedAgent, Server, Shutdown};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool, text_tool};
use tower_adk::{Agent, BoxError, HandlerLayer, Tool, ToolInfo, ToolOutput, ToolRequest};

/// The caller's role, from their bearer token.
#[derive(Debug, Clone, PartialEq)]
enum Role {
    Admin,
    Guest,
}

fn support() -> Result<ServedAgent, BoxError> {
    let model = ScriptedModel::per_run([
        Turn::text("Let me track it.").with_call("c1", "track", json!({"order": 7})),
        Turn::stream(["Order 7 ", "arrives ", "tomorrow."]),
        Turn::text("Anything else?"), // a second message on the page's thread
    ]);
    let agent = Agent::builder(model)
        .name("support")
        .tool(chunk_tool(
            "track",
            &["packed, ", "shipped, ", "in transit"],
            Duration::from_millis(200),
        ))
        .tool(text_tool("refund", "refunded"))
        .build()?;
    let admins_refund = tower_adk::handlers::filter_tools(|ext, tool| {
        tool.name() != "refund" || ext.get::<Role>() == Some(&Role::Admin)
    });
    Ok(ServedAgent::new(agent)
        .description("Tracks orders; admins also refund them")
        .layer(HandlerLayer::new(admins_refund)))
}

fn bank() -> Result<ServedAgent, BoxError> {
    let pay = Tool::from_fn(
        ToolInfo::new("pay", "Pays"),
        |request: ToolRequest| async move {
            if request.decision().is_none() {
                return Err(Interrupt::new(json!({"question": "Pay 5 to Bob?"})).into());
            }
            Ok::<_, BoxError>(ToolOutput::new("paid"))
        },
    );
    let model = ScriptedModel::per_run([
        Turn::call("c1", "pay", json!({"to": "Bob"})),
        Turn::text("Paid."),
        Turn::text("Anything else?"),
    ]);
    let agent = Agent::builder(model).name("bank").tool(pay).build()?;
    Ok(ServedAgent::new(agent).description("Pays, once a person approves"))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let tokens = BearerTokens::new()
        .token("admin-token", Role::Admin)
        .token("guest-token", Role::Guest);
    let server = Server::new()
        .agent("support", support()?)
        .agent("bank", bank()?)
        .identify(tokens)
        .page(true);
    let shutdown = server.shutdown_handle();
    let router = server.into_router();
    let port = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0u16);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}", listener.local_addr()?);
    println!(
        "chat page: http://{}/#token=admin-token",
        listener.local_addr()?
    );
    tokio::spawn(drain_on_ctrl_c(shutdown.clone()));
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown.signal())
        .await?;
    Ok(())
}

/// On Ctrl-C: refuse new runs, give those in flight 10 s, then cancel the rest (a
/// durable one leaves a checkpoint to resume).
async fn drain_on_ctrl_c(shutdown: Shutdown) {
    if tokio::signal::ctrl_c().await.is_ok() {
        println!("draining: no new runs; 10 s for those in flight");
        let drained = shutdown.drain(Duration::from_secs(10)).await;
        println!("drained: {drained:?}");
    }
}
