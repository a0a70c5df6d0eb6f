//! An agent whose tools come from an MCP server, filtered per caller by role.
//!
//! The tools are those of `@modelcontextprotocol/server-everything`, started as a child
//! process and spoken to over stdio. A `filter_tools` handler decides, per request, which
//! of them the caller's role may see and run: a guest gets the harmless ones, an operator
//! also the long-running operation (whose progress notifications stream in as chunks).
//! The model is the scripted one, so the example runs without a model server.
//!
//! ```text
//! scripts/setup-mcp-servers      # once: installs server-everything under target/
//! cargo run --example mcp_agent --features mcp
//! ```
//!
//! Set `MCP_SERVER_EVERYTHING` to the server's `dist/index.js` to use another install.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tower::{BoxError, ServiceBuilder, ServiceExt};
use tower_adk::providers::mcp::McpServer;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, HandlerLayer, handlers};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Guest,
    Operator,
}

impl Role {
    /// The server's tools each role may use.
    fn allows(self, tool: &str) -> bool {
        match tool {
            "echo" | "get-sum" => true,
            "trigger-long-running-operation" => self >= Role::Operator,
            _ => false,
        }
    }
}

/// server-everything's entry point: `$MCP_SERVER_EVERYTHING`, or where
/// `scripts/setup-mcp-servers` installs it.
fn server_everything() -> Result<PathBuf, BoxError> {
    let path = std::env::var_os("MCP_SERVER_EVERYTHING").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
                "target/test-servers/mcp/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            )
        },
        PathBuf::from,
    );
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "server-everything is not at {}: run scripts/setup-mcp-servers, or set \
             MCP_SERVER_EVERYTHING to its dist/index.js",
            path.display()
        )
        .into())
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let everything = McpServer::stdio(
        "node",
        [server_everything()?.into_os_string(), "stdio".into()],
    )
    .name("everything")
    .quiet()
    .call_timeout(Duration::from_secs(20))
    .connect()
    .await?;

    // The model: first the guest's run, then the operator's.
    let model = ScriptedModel::new([
        // Guest: tries the long-running operation, which it was not shown.
        Turn::call(
            "g1",
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
        )
        .with_call("g2", "get-sum", json!({"a": 19, "b": 23})),
        Turn::text("The sum is 42; the long operation is not for guests."),
        // Operator: runs it, and sees its progress.
        Turn::call(
            "o1",
            "trigger-long-running-operation",
            json!({"duration": 1.5, "steps": 3}),
        ),
        Turn::text("The operation completed."),
    ]);
    let core = Agent::builder(model.clone())
        .instruction("You operate the everything server.")
        .tool_set(everything)
        .build()?;
    let agent = ServiceBuilder::new()
        .layer(HandlerLayer::new(handlers::filter_tools(|ext, tool| {
            ext.get::<Role>()
                .is_some_and(|role| role.allows(tool.name()))
        })))
        .service(core);

    for role in [Role::Guest, Role::Operator] {
        println!("== {role:?}");
        let request = AgentRequest::user("Do your thing.").with_extension(role);
        let mut run = agent.clone().oneshot(request).await?;
        while let Some(event) = run.next().await {
            match event? {
                // Progress chunks end with a newline, for the model.
                AgentEvent::ToolOutputChunk { name, chunk, .. } => {
                    println!("     {name} | {}", chunk.trim_end());
                }
                event if common::print_event(&event) => break,
                _ => {}
            }
        }
        let shown = model
            .requests()
            .last()
            .map(|r| r.tool_names().map(str::to_owned).collect::<Vec<_>>());
        println!(
            "  tools shown to the model: {:?}\n",
            shown.unwrap_or_default()
        );
    }
    Ok(())
}
