//! The names a file uses, checked against what the program registered and what the
//! agent's tools will be: tools, handlers, models, and the tools handlers name.

use super::error::{Location, Problem, ProblemKind};
use super::parse::BUILT_IN_HANDLERS;
use super::registry::Registry;
use super::spec::{HandlerKind, ModelSpec, Spec};
use super::yaml::Spanned;

/// The registry's side: tools listed, handlers and model named.
pub(crate) fn registry_names(spec: &Spec, registry: &Registry, problems: &mut Vec<Problem>) {
    for tool in &spec.tools {
        if !registry.tools.contains_key(&tool.value) {
            let message = format!("no tool `{}` is registered", tool.value);
            problems.push(unknown(
                ProblemKind::UnknownTool,
                tool,
                message,
                registry.tool_names(),
            ));
        }
    }
    for handler in &spec.handlers {
        let name = &handler.name;
        let known = BUILT_IN_HANDLERS.contains(&name.value.as_str())
            || registry.handlers.contains_key(&name.value);
        if !known {
            let message = format!("no handler `{}` is built in or registered", name.value);
            let choices = BUILT_IN_HANDLERS
                .iter()
                .copied()
                .chain(registry.handler_names());
            problems.push(unknown(ProblemKind::UnknownHandler, name, message, choices));
        }
    }
    if let Some(ModelSpec::Registered(name)) = &spec.model
        && !registry.models.contains_key(&name.value)
    {
        let message = format!("no model `{}` is registered", name.value);
        problems.push(unknown(
            ProblemKind::UnknownModel,
            name,
            message,
            registry.model_names(),
        ));
    }
}

fn unknown<'a>(
    kind: ProblemKind,
    name: &Spanned<String>,
    message: String,
    choices: impl IntoIterator<Item = &'a str>,
) -> Problem {
    Problem::new(kind, name.at, message)
        .width(name.width)
        .with_choices(&name.value, choices)
}

/// The tools that handlers add to the run themselves (`task_completed`, `set_slot_*`).
pub(crate) fn handler_tools(spec: &Spec) -> Vec<String> {
    let mut names = Vec::new();
    for handler in &spec.handlers {
        match &handler.kind {
            HandlerKind::TaskCompleted { .. } => {
                names.push(adk_handlers::TaskCompleted::TOOL_NAME.to_owned());
            }
            HandlerKind::Slots { slots, .. } => names.extend(slots.iter().map(|s| s.tool_name())),
            _ => {}
        }
    }
    names
}

/// Every tool name a handler setting, `return_directly` or a scripted turn's call uses
/// must be one of `tools` (the agent's tools and the handlers' own); `"*"` in a role's
/// list means all.
pub(crate) fn tool_references(spec: &Spec, tools: &[String], problems: &mut Vec<Problem>) {
    let mut check = |name: &Spanned<String>, star: bool| {
        if (star && name.value == "*") || tools.contains(&name.value) {
            return;
        }
        let message = format!("the agent has no tool `{}`", name.value);
        let choices = tools.iter().map(String::as_str);
        problems.push(unknown(ProblemKind::UnknownTool, name, message, choices));
    };
    for name in &spec.return_directly {
        check(name, false);
    }
    if let Some(ModelSpec::Scripted { calls, .. }) = &spec.model {
        calls.iter().for_each(|t| check(t, false));
    }
    for handler in &spec.handlers {
        match &handler.kind {
            HandlerKind::RoleFilter { roles, default } => {
                roles
                    .iter()
                    .flat_map(|(_, tools)| tools)
                    .chain(default)
                    .for_each(|t| check(t, true));
            }
            HandlerKind::Approval { tools, .. } => tools.iter().for_each(|a| check(&a.tool, false)),
            HandlerKind::Policy { deny, ask } => {
                deny.iter()
                    .map(|(t, _)| t)
                    .chain(ask)
                    .for_each(|t| check(t, false));
            }
            HandlerKind::CallLimits { per_tool, .. } => {
                per_tool.iter().for_each(|(t, _)| check(t, false))
            }
            HandlerKind::StopAtTool {
                on_call,
                until_success,
            } => {
                on_call
                    .iter()
                    .chain(until_success)
                    .for_each(|t| check(t, false));
            }
            _ => {}
        }
    }
}

/// The tool names known before connecting to MCP servers, or `None` when a server
/// without an `include` list may offer any tool.
pub(crate) fn static_tools(spec: &Spec) -> Option<Vec<String>> {
    let mut names: Vec<String> = spec.tools.iter().map(|t| t.value.clone()).collect();
    for server in &spec.mcp_servers {
        names.extend(server.include.as_ref()?.iter().map(|t| t.value.clone()));
    }
    names.extend(spec.remote_agents.iter().map(|a| a.name.value.clone()));
    names.extend(handler_tools(spec));
    Some(names)
}

/// A problem at the start of the file (for a file that is empty).
pub(crate) fn at_start(kind: ProblemKind, message: &str) -> Problem {
    Problem::new(kind, Location { line: 1, column: 1 }, message)
}
