//! `remote_agents:`: A2A agents elsewhere, each one tool of the agent.

use crate::file::error::ProblemKind;
use crate::file::spec::RemoteSpec;
use crate::file::yaml::{Node, Walk};

const KEYS: &[&str] = &[
    "name",
    "url",
    "description",
    "bearer_token",
    "headers",
    "connect_timeout",
    "request_timeout",
    "cancel_timeout",
    "streaming",
];

/// One remote agent.
pub(super) fn agent(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<RemoteSpec> {
    let fields = walk.mapping(node, "a remote agent", KEYS)?;
    if !cfg!(feature = "a2a-client") {
        let message = "remote A2A agents need the `a2a-client` feature of tower-adk";
        walk.at(node, ProblemKind::NotEnabled, message);
    }
    let name = walk
        .required(&fields, "name", "a remote agent")
        .and_then(|n| {
            let name = walk.name(n)?;
            if let Err(error) = adk::tool::check_name(&name.value) {
                let message = format!("a remote agent's name is the name of its tool: {error}");
                walk.at(n, ProblemKind::InvalidValue, message);
                return None;
            }
            Some(name)
        });
    let url = walk
        .required(&fields, "url", "a remote agent")
        .and_then(|n| Some((walk.string(n)?, n)))
        .and_then(|(url, n)| match url_problem(&url) {
            None => Some(url),
            Some(problem) => {
                let message = format!("`{url}` is not an agent's URL: {problem}");
                walk.at(n, ProblemKind::InvalidValue, message);
                None
            }
        });
    let description = fields.get("description").and_then(|n| walk.string(n));
    let bearer_token = fields.get("bearer_token").and_then(|n| walk.string(n));
    let headers = match fields.get("headers") {
        Some(node) => walk
            .entries(node, "HTTP headers")
            .into_iter()
            .filter_map(|(key, value)| Some((key.value, walk.string(value)?)))
            .collect(),
        None => Vec::new(),
    };
    let connect_timeout = fields.get("connect_timeout").and_then(|n| walk.duration(n));
    let request_timeout = fields.get("request_timeout").and_then(|n| walk.duration(n));
    let cancel_timeout = fields.get("cancel_timeout").and_then(|n| walk.duration(n));
    let streaming = fields.get("streaming").and_then(|n| walk.bool(n));
    Some(RemoteSpec {
        name: name?,
        url: url?,
        description,
        bearer_token,
        headers,
        connect_timeout,
        request_timeout,
        cancel_timeout,
        streaming,
    })
}

/// What is wrong with an agent's URL, if anything: it must be `http` or `https` with a
/// host (the card is read under it).
fn url_problem(url: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Some("expected `http://HOST...` or `https://HOST...`");
    };
    if !matches!(scheme, "http" | "https") {
        return Some("only `http` and `https` are spoken");
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Some("it names no host");
    }
    if url.chars().any(char::is_whitespace) {
        return Some("it holds a space");
    }
    None
}
