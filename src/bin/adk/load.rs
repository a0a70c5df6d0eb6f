//! Reading and loading agent files for every command, with their problems shown as the
//! file's own `Display` gives them (each at its line and column).

use std::path::Path;

use tower_adk::file::{
    AgentFile, FileAgent, FileErrors, LoadError, LoadedAgent, ProblemKind, Registry,
};

use crate::Failure;
use crate::screen;

/// Reads the file at `path` and loads it (connecting to its MCP servers, opening its
/// store). The `adk` command registers no Rust tools, handlers or models of its own:
/// a file uses the built-in handlers, MCP tools and the `openai` or `scripted` models.
pub(crate) async fn load(path: &Path) -> Result<LoadedAgent, Failure> {
    let registry = Registry::new();
    let file = AgentFile::reader()
        .registry(&registry)
        .read_path(path)
        .map_err(|errors| problems(&errors))?;
    file.load(&registry).await.map_err(|error| match error {
        LoadError::File(errors) => problems(&errors),
        other => {
            screen::error(format_args!("{}: {other}", path.display()));
            Failure::Run
        }
    })
}

/// Builds a loaded agent.
pub(crate) fn build(path: &Path, loaded: LoadedAgent) -> Result<FileAgent, Failure> {
    loaded.build().map_err(|error| {
        screen::error(format_args!("{}: {error}", path.display()));
        Failure::File
    })
}

/// Shows a file's problems, and what `adk` offers when the file names something only a
/// Rust program can register.
fn problems(errors: &FileErrors) -> Failure {
    screen::problems(errors);
    let registered = [
        ProblemKind::UnknownTool,
        ProblemKind::UnknownHandler,
        ProblemKind::UnknownModel,
    ];
    if errors
        .problems()
        .iter()
        .any(|p| registered.contains(&p.kind()))
    {
        screen::hint(format_args!(
            "`adk` registers no Rust tools, handlers or models: its agents use MCP servers' \
             tools, the built-in handlers and the `openai` or `scripted` models. A program \
             registers its own with `tower_adk::file::Registry`."
        ));
    }
    Failure::File
}
