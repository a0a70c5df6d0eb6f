//! The file's handlers made into handler values, in the file's order, with the
//! settings-level handlers (prompt template, tool timeout) around them.

use std::collections::BTreeMap;
use std::sync::Arc;

use adk::{BoxHandler, ToolRequest};
use adk_handlers as h;
use adk_handlers::{ApprovalRule, Decision, HumanApproval};

use super::error::{Problem, ProblemKind};
use super::exit_if::ExitIf;
use super::registry::{HandlerSettings, Registry};
use super::role::Role;
use super::spec::{ApprovalSpec, HandlerKind, HandlerSpec, Spec};
use super::yaml::Spanned;

/// A handler and the name the file gave it.
pub(crate) type Named = (String, BoxHandler);

/// The prompt template (first), the file's handlers, and the tool timeout (last, so
/// that it bounds the tool call alone).
pub(crate) fn all(spec: &Spec, registry: &Registry, problems: &mut Vec<Problem>) -> Vec<Named> {
    let mut handlers = Vec::new();
    if let Some(prompt) = prompt(spec, registry) {
        handlers.push(("prompt_template".to_owned(), prompt));
    }
    for handler in &spec.handlers {
        if let Some(made) = make(handler, registry, problems) {
            handlers.push((handler.name.value.clone(), made));
        }
    }
    if let Some(timeout) = spec.tool_timeout {
        handlers.push((
            "tool_timeout".to_owned(),
            h::ToolTimeout::new(timeout).into(),
        ));
    }
    handlers
}

/// The instruction: the prompt template (or the description), with the date and time
/// when asked for.
fn prompt(spec: &Spec, registry: &Registry) -> Option<BoxHandler> {
    let mut source = match &spec.prompt {
        Some(text) => text.clone(),
        None if !spec.description.is_empty() => "{{ description }}".to_owned(),
        None if spec.include_date_time => String::new(),
        None => return None,
    };
    if spec.include_date_time {
        if !source.is_empty() {
            source.push_str("\n\n");
        }
        source.push_str(
            "Current date and time: {{ weekday }}, {{ date }} {{ time }} ({{ timezone }}).",
        );
    }
    // Both were checked when the file was read.
    let mut template = h::PromptTemplate::new(source)
        .ok()?
        .description(spec.description.clone());
    if let Some(zone) = &spec.timezone {
        template = template.timezone(zone).ok()?;
    }
    if let Some(clock) = &registry.clock {
        let clock = Arc::clone(clock);
        template = template.clock(move || clock());
    }
    Some(template.into())
}

/// The handler of one entry; a problem (at its name) when its settings are refused.
fn make(
    handler: &HandlerSpec,
    registry: &Registry,
    problems: &mut Vec<Problem>,
) -> Option<BoxHandler> {
    let made = match &handler.kind {
        HandlerKind::RoleFilter { roles, default } => Ok(role_filter(roles, default)),
        HandlerKind::Approval { tools, per_turn } => Ok(approval(tools, *per_turn)),
        HandlerKind::Policy { deny, ask } => Ok(policy(deny, ask)),
        HandlerKind::CallLimits {
            model_calls,
            tool_calls,
            per_tool,
            on_limit,
        } => Ok(call_limits(*model_calls, *tool_calls, per_tool, *on_limit)),
        HandlerKind::OutputCap {
            max_chars,
            max_bytes,
        } => match (max_chars, max_bytes) {
            (Some(n), _) => Ok(h::max_output_chars(*n).into()),
            (None, Some(n)) => Ok(h::max_output_bytes(*n).into()),
            (None, None) => return None,
        },
        HandlerKind::Envelope { note } => Ok(match note {
            Some(note) => h::untrusted_envelope().note(note).into(),
            None => h::untrusted_envelope().into(),
        }),
        HandlerKind::StopAtTool {
            on_call,
            until_success,
        } => h::StopAtTool::builder()
            .on_call(names(on_call).iter().cloned())
            .until_success(names(until_success).iter().cloned())
            .build()
            .map(Into::into)
            .map_err(|e| e.to_string()),
        HandlerKind::TaskCompleted {
            description,
            closing_prompt,
        } => Ok(task_completed(
            description.as_deref(),
            closing_prompt.as_deref(),
        )),
        HandlerKind::Slots { slots, exit_if } => slot_filling(slots, exit_if.as_ref()),
        HandlerKind::Registered(value) => registered(&handler.name.value, value, registry)?,
        HandlerKind::Invalid => return None,
    };
    made.map_err(|error| {
        let name = &handler.name;
        let message = format!("handler `{}`: {error}", name.value);
        let problem = Problem::new(ProblemKind::HandlerSettings, name.at, message);
        problems.push(problem.width(name.width));
    })
    .ok()
}

fn names(list: &[Spanned<String>]) -> Arc<[String]> {
    list.iter().map(|t| t.value.clone()).collect()
}

/// A rule per tool: what the person is shown, and which decisions they may make.
fn approval(tools: &[ApprovalSpec], per_turn: bool) -> BoxHandler {
    let mut approval = HumanApproval::new();
    for spec in tools {
        let mut rule = ApprovalRule::new();
        if let Some(text) = &spec.description {
            rule = rule.description(text.clone());
        }
        if let Some(kinds) = &spec.allow {
            rule = rule.allow(kinds.iter().copied());
        }
        approval = approval.tool(spec.tool.value.clone(), rule);
    }
    if per_turn {
        approval = approval.per_turn();
    }
    approval.into()
}

/// Denies some tools with a reason, asks a person about others, allows the rest.
fn policy(deny: &[(Spanned<String>, String)], ask: &[Spanned<String>]) -> BoxHandler {
    let deny: BTreeMap<String, String> = deny
        .iter()
        .map(|(tool, reason)| (tool.value.clone(), reason.clone()))
        .collect();
    let ask = names(ask);
    h::policy(move |call: &ToolRequest| {
        if let Some(reason) = deny.get(call.name.as_str()) {
            Decision::deny(reason.clone())
        } else if ask.iter().any(|name| *name == call.name) {
            Decision::ask(format!("`{}` needs a person's approval", call.name))
        } else {
            Decision::Allow
        }
    })
    .into()
}

fn call_limits(
    model_calls: Option<usize>,
    tool_calls: Option<usize>,
    per_tool: &[(Spanned<String>, usize)],
    on_limit: h::OnLimit,
) -> BoxHandler {
    let mut limits = h::CallLimits::new().on_limit(on_limit);
    if let Some(n) = model_calls {
        limits = limits.model_calls(n);
    }
    if let Some(n) = tool_calls {
        limits = limits.tool_calls(n);
    }
    for (tool, n) in per_tool {
        limits = limits.per_tool(tool.value.clone(), *n);
    }
    limits.into()
}

fn task_completed(description: Option<&str>, closing_prompt: Option<&str>) -> BoxHandler {
    let mut handler = h::TaskCompleted::new();
    if let Some(text) = description {
        handler = handler.description(text);
    }
    if let Some(text) = closing_prompt {
        handler = handler.closing_prompt(text);
    }
    handler.into()
}

/// The slots, ending the run when an `exit_if` condition holds (or, without any, when
/// every slot is set).
fn slot_filling(slots: &[h::Slot], exit_if: Option<&ExitIf>) -> Result<BoxHandler, String> {
    let filling = h::SlotFilling::new(slots.iter().cloned()).map_err(|e| e.to_string())?;
    Ok(match exit_if.cloned() {
        Some(exit) => filling.exit_when(move |values| exit.holds(values)).into(),
        None => filling.into(),
    })
}

/// The program's handler, made from the file's settings; `None` when the registry has
/// no such handler (a problem reported already).
fn registered(
    name: &str,
    value: &serde_json::Value,
    registry: &Registry,
) -> Option<Result<BoxHandler, String>> {
    let make = registry.handlers.get(name)?;
    let settings = HandlerSettings {
        name: name.to_owned(),
        value: value.clone(),
    };
    Some(make(&settings).map_err(|e| e.to_string()))
}

/// Keeps the tools the caller's [`Role`] may use: its list, or `default` for a caller
/// with no role or a role the file does not list. `*` stands for every tool.
fn role_filter(
    roles: &[(String, Vec<Spanned<String>>)],
    default: &[Spanned<String>],
) -> BoxHandler {
    let roles: Arc<BTreeMap<String, Arc<[String]>>> = Arc::new(
        roles
            .iter()
            .map(|(role, tools)| (role.clone(), names(tools)))
            .collect(),
    );
    let default = names(default);
    h::filter_tools(move |extensions, tool| {
        let allowed = extensions
            .get::<Role>()
            .and_then(|role| roles.get(role.as_str()))
            .unwrap_or(&default);
        allowed
            .iter()
            .any(|name| name == "*" || name == tool.name())
    })
    .into()
}
