//! An agent described in a YAML file (examples/agents/support.yaml), with two Rust tools
//! the program registers under the names the file uses: the file is read and checked,
//! the tools each role sees are listed, and a staff member's request runs: a refund that
//! waits for approval (given here), then the closing answer.
//!
//! ```sh
//! cargo run --example agent_file --features config
//! cargo run --example agent_file --features config -- path/to/agent.yaml   # another file
//! ```

#[path = "common/support_tools.rs"]
mod support_tools;

use tower::ServiceExt;
use tower_adk::file::{AgentFile, Role};
use tower_adk::futures::StreamExt;
use tower_adk::interrupt::Decision;
use tower_adk::{AgentEvent, AgentRequest, BoxError, RunStatus};

use self::support_tools::registry;

fn last_line(text: &str) -> &str {
    let mut lines = text.lines().rev().filter(|line| !line.trim().is_empty());
    match lines.next() {
        Some(closing) if closing.starts_with("</") => lines.next().unwrap_or(""),
        last => last.unwrap_or(""),
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "examples/agents/support.yaml".to_owned());
    let registry = registry();
    // Every problem of the file at once, shown like compiler errors.
    let file = match AgentFile::reader().registry(&registry).read_path(&path) {
        Ok(file) => file,
        Err(errors) => {
            eprintln!("{errors}");
            std::process::exit(1);
        }
    };
    let agent = file.load(&registry).await?.build()?;
    println!("{}: {}", agent.name(), agent.description());
    for role in agent.roles().iter().map(|r| Some(r.as_str())).chain([None]) {
        let preview = agent.preview(role).await?;
        println!(
            "  tools for {}: {}",
            role.unwrap_or("anyone else"),
            preview.tool_names().join(", ")
        );
    }

    let mut request = AgentRequest::user("Please refund order 7, it arrived broken.")
        .with_extension(Role::new("agent"));
    loop {
        let mut run = agent.clone().oneshot(request).await?;
        let mut finished = None;
        while let Some(event) = run.next().await {
            match event? {
                AgentEvent::ToolResult(record) => {
                    println!("  {} -> {}", record.name, last_line(&record.content));
                }
                AgentEvent::Interrupt(asked) => {
                    let (tool, asks) = (&asked.payload["tool"], &asked.payload["description"]);
                    println!("  {tool} asks: {asks}");
                }
                AgentEvent::Completed(result) => finished = Some(result),
                _ => {}
            }
        }
        let result = finished.ok_or("the run ended without its result")?;
        if result.status != RunStatus::Interrupted {
            println!("{}", result.final_message.content());
            return Ok(());
        }
        // A person would answer here (see the `approval` example); this one approves.
        let decisions = result
            .interrupts
            .iter()
            .map(|i| (i.id.clone(), Decision::Approve));
        let checkpoint = result
            .checkpoint
            .clone()
            .ok_or("an interrupted run has a checkpoint")?;
        request = AgentRequest::resume(checkpoint, decisions.collect::<Vec<_>>())
            .with_extension(Role::new("agent"));
    }
}
