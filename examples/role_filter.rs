//! A SaaS backend filters tools by the caller's role on every request.
//!
//! One agent is shared by many concurrent requests. A handler layer reads the caller's
//! role from the request's extensions and keeps only the tools that role may use: the
//! model is shown only those, and only those can execute. The model here is a small
//! `tower::service_fn` that tries *every* tool in the catalogue, so the filter has
//! something to refuse.
//!
//! ```text
//! cargo run --example role_filter
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tower::{BoxError, ServiceBuilder, ServiceExt, service_fn};
use tower_adk::{
    Agent, AgentRequest, HandlerLayer, Message, ModelRequest, ModelResponse, Tool, ToolCall,
    ToolInfo, ToolOutput, ToolRequest, handlers,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Guest,
    Member,
    Admin,
}

impl Role {
    /// The tools each role may use.
    fn allows(self, tool: &str) -> bool {
        match tool {
            "search_docs" => true,
            "create_ticket" => self >= Role::Member,
            "refund_payment" => self == Role::Admin,
            _ => false,
        }
    }
}

const CATALOGUE: [&str; 3] = ["search_docs", "create_ticket", "refund_payment"];

/// Records which role executed which tool.
type Executions = Arc<Mutex<BTreeMap<(Role, String), usize>>>;

fn tool(name: &'static str, executions: Executions) -> Tool {
    Tool::from_fn(
        ToolInfo::new(name, format!("The {name} tool")),
        move |req: ToolRequest| {
            let executions = Arc::clone(&executions);
            async move {
                let role = req.extensions().get::<Role>().copied().ok_or("no role")?;
                *executions
                    .lock()
                    .map_err(|_| "poisoned")?
                    .entry((role, req.name.to_string()))
                    .or_default() += 1;
                Ok::<_, BoxError>(ToolOutput::new(format!("{name} done")))
            }
        },
    )
}

/// A stand-in model: first it calls every tool of the catalogue, shown or not; then it
/// answers with the names of the tools it was shown.
async fn demo_model(req: ModelRequest) -> Result<ModelResponse, BoxError> {
    let reply = if req
        .messages
        .iter()
        .any(|m| matches!(m, Message::Tool { .. }))
    {
        Message::assistant(format!(
            "I could use: {}",
            req.tool_names().collect::<Vec<_>>().join(", ")
        ))
    } else {
        let calls = CATALOGUE
            .iter()
            .enumerate()
            .map(|(i, name)| ToolCall::new(format!("c{i}"), *name, json!({})));
        Message::assistant_with_calls("", calls.collect())
    };
    Ok(ModelResponse::message(reply))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let executions = Executions::default();
    let core = Agent::builder(service_fn(demo_model))
        .tools(CATALOGUE.map(|name| tool(name, Arc::clone(&executions))))
        .build()?;
    let agent = ServiceBuilder::new()
        .layer(HandlerLayer::new(handlers::filter_tools(|ext, tool| {
            ext.get::<Role>()
                .is_some_and(|role| role.allows(tool.name()))
        })))
        .service(core.clone());

    // 300 concurrent requests, mixed roles, one shared agent.
    let roles = [Role::Guest, Role::Member, Role::Admin];
    let runs = (0..300).map(|i| {
        let agent = agent.clone();
        let role = roles[i % roles.len()];
        async move {
            let run = agent
                .oneshot(AgentRequest::user("help me").with_extension(role))
                .await?;
            let result = run.await?;
            Ok::<_, BoxError>((role, result))
        }
    });
    let results = futures::future::try_join_all(runs).await?;

    for role in roles {
        let (_, sample) = results.iter().find(|(r, _)| *r == role).ok_or("no run")?;
        let refused = sample
            .tool_records
            .iter()
            .filter(|r| !r.is_success())
            .count();
        println!(
            "{role:?}: {} ({refused} call(s) refused as unknown tools)",
            sample.final_message.content()
        );
    }
    println!("\nexecutions per (role, tool):");
    for ((role, name), count) in executions.lock().map_err(|_| "poisoned")?.iter() {
        assert!(role.allows(name), "{role:?} executed {name}");
        println!("  {role:?} {name}: {count}");
    }
    // Filtering changed the tool list per request, never the loop's shape: one variant.
    println!("\ncompiled loop variants: {}", core.compiled_variants());
    Ok(())
}
