//! Shared by the examples: prints a run's events as they arrive.

use std::io::Write;

use tower_adk::AgentEvent;

/// Prints one event of a run; returns `true` on the last one.
pub(crate) fn print_event(event: &AgentEvent) -> bool {
    match event {
        AgentEvent::TextDelta(text) => {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
        AgentEvent::Message(message) if !message.tool_calls().is_empty() => println!(),
        AgentEvent::ToolCallStarted { call_id, name } => println!("  -> {name} ({call_id})"),
        AgentEvent::ToolOutputChunk { name, chunk, .. } => println!("     {name} | {chunk}"),
        AgentEvent::ToolResult(record) => match &record.error {
            None => println!(
                "  <- {}: {} ({:?})",
                record.name, record.content, record.latency
            ),
            Some(error) => println!(
                "  <- {}: FAILED [{}] {}",
                record.name,
                error.kind(),
                error.message()
            ),
        },
        AgentEvent::Completed(result) => {
            println!(
                "\n  == done after {} turn(s), {} model call(s)",
                result.iterations, result.model_calls
            );
            return true;
        }
        _ => {}
    }
    false
}
