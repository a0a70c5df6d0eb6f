//! Reading files with a given environment, loading and building them.

use std::collections::HashMap;

use tower_adk::file::{AgentFile, FileAgent, FileErrors, Problem, ProblemKind, Registry};

/// Reads `text` with `vars` as the whole environment, checking names against `registry`.
pub(crate) fn read_with(
    text: &str,
    registry: &Registry,
    vars: &[(&str, &str)],
) -> Result<AgentFile, FileErrors> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    AgentFile::reader()
        .registry(registry)
        .env(move |name| vars.get(name).cloned())
        .read_str(text, "agent.yaml")
}

/// Reads, loads and builds `text` with `registry`.
pub(crate) async fn agent(text: &str, registry: &Registry) -> FileAgent {
    let file = read_with(text, registry, &[]).unwrap_or_else(|errors| panic!("{errors}"));
    build(file, registry).await
}

/// Loads and builds a file that was read, with `registry`.
pub(crate) async fn build(file: AgentFile, registry: &Registry) -> FileAgent {
    file.load(registry)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .build()
        .expect("builds")
}

/// The problems of `text`, read with no environment and an empty registry.
pub(crate) fn problems(text: &str) -> Vec<Problem> {
    problems_with(text, &Registry::new())
}

pub(crate) fn problems_with(text: &str, registry: &Registry) -> Vec<Problem> {
    match read_with(text, registry, &[]) {
        Ok(_) => panic!("the file was read without problems:\n{text}"),
        Err(errors) => errors.problems().to_vec(),
    }
}

/// (kind, line, column) of each problem.
pub(crate) fn places(problems: &[Problem]) -> Vec<(ProblemKind, usize, usize)> {
    problems
        .iter()
        .map(|p| (p.kind(), p.location().line, p.location().column))
        .collect()
}

/// A scripted model section with these turns (YAML flow list).
pub(crate) fn scripted(turns: &str) -> String {
    format!("model:\n  provider: scripted\n  turns: {turns}\n")
}
