//! `adk check`: each file read, loaded and built, and the tools the model sees listed
//! for each role the file's role filters name, and for any other caller.

use std::path::{Path, PathBuf};

use tower_adk::file::FileAgent;

use crate::screen::{self, Screen};
use crate::{Failure, load};

/// Checks every file, going on after one fails; the worst failure is the result.
pub(crate) async fn check(files: &[PathBuf]) -> Result<(), Failure> {
    let mut worst = None;
    for path in files {
        if let Err(failure) = check_one(path).await {
            worst = worst.max(Some(failure));
        }
    }
    worst.map_or(Ok(()), Err)
}

async fn check_one(path: &Path) -> Result<(), Failure> {
    let loaded = load::load(path).await?;
    let handlers = loaded.handler_names().join(", ");
    let agent = load::build(path, loaded)?;
    // Every preview first: the file is ready only when each of them runs.
    let tools = list_tools(&agent).await?;
    let mut screen = Screen::new();
    screen.ok(format_args!(
        "{}: agent `{}` is ready",
        path.display(),
        agent.name()
    ));
    if !agent.description().is_empty() {
        screen.line(format_args!("  {}", agent.description()));
    }
    if !handlers.is_empty() {
        screen.line(format_args!("  handlers: {handlers}"));
    }
    screen.line(format_args!("  tools the model sees:"));
    for line in tools {
        screen.line(format_args!("    {line}"));
    }
    screen.flush();
    Ok(())
}

/// One line per role, then one for callers with none of them (every caller, when the
/// file names no roles).
async fn list_tools(agent: &FileAgent) -> Result<Vec<String>, Failure> {
    let roles = agent.roles().iter().map(|role| Some(role.as_str()));
    let mut lines = Vec::new();
    for role in roles.chain([None]) {
        let who = match role {
            Some(role) => format!("role `{role}`"),
            None if agent.roles().is_empty() => "every caller".to_owned(),
            None => "any other caller".to_owned(),
        };
        let preview = agent.preview(role).await.map_err(|error| {
            screen::error(format_args!("{}: {who}: {error}", agent.name()));
            Failure::Run
        })?;
        let names = preview.tool_names();
        let tools = if names.is_empty() {
            "(none)".to_owned()
        } else {
            names.join(", ")
        };
        lines.push(format!("{who}: {tools}"));
    }
    Ok(lines)
}
