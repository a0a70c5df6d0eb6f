//! Two agents served over HTTP on the scripted model, for three people: Alice and Bob,
//! clerks, and Maria, their manager. `support` has a tool that streams and a refund that
//! only managers have; `bank` has a payment that waits for approval, which its clerk or
//! a manager gives. Each caller's threads are their own: Bob cannot read, continue,
//! approve or delete Alice's. The chat page is at `/` (open
//! `http://127.0.0.1:3000/#token=alice-token` in a browser).
//!
//! ```sh
//! PORT=3000 cargo run --example serve --features server
//! # Alice asks the bank to pay; the run waits for approval on her thread.
//! curl -H 'authorization: Bearer alice-token' \
//!      -d '{"input": "Pay Bob", "thread": "alice-1"}' http://127.0.0.1:3000/agents/bank/runs
//! # Bob cannot see it: 404.
//! curl -H 'authorization: Bearer bob-token' http://127.0.0.1:3000/agents/bank/threads/alice-1
//! # Maria approves it with the checkpoint id Alice's answer gave; the run stays Alice's.
//! curl -H 'authorization: Bearer maria-token' -d '{"resume": {"checkpoint": "CHECKPOINT",
//!      "decisions": {"agent:bank/tool:c1": {"type": "approve"}}}}' \
//!      http://127.0.0.1:3000/agents/bank/runs
//! # Alice reads her thread: paid, with Maria's approval in its audit trail.
//! curl -H 'authorization: Bearer alice-token' http://127.0.0.1:3000/agents/bank/threads/alice-1
//! ```
//!
//! Each caller may have 4 runs in flight and send 120 requests a minute (429 past
//! either); bodies are bounded, and so is the time their headers and bodies take.
//! Ctrl-C shuts it down gracefully: no new runs, 10 s for those in flight.

use std::time::Duration;

use serde_json::json;
use tower_adk::auth::{Access, Action};
use tower_adk::interrupt::Interrupt;
use tower_adk::server::{BearerTokens, Limits, ServedAgent, Server, Shutdown};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool, text_tool};
use tower_adk::{Agent, BoxError, HandlerLayer, Tool, ToolInfo, ToolOutput, ToolRequest};

/// The caller's role, from their bearer token.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
enum Role {
    Clerk,
    Manager,
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
    let managers_refund = tower_adk::handlers::filter_tools(|ext, tool| {
        tool.name() != "refund" || ext.get::<Role>() == Some(&Role::Manager)
    });
    Ok(ServedAgent::new(agent)
        .description("Tracks orders; managers also refund them")
        .layer(HandlerLayer::new(managers_refund)))
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
    let agent = Agent::builder(model)
        .name("bank")
        .tool(pay)
        // A run keeps its requester's role: approved by a manager, it stays a clerk's run.
        .keep_identity::<Role>("role")
        // Owners do anything with their threads; a manager may also decide on the
        // payments that wait in a clerk's thread (and nothing else of it).
        .authorize(|access: &Access<'_>| {
            let manager = access.identity.get::<Role>() == Some(&Role::Manager);
            access.is_owner() || (manager && access.action == Action::Decide)
        })
        .build()?;
    Ok(ServedAgent::new(agent).description("Pays, once its clerk or a manager approves"))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let tokens = BearerTokens::new()
        .token_of("alice", "alice-token", Role::Clerk)
        .token_of("bob", "bob-token", Role::Clerk)
        .token_of("maria", "maria-token", Role::Manager);
    // Each caller: at most 4 runs at once and 120 requests a minute; bodies up to 1 MiB.
    let limits = Limits::default()
        .runs_per_principal(4)
        .requests_per_principal(120, Duration::from_secs(60))
        .body_bytes(1024 * 1024);
    let server = Server::new()
        .agent("support", support()?)
        .agent("bank", bank()?)
        .identify(tokens)
        .limits(limits)
        .page(true);
    let shutdown = server.shutdown_handle();
    let port = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0u16);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}", listener.local_addr()?);
    println!(
        "chat page: http://{}/#token=alice-token (or bob-token, maria-token)",
        listener.local_addr()?
    );
    tokio::spawn(drain_on_ctrl_c(shutdown));
    // hyper's server with a deadline for each request's headers (`Limits::header_timeout`),
    // which stops once the drain is over.
    server.serve(listener).await?;
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
