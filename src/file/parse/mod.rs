//! From YAML nodes to the typed [`Spec`]: the top level here, the model, the MCP servers
//! and the handlers in their own files. Every reader records its problems and goes on.

mod handlers;

pub(crate) use self::handlers::BUILT_IN as BUILT_IN_HANDLERS;
mod mcp;
mod model;
mod remote;

/// The `model:` mapping, also read for an eval set's judge.
#[cfg(feature = "eval")]
pub(crate) use self::model::model;

use std::path::Path;

use adk_handlers::TemplateError;

use super::error::{Problem, ProblemKind};
use super::spec::{Spec, StoreSpec};
use super::yaml::{Fields, Node, Spanned, Walk, location};

/// The keys of the top level.
pub(crate) const KEYS: &[&str] = &[
    "name",
    "description",
    "model",
    "prompt",
    "prompt_file",
    "include_date_time",
    "timezone",
    "timeout",
    "tool_timeout",
    "mcp_connection_retries",
    "filler_messages",
    "max_iterations",
    "parallel_tool_calls",
    "tools",
    "return_directly",
    "mcp_servers",
    "remote_agents",
    "handlers",
    "checkpoints",
];

/// Reads the whole file; `base` is the folder that relative paths start from.
pub(crate) fn spec(walk: &mut Walk<'_>, root: &Node<'_>, base: Option<&Path>) -> Spec {
    let mut spec = Spec::default();
    let Some(top) = walk.mapping(root, "the agent file", KEYS) else {
        return spec;
    };
    spec.name = match top.get("name") {
        Some(node) => walk.plain_string(node).unwrap_or_default(),
        None => "agent".to_owned(),
    };
    if let Some(node) = top.get("description") {
        spec.description = walk.string(node).unwrap_or_default();
    }
    if let Some(node) = top.get("model") {
        let (model, options) = model::model(walk, node);
        spec.model = model;
        spec.options = options;
    } else {
        let message =
            "the agent file needs `model` (e.g. `model: {provider: openai, name: gpt-4o-mini}`)";
        walk.problem(Problem::new(ProblemKind::MissingKey, top.at(), message));
    }
    prompt(walk, &top, base, &mut spec);
    settings(walk, &top, &mut spec);
    if let Some(node) = top.get("tools") {
        spec.tools = walk.names(node);
    }
    if let Some(node) = top.get("return_directly") {
        spec.return_directly = walk.names(node);
    }
    if let Some(node) = top.get("mcp_servers") {
        spec.mcp_servers = walk.list(node, mcp::server);
    }
    if let Some(node) = top.get("remote_agents") {
        spec.remote_agents = walk.list(node, remote::agent);
    }
    if let Some(node) = top.get("handlers") {
        spec.handlers = walk.list(node, handlers::handler);
    }
    if let Some(node) = top.get("checkpoints") {
        checkpoints(walk, node, &mut spec);
    }
    spec
}

/// The prompt template, inline or from a file, and its time zone.
fn prompt(walk: &mut Walk<'_>, top: &Fields<'_, '_>, base: Option<&Path>, spec: &mut Spec) {
    let inline = top.get("prompt");
    let file = top.get("prompt_file");
    if let (Some(_), Some(node)) = (inline, file) {
        let message = "`prompt` and `prompt_file` cannot both be given: keep one";
        walk.at(node, ProblemKind::Conflict, message);
    }
    let source = if let Some(node) = inline {
        walk.string(node).map(|text| (text, node))
    } else if let Some(node) = file {
        walk.string(node).and_then(|path| {
            let path = base.map_or_else(|| Path::new(&path).to_owned(), |dir| dir.join(&path));
            match std::fs::read_to_string(&path) {
                Ok(text) => Some((text, node)),
                Err(error) => {
                    let message =
                        format!("cannot read the prompt file `{}`: {error}", path.display());
                    walk.at(node, ProblemKind::UnreadableFile, message);
                    None
                }
            }
        })
    } else {
        None
    };
    if let Some((text, node)) = source {
        // Compile it now, so that a broken template is a problem of the file.
        if let Err(error) = adk_handlers::PromptTemplate::new(text.clone()) {
            let message = match error {
                TemplateError::Compile { source } => {
                    format!("the prompt template does not compile: {source}")
                }
                other => format!("the prompt: {other}"),
            };
            walk.at(node, ProblemKind::InvalidValue, message);
        }
        spec.prompt = Some(text);
    }
    if let Some(node) = top.get("include_date_time") {
        spec.include_date_time = walk.bool(node).unwrap_or_default();
    }
    if let Some(node) = top.get("timezone")
        && let Some(name) = walk.string(node)
    {
        match jiff::tz::TimeZone::get(&name) {
            Ok(_) => spec.timezone = Some(name),
            Err(_) => {
                let message = format!(
                    "`{name}` is not a time zone of the IANA database (e.g. `Europe/Berlin`, `America/New_York`, `UTC`)"
                );
                walk.at(node, ProblemKind::InvalidTimezone, message);
            }
        }
    }
}

/// The run's limits and switches.
fn settings(walk: &mut Walk<'_>, top: &Fields<'_, '_>, spec: &mut Spec) {
    if let Some(node) = top.get("timeout") {
        spec.timeout = walk.duration(node);
    }
    if let Some(node) = top.get("tool_timeout") {
        spec.tool_timeout = walk.duration(node);
    }
    if let Some(node) = top.get("mcp_connection_retries") {
        spec.mcp_connection_retries = walk.u32(node, 0);
    }
    if let Some(node) = top.get("filler_messages") {
        spec.filler_messages = walk.bool(node);
    }
    if let Some(node) = top.get("max_iterations") {
        spec.max_iterations = walk.usize(node, 1);
    }
    if let Some(node) = top.get("parallel_tool_calls") {
        spec.parallel_tool_calls = walk.usize(node, 1);
    }
}

/// `checkpoints: {store: URL, durable: BOOL}`.
fn checkpoints(walk: &mut Walk<'_>, node: &Node<'_>, spec: &mut Spec) {
    let Some(fields) = walk.mapping(node, "`checkpoints`", &["store", "durable"]) else {
        return;
    };
    if let Some(node) = fields.get("durable") {
        spec.durable = walk.bool(node).unwrap_or_default();
    }
    let Some(node) = fields.get("store") else {
        return;
    };
    let Some(url) = walk.string(node) else {
        return;
    };
    let (store, feature) = if url == "memory" {
        (StoreSpec::Memory, None)
    } else if let Some(path) = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
    {
        (
            StoreSpec::Sqlite(path.to_owned()),
            Some(("sqlite", cfg!(feature = "sqlite"))),
        )
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        (
            StoreSpec::Postgres(url),
            Some(("postgres", cfg!(feature = "postgres"))),
        )
    } else if url.starts_with("redis://") || url.starts_with("rediss://") {
        (
            StoreSpec::Redis(url),
            Some(("redis", cfg!(feature = "redis"))),
        )
    } else {
        let message = "expected `memory`, `sqlite:PATH`, `postgres://...` or `redis://...`";
        walk.at(node, ProblemKind::InvalidValue, message);
        return;
    };
    if let Some((feature, false)) = feature {
        let message =
            format!("this program was built without the `{feature}` feature of tower-adk");
        walk.at(node, ProblemKind::NotEnabled, message);
        return;
    }
    spec.checkpoints = Some(Spanned {
        value: store,
        at: location(node),
        width: 1,
    });
}
