//! The file's MCP servers: connected with all their tools, then filtered by the file's
//! `include` or `exclude` list, whose names are checked against what the server offers.

use adk::Tool;
use adk::providers::mcp::{McpError, McpServer};

use super::error::{Problem, ProblemKind};
use super::spec::{McpSpec, McpTransport};

/// Connects to `spec`'s server; `retries` is the file's default for servers that do not
/// set their own.
pub(crate) async fn connect(spec: &McpSpec, retries: Option<u32>) -> Result<Vec<Tool>, McpError> {
    let mut server = match &spec.transport {
        McpTransport::Stdio { command } => {
            let (program, args) = command
                .split_first()
                .map_or(("", &[][..]), |(p, a)| (p.as_str(), a));
            let mut server = McpServer::stdio(program, args);
            for (key, value) in &spec.env {
                server = server.env(key, value);
            }
            server
        }
        McpTransport::Http { url, bearer_token } => {
            let server = McpServer::http(url);
            match bearer_token {
                Some(token) => server.bearer_token(token),
                None => server,
            }
        }
    };
    server = server.name(spec.name.clone());
    if let Some(retries) = spec.connect_retries.or(retries) {
        server = server.connect_retries(retries);
    }
    if let Some(timeout) = spec.connect_timeout {
        server = server.connect_timeout(timeout);
    }
    if let Some(timeout) = spec.call_timeout {
        server = server.call_timeout(timeout);
    }
    let set = server.connect().await?;
    // No lists were given to the set, so it cannot refuse its own tools.
    Ok(set.into_tools().unwrap_or_default())
}

/// The tools the file's list keeps; each listed name the server does not offer is a
/// problem at its place.
pub(crate) fn select(spec: &McpSpec, offered: Vec<Tool>, problems: &mut Vec<Problem>) -> Vec<Tool> {
    let names: Vec<String> = offered.iter().map(|t| t.name().to_owned()).collect();
    let list = spec.include.as_ref().or(spec.exclude.as_ref());
    for name in list.into_iter().flatten() {
        if !names.contains(&name.value) {
            let message = format!(
                "the MCP server `{}` has no tool `{}`",
                spec.name, name.value
            );
            let problem = Problem::new(ProblemKind::UnknownTool, name.at, message)
                .width(name.width)
                .with_choices(&name.value, names.iter().map(String::as_str));
            problems.push(problem);
        }
    }
    let listed = |tool: &Tool, list: &Option<Vec<super::yaml::Spanned<String>>>| {
        list.iter().flatten().any(|name| name.value == tool.name())
    };
    offered
        .into_iter()
        .filter(|tool| match (&spec.include, &spec.exclude) {
            (Some(_), _) => listed(tool, &spec.include),
            (None, Some(_)) => !listed(tool, &spec.exclude),
            (None, None) => true,
        })
        .collect()
}
