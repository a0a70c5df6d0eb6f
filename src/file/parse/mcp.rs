//! `mcp_servers:`: how to reach each server, and which of its tools the agent gets.

use crate::file::error::ProblemKind;
use crate::file::spec::{McpSpec, McpTransport};
use crate::file::yaml::{Node, Walk};

const KEYS: &[&str] = &[
    "name",
    "command",
    "url",
    "bearer_token",
    "include",
    "exclude",
    "env",
    "connect_retries",
    "connect_timeout",
    "call_timeout",
];

/// One server.
pub(super) fn server(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<McpSpec> {
    let fields = walk.mapping(node, "an MCP server", KEYS)?;
    if !cfg!(feature = "mcp") {
        let message = "MCP servers need the `mcp` feature of tower-adk";
        walk.at(node, ProblemKind::NotEnabled, message);
    }
    let name = walk
        .required(&fields, "name", "an MCP server")
        .and_then(|n| walk.plain_string(n));
    let transport = match (fields.get("command"), fields.get("url")) {
        (Some(_), Some(url)) => {
            let message = "an MCP server has either `command` (stdio) or `url` (HTTP), not both";
            walk.at(url, ProblemKind::Conflict, message);
            None
        }
        (Some(node), None) => {
            let before = walk.problems.len();
            let command = match &node.data {
                saphyr::YamlData::Sequence(_) => walk.list(node, Walk::string),
                _ => walk.string(node).into_iter().collect(),
            };
            let empty = command.first().is_none_or(String::is_empty);
            if empty && walk.problems.len() == before {
                let message =
                    "an empty command: give the program to start, e.g. `[node, server.js]`";
                walk.at(node, ProblemKind::InvalidValue, message);
            }
            if let Some(token) = fields.get("bearer_token") {
                let message = "`bearer_token` is for HTTP servers (`url`) only";
                walk.at(token, ProblemKind::Conflict, message);
            }
            (!empty).then_some(McpTransport::Stdio { command })
        }
        (None, Some(url)) => {
            if let Some(env) = fields.get("env") {
                let message = "`env` is for stdio servers (`command`) only";
                walk.at(env, ProblemKind::Conflict, message);
            }
            let bearer_token = fields.get("bearer_token").and_then(|n| walk.string(n));
            walk.string(url)
                .map(|url| McpTransport::Http { url, bearer_token })
        }
        (None, None) => {
            let message = "an MCP server needs `command` (stdio) or `url` (HTTP)";
            walk.problem(crate::file::error::Problem::new(
                ProblemKind::MissingKey,
                fields.at(),
                message,
            ));
            None
        }
    };
    let include = fields.get("include").map(|n| walk.names(n));
    let exclude = fields.get("exclude").map(|n| walk.names(n));
    if let (true, Some(key)) = (fields.has("include"), fields.key("exclude")) {
        let message = "an MCP server takes `include` or `exclude`, not both: list the tools to keep, or the ones to leave out";
        walk.at(key, ProblemKind::IncludeAndExclude, message);
    }
    let env = match fields.get("env") {
        Some(node) => walk
            .entries(node, "environment variables")
            .into_iter()
            .filter_map(|(key, value)| Some((key.value, walk.string(value)?)))
            .collect(),
        None => Vec::new(),
    };
    let connect_retries = fields.get("connect_retries").and_then(|n| walk.u32(n, 0));
    let connect_timeout = fields.get("connect_timeout").and_then(|n| walk.duration(n));
    let call_timeout = fields.get("call_timeout").and_then(|n| walk.duration(n));
    Some(McpSpec {
        name: name?,
        transport: transport?,
        include,
        exclude,
        env,
        connect_retries,
        connect_timeout,
        call_timeout,
    })
}
