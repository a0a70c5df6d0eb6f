//! Two agents that talk over A2A, with an approval that crosses between them.
//!
//! The support agent of examples/agents/support.yaml (its Rust tools registered as in the
//! `agent_file` example) is served over A2A on a free port of 127.0.0.1, to bearer-token
//! holders only. A second agent, the concierge, reads its card and calls it as a tool.
//! The support agent's refund waits for a person: its task becomes `input-required`,
//! which the concierge's run sees as its own interrupt. The person's decision resumes
//! the concierge's run, the decision crosses back as the task's next message, and the
//! support agent's run goes on from where it stopped.
//!
//! ```sh
//! cargo run --example a2a --features config,a2a-client,server
//! ```
//!
//! A person approves here (see the `approval` example for asking one); a rejection
//! crosses the boundary the same way, and the remote tool never runs
//! (`tests/a2a/ours.rs`).
//!
//! Any A2A client can call the served agent too, e.g. `a2a-sdk`'s (Python), with the
//! card at `http://ADDR/agents/support/.well-known/agent-card.json`.

#[path = "common/support_tools.rs"]
mod support_tools;

use serde_json::json;
use tower_adk::a2a::client::RemoteAgent;
use tower_adk::checkpoint::MemoryStore;
use tower_adk::file::{AgentFile, Role};
use tower_adk::interrupt::Decision;
use tower_adk::server::a2a::A2a;
use tower_adk::server::{BearerTokens, Server};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, AgentResult, BoxError, RunStatus};

/// The token the concierge calls the support agent with; it carries the `agent` role,
/// for which the support file's role filter shows the `refund` tool.
const TOKEN: &str = "concierge-token";

/// Serves the support agent over A2A; returns its base URL.
async fn serve_support() -> Result<String, BoxError> {
    let registry = support_tools::registry();
    let file = AgentFile::reader()
        .registry(&registry)
        .read_path("examples/agents/support.yaml")
        .map_err(|errors| errors.to_string())?;
    // The file's agent with its handlers (the role filter, the approval) and description.
    let support = file.load(&registry).await?.build()?.served();
    let server = Server::new()
        .agent("support", support)
        .identify(BearerTokens::new().token_of("concierge", TOKEN, Role::new("agent")))
        .a2a(A2a::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(server.serve(listener));
    Ok(base)
}

/// The concierge: its (scripted) model asks the remote support agent, then closes.
async fn concierge(base: &str) -> Result<Agent, BoxError> {
    let support = RemoteAgent::builder(format!("{base}/agents/support"))
        .bearer_token(TOKEN)
        .connect()
        .await?;
    let card = support.card();
    let skills: Vec<_> = card.skills.iter().map(|s| s.name.as_str()).collect();
    println!(
        "card: {} ({}), skills: {}",
        card.name,
        card.description,
        skills.join(", ")
    );
    let model = ScriptedModel::per_run([
        Turn::call(
            "c1",
            "support",
            json!({"message": "Please refund order 7, it arrived broken."}),
        ),
        Turn::text("Support has handled order 7."),
    ]);
    let agent = Agent::builder(model)
        .name("concierge")
        .tool(support.as_tool())
        .checkpoints(MemoryStore::new())
        .build()?;
    Ok(agent)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    demo().await.map(drop)
}

/// The whole exchange, printed as it goes: the concierge's run stopped at the remote
/// approval, and the same run resumed with the person's decision.
pub(crate) async fn demo() -> Result<(AgentResult, AgentResult), BoxError> {
    let base = serve_support().await?;
    println!("support agent served over A2A at {base}/agents/support/a2a");
    let concierge = concierge(&base).await?;

    let stopped = concierge
        .run(AgentRequest::user("My order 7 arrived broken."))
        .await?;
    if stopped.status != RunStatus::Interrupted {
        return Err(format!("expected the refund to wait, got {:?}", stopped.status).into());
    }
    let pending = &stopped.interrupts[0];
    println!("waits for a person: {}", pending.id);
    println!("  {}", pending.payload["description"]);
    let decision = Decision::Approve;
    println!("a person approves");

    let checkpoint = stopped.checkpoint.clone().ok_or("no checkpoint")?;
    let resume = AgentRequest::resume(checkpoint, [(pending.id.clone(), decision)]);
    let done = concierge.run(resume).await?;
    let answer = done.tool_record("c1").ok_or("no answer from support")?;
    println!("support answered: {}", answer.content);
    println!("concierge: {}", done.final_message.content());
    Ok((stopped, done))
}
