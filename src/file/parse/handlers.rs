//! `handlers:`: built-in handlers by name with their settings, and the names of the
//! program's own handlers (checked against the registry later).

use adk_handlers::{DecisionKind, OnLimit, Slot};
use saphyr::{Scalar, YamlData};

use crate::file::error::ProblemKind;
use crate::file::exit_if::ExitIf;
use crate::file::spec::{ApprovalSpec, HandlerKind, HandlerSpec};
use crate::file::yaml::{Node, Walk};

/// The built-in handlers' names, as a file writes them.
pub(crate) const BUILT_IN: &[&str] = &[
    "role_filter",
    "approval",
    "policy",
    "call_limits",
    "output_cap",
    "envelope",
    "stop_at_tool",
    "task_completed",
    "slots",
];

/// One entry: `- NAME` or `- NAME: SETTINGS`.
pub(super) fn handler(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<HandlerSpec> {
    let (name, settings) = match &node.data {
        YamlData::Value(Scalar::String(_)) => (walk.name(node)?, None),
        YamlData::Mapping(map) if map.len() == 1 => {
            let (key, value) = map.iter().next()?;
            (walk.name(key)?, Some(value))
        }
        _ => {
            let message = "a handler is its name (`- task_completed`) or its name with its settings (`- call_limits: {tool_calls: 5}`)";
            walk.at(node, ProblemKind::WrongType, message);
            return None;
        }
    };
    let null = Node::value_from_str("~");
    let settings = settings.unwrap_or(&null);
    let kind = match name.value.as_str() {
        "role_filter" => role_filter(walk, settings),
        "approval" => approval(walk, settings),
        "policy" => policy(walk, settings),
        "call_limits" => call_limits(walk, settings),
        "output_cap" => output_cap(walk, settings, node),
        "envelope" => envelope(walk, settings),
        "stop_at_tool" => stop_at_tool(walk, settings, node),
        "task_completed" => task_completed(walk, settings),
        "slots" => slots(walk, settings),
        _ => walk.json(settings).map(HandlerKind::Registered),
    };
    Some(HandlerSpec {
        name,
        kind: kind.unwrap_or(HandlerKind::Invalid),
    })
}

/// Settings that may be left out: `None` stands for an empty mapping.
fn optional<'a, 'n>(
    walk: &mut Walk<'_>,
    node: &'a Node<'n>,
    place: &str,
    keys: &[&str],
) -> Option<Option<crate::file::yaml::Fields<'a, 'n>>> {
    if matches!(node.data, YamlData::Value(Scalar::Null)) {
        return Some(None);
    }
    walk.mapping(node, place, keys).map(Some)
}

/// `role_filter: {roles: {ROLE: [TOOL | "*"]}, default: [TOOL]}`.
fn role_filter(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<HandlerKind> {
    let fields = walk.mapping(node, "`role_filter`", &["roles", "default"])?;
    let roles = walk
        .required(&fields, "roles", "`role_filter`")
        .map(|node| walk.entries(node, "roles and their tools"))
        .unwrap_or_default()
        .into_iter()
        .map(|(role, tools)| (role.value, walk.names(tools)))
        .collect();
    let default = fields
        .get("default")
        .map(|n| walk.names(n))
        .unwrap_or_default();
    Some(HandlerKind::RoleFilter { roles, default })
}

/// `approval: {tools: [TOOL] | {TOOL: {description, allow}}, per_turn: BOOL}`.
fn approval(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<HandlerKind> {
    let fields = walk.mapping(node, "`approval`", &["tools", "per_turn"])?;
    let per_turn = fields
        .get("per_turn")
        .and_then(|n| walk.bool(n))
        .unwrap_or(false);
    let tools = walk.required(&fields, "tools", "`approval`")?;
    let tools = match &tools.data {
        YamlData::Mapping(_) => walk
            .entries(tools, "tools and their approval rules")
            .into_iter()
            .filter_map(|(tool, rule)| approval_rule(walk, tool, rule))
            .collect(),
        _ => walk
            .names(tools)
            .into_iter()
            .map(|tool| ApprovalSpec {
                tool,
                description: None,
                allow: None,
            })
            .collect(),
    };
    Some(HandlerKind::Approval { tools, per_turn })
}

fn approval_rule(
    walk: &mut Walk<'_>,
    tool: crate::file::yaml::Spanned<String>,
    node: &Node<'_>,
) -> Option<ApprovalSpec> {
    let fields = optional(walk, node, "an approval rule", &["description", "allow"])?;
    let mut spec = ApprovalSpec {
        tool,
        description: None,
        allow: None,
    };
    if let Some(fields) = fields {
        spec.description = fields.get("description").and_then(|n| walk.string(n));
        spec.allow = fields.get("allow").map(|node| {
            walk.list(node, |walk, node| {
                let kind =
                    walk.choice(node, "decision", &["approve", "edit", "reject", "respond"])?;
                Some(match kind.as_str() {
                    "approve" => DecisionKind::Approve,
                    "edit" => DecisionKind::Edit,
                    "reject" => DecisionKind::Reject,
                    _ => DecisionKind::Respond,
                })
            })
        });
    }
    Some(spec)
}

/// `policy: {deny: {TOOL: REASON}, ask: [TOOL]}`.
fn policy(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<HandlerKind> {
    let fields = walk.mapping(node, "`policy`", &["deny", "ask"])?;
    let deny = fields
        .get("deny")
        .map(|node| walk.entries(node, "tools and the reasons they are denied"))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(tool, reason)| Some((tool, walk.string(reason)?)))
        .collect();
    let ask = fields.get("ask").map(|n| walk.names(n)).unwrap_or_default();
    Some(HandlerKind::Policy { deny, ask })
}

/// `call_limits: {model_calls, tool_calls, per_tool: {TOOL: N}, on_limit}`.
fn call_limits(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<HandlerKind> {
    let keys = &["model_calls", "tool_calls", "per_tool", "on_limit"];
    let fields = walk.mapping(node, "`call_limits`", keys)?;
    let model_calls = fields.get("model_calls").and_then(|n| walk.usize(n, 1));
    let tool_calls = fields.get("tool_calls").and_then(|n| walk.usize(n, 0));
    let per_tool = fields
        .get("per_tool")
        .map(|node| walk.entries(node, "tools and their limits"))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(tool, n)| Some((tool, walk.usize(n, 0)?)))
        .collect();
    let on_limit = match fields.get("on_limit") {
        Some(node) => match walk
            .choice(node, "`on_limit`", &["end_run", "error", "answer_model"])?
            .as_str()
        {
            "end_run" => OnLimit::EndRun,
            "error" => OnLimit::Error,
            _ => OnLimit::AnswerModel,
        },
        None => OnLimit::default(),
    };
    Some(HandlerKind::CallLimits {
        model_calls,
        tool_calls,
        per_tool,
        on_limit,
    })
}

/// `output_cap: {max_chars: N}` or `{max_bytes: N}`.
fn output_cap(walk: &mut Walk<'_>, node: &Node<'_>, entry: &Node<'_>) -> Option<HandlerKind> {
    let fields = walk.mapping(node, "`output_cap`", &["max_chars", "max_bytes"])?;
    let max_chars = fields.get("max_chars").and_then(|n| walk.usize(n, 1));
    let max_bytes = fields.get("max_bytes").and_then(|n| walk.usize(n, 1));
    match (fields.has("max_chars"), fields.has("max_bytes")) {
        (true, true) => {
            walk.at(
                entry,
                ProblemKind::Conflict,
                "`output_cap` takes `max_chars` or `max_bytes`, not both",
            );
            None
        }
        (false, false) => {
            walk.at(
                entry,
                ProblemKind::MissingKey,
                "`output_cap` needs `max_chars` or `max_bytes`",
            );
            None
        }
        _ => Some(HandlerKind::OutputCap {
            max_chars,
            max_bytes,
        }),
    }
}

/// `envelope` or `envelope: {note: TEXT}`.
fn envelope(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<HandlerKind> {
    let fields = optional(walk, node, "`envelope`", &["note"])?;
    let note = fields
        .and_then(|f| f.get("note"))
        .and_then(|n| walk.string(n));
    Some(HandlerKind::Envelope { note })
}

/// `stop_at_tool: {on_call: [TOOL]}` or `{until_success: [TOOL]}`.
fn stop_at_tool(walk: &mut Walk<'_>, node: &Node<'_>, entry: &Node<'_>) -> Option<HandlerKind> {
    let fields = walk.mapping(node, "`stop_at_tool`", &["on_call", "until_success"])?;
    let on_call = fields
        .get("on_call")
        .map(|n| walk.names(n))
        .unwrap_or_default();
    let until_success = fields
        .get("until_success")
        .map(|n| walk.names(n))
        .unwrap_or_default();
    if on_call.is_empty() && until_success.is_empty() {
        let message = "`stop_at_tool` needs the tools to stop at, in `on_call` or `until_success`";
        walk.at(entry, ProblemKind::MissingKey, message);
        return None;
    }
    Some(HandlerKind::StopAtTool {
        on_call,
        until_success,
    })
}

/// `task_completed` or `task_completed: {description, closing_prompt}`.
fn task_completed(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<HandlerKind> {
    let fields = optional(
        walk,
        node,
        "`task_completed`",
        &["description", "closing_prompt"],
    )?;
    let (description, closing_prompt) = match fields {
        Some(f) => (
            f.get("description").and_then(|n| walk.string(n)),
            f.get("closing_prompt").and_then(|n| walk.string(n)),
        ),
        None => (None, None),
    };
    Some(HandlerKind::TaskCompleted {
        description,
        closing_prompt,
    })
}

/// `slots: {slots: [{name, type, description, values}], exit_if: [CONDITION]}`.
fn slots(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<HandlerKind> {
    let fields = walk.mapping(node, "`slots`", &["slots", "exit_if"])?;
    let before = walk.problems.len();
    let slots = match walk.required(&fields, "slots", "`slots`") {
        Some(node) => walk.list(node, slot),
        None => Vec::new(),
    };
    let conditions = fields.get("exit_if").map(|n| walk.names(n));
    if walk.problems.len() > before {
        // The slots' own problems are reported; checking what is left would add more.
        return None;
    }
    if let Err(error) = adk_handlers::SlotFilling::new(slots.clone()) {
        walk.at(node, ProblemKind::InvalidValue, error.to_string());
        return None;
    }
    let exit_if = conditions.map(|c| ExitIf::new(&c, &slots, &mut walk.problems));
    Some(HandlerKind::Slots { slots, exit_if })
}

const SLOT_KEYS: &[&str] = &["name", "type", "description", "values"];

fn slot(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<Slot> {
    let fields = walk.mapping(node, "a slot", SLOT_KEYS)?;
    let name = walk
        .required(&fields, "name", "a slot")
        .and_then(|n| walk.plain_string(n));
    let description = fields
        .get("description")
        .and_then(|n| walk.string(n))
        .unwrap_or_default();
    let kind = match fields.get("type") {
        Some(node) => walk.choice(node, "slot type", &["text", "bool", "float", "categorical"])?,
        None => "text".to_owned(),
    };
    let values = fields.get("values");
    if let Some(node) = values
        && kind != "categorical"
    {
        let message = "`values` is for slots of `type: categorical` only";
        walk.at(node, ProblemKind::Conflict, message);
    }
    let name = name?;
    Some(match kind.as_str() {
        "bool" => Slot::bool(name, description),
        "float" => Slot::float(name, description),
        "categorical" => {
            let node = walk.required(&fields, "values", "a categorical slot")?;
            let values = walk.list(node, Walk::plain_string);
            Slot::categorical(name, description, values)
        }
        _ => Slot::text(name, description),
    })
}
