//! The file's handlers made into handler values, in the file's order, with the
//! settings-level handlers (prompt template, tool timeout) around them.

use std::collections::BTreeMap;
use std::sync::Arc;

use adk::{BoxHandler, ToolRequest};
use adk_handlers as h;
use adk_handlers::{ApprovalRule, Decision, HumanApproval};

use super::Role;
use super::error::{Problem, ProblemKind};
use super::registry::{HandlerSettings, Registry};
use super::spec::{HandlerKind, HandlerSpec, Spec};

/// A handler and the name the file gave it.
pub(crate) type Named = (String, BoxHandler);

/// The prompt template (first), the file's handlers, and the tool timeout (last, so
/// that it bounds the tool call alone).
pub(crate) fn all(spec: &Spec, registry: &Registry, problems: &mut Vec<Problem>) -> Vec<Named> {
    let mut handlers = Vec::new();
    if let Some(prompt) = prompt(spec) {
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
fn prompt(spec: &Spec) -> Option<BoxHandler> {
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
    Some(template.into())
}

fn make(
    handler: &HandlerSpec,
    registry: &Registry,
    problems: &mut Vec<Problem>,
) -> Option<BoxHandler> {
    let name = &handler.name;
    let refused = |error: String| {
        let message = format!("handler `{}`: {error}", name.value);
        Problem::new(ProblemKind::HandlerSettings, name.at, message).width(name.width)
    };
    Some(match &handler.kind {
        HandlerKind::RoleFilter { roles, default } => role_filter(roles, default),
        HandlerKind::Approval { tools, per_turn } => {
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
            if *per_turn {
                approval = approval.per_turn();
            }
            approval.into()
        }
        HandlerKind::Policy { deny, ask } => {
            let deny: BTreeMap<String, String> = deny
                .iter()
                .map(|(t, r)| (t.value.clone(), r.clone()))
                .collect();
            let ask: Vec<String> = ask.iter().map(|t| t.value.clone()).collect();
            h::policy(move |call: &ToolRequest| {
                if let Some(reason) = deny.get(&call.name) {
                    Decision::deny(reason.clone())
                } else if ask.contains(&call.name) {
                    Decision::ask(format!("`{}` needs a person's approval", call.name))
                } else {
                    Decision::Allow
                }
            })
            .into()
        }
        HandlerKind::CallLimits {
            model_calls,
            tool_calls,
            per_tool,
            on_limit,
        } => {
            let mut limits = h::CallLimits::new().on_limit(*on_limit);
            if let Some(n) = model_calls {
                limits = limits.model_calls(*n);
            }
            if let Some(n) = tool_calls {
                limits = limits.tool_calls(*n);
            }
            for (tool, n) in per_tool {
                limits = limits.per_tool(tool.value.clone(), *n);
            }
            limits.into()
        }
        HandlerKind::OutputCap {
            max_chars,
            max_bytes,
        } => match (max_chars, max_bytes) {
            (Some(n), _) => h::max_output_chars(*n).into(),
            (None, Some(n)) => h::max_output_bytes(*n).into(),
            (None, None) => return None,
        },
        HandlerKind::Envelope { note } => match note {
            Some(note) => h::untrusted_envelope().note(note).into(),
            None => h::untrusted_envelope().into(),
        },
        HandlerKind::StopAtTool {
            on_call,
            until_success,
        } => {
            let names = |list: &Vec<super::yaml::Spanned<String>>| {
                list.iter().map(|t| t.value.clone()).collect::<Vec<_>>()
            };
            let built = h::StopAtTool::builder()
                .on_call(names(on_call))
                .until_success(names(until_success))
                .build();
            match built {
                Ok(handler) => handler.into(),
                Err(error) => {
                    problems.push(refused(error.to_string()));
                    return None;
                }
            }
        }
        HandlerKind::TaskCompleted {
            description,
            closing_prompt,
        } => {
            let mut handler = h::TaskCompleted::new();
            if let Some(text) = description {
                handler = handler.description(text.clone());
            }
            if let Some(text) = closing_prompt {
                handler = handler.closing_prompt(text.clone());
            }
            handler.into()
        }
        HandlerKind::Slots { slots, exit_if } => {
            let filling = match h::SlotFilling::new(slots.clone()) {
                Ok(filling) => filling,
                Err(error) => {
                    problems.push(refused(error.to_string()));
                    return None;
                }
            };
            match exit_if.clone() {
                Some(exit) => filling.exit_when(move |values| exit.holds(values)).into(),
                None => filling.into(),
            }
        }
        HandlerKind::Registered(value) => {
            let make = registry.handlers.get(&name.value)?;
            let settings = HandlerSettings {
                name: name.value.clone(),
                value: value.clone(),
            };
            match make(&settings) {
                Ok(handler) => handler,
                Err(error) => {
                    problems.push(refused(error.to_string()));
                    return None;
                }
            }
        }
        HandlerKind::Invalid => return None,
    })
}

/// Keeps the tools the caller's [`Role`] may use: its list, or `default` for a caller
/// with no role or a role the file does not list. `*` stands for every tool.
fn role_filter(
    roles: &[(String, Vec<super::yaml::Spanned<String>>)],
    default: &[super::yaml::Spanned<String>],
) -> BoxHandler {
    let names = |list: &[super::yaml::Spanned<String>]| -> Arc<[String]> {
        list.iter().map(|t| t.value.clone()).collect()
    };
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
