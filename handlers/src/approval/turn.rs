//! The per-turn mode: one interrupt for every call of a turn that needs approval, and
//! the decisions per call that the person's answer holds.

use std::collections::BTreeMap;

use adk::interrupt::Decision;
use adk::{Locals, ToolCall, ToolRequest};
use serde_json::{Map, Value, json};

use super::rule::{ApprovalRule, DecisionKind};

/// The key of the turn's decisions, by call id, in the run-local values: `after_model`
/// puts them there, each call's wrapper takes its own.
const DECISIONS: &str = "human_approval.decisions";

/// A call of the turn that needs approval.
pub(super) struct Asked<'a> {
    pub(super) call: &'a ToolCall,
    pub(super) rule: &'a ApprovalRule,
    pub(super) arguments: Value,
}

/// The payload of a turn's interrupt; `error` says why an answer was not taken.
pub(super) fn payload(asked: &[Asked<'_>], error: Option<&str>) -> Value {
    let calls: Vec<Value> = asked
        .iter()
        .map(|a| {
            json!({
                "call_id": a.call.id,
                "tool": a.call.name,
                "arguments": a.arguments,
                "description": a.rule.describe_call(&a.call.name, &a.arguments),
                "allowed": a.rule.allowed_names(),
            })
        })
        .collect();
    let mut payload = json!({"kind": "approvals", "calls": calls});
    if let (Some(error), Some(object)) = (error, payload.as_object_mut()) {
        object.insert("error".to_owned(), Value::from(error));
    }
    payload
}

/// A person's answer to a turn's interrupt, read.
#[derive(Debug, Default)]
pub(super) struct Answer {
    /// The decision for each call that was asked about, by call id.
    pub(super) decisions: BTreeMap<String, Decision>,
    /// The tools approved for good.
    pub(super) always: Vec<String>,
}

/// Reads the hook's decision: `Approve` or `Reject` answer every call alike; `Respond`
/// carries an object with a decision per call id. Every call asked about needs one.
///
/// # Errors
///
/// What is wrong with the answer, for the person, who is asked again.
pub(super) fn read(decision: &Decision, asked: &[Asked<'_>]) -> Result<Answer, String> {
    let mut answer = Answer::default();
    for a in asked {
        let (decision, always) = match decision {
            Decision::Approve | Decision::Reject { .. } => (decision.clone(), false),
            Decision::Respond {
                answer: Value::Object(by_call),
            } => {
                let one = by_call
                    .get(a.call.id.as_str())
                    .ok_or_else(|| format!("no decision for the call `{}`", a.call.id))?;
                read_one(one).map_err(|e| format!("the decision for `{}`: {e}", a.call.id))?
            }
            _ => {
                return Err(
                    "answer with approve, reject, or respond with an object that maps each \
                     call id to its decision"
                        .to_owned(),
                );
            }
        };
        let runs = matches!(decision, Decision::Approve | Decision::Edit { .. });
        if always && runs && a.rule.allows(DecisionKind::Approve) {
            answer.always.push(a.call.name.to_string());
        }
        answer.decisions.insert(a.call.id.to_string(), decision);
    }
    Ok(answer)
}

/// One call's decision: a [`Decision`] in its serde form, with an optional `"always"`.
fn read_one(value: &Value) -> Result<(Decision, bool), String> {
    let Value::Object(fields) = value else {
        return Err("not a JSON object".to_owned());
    };
    let mut fields: Map<String, Value> = fields.clone();
    let always = match fields.remove("always") {
        None => false,
        Some(Value::Bool(always)) => always,
        Some(_) => return Err("`always` is not true or false".to_owned()),
    };
    let decision = serde_json::from_value(Value::Object(fields)).map_err(|e| e.to_string())?;
    if let Decision::Edit { arguments } = &decision
        && !arguments.is_object()
    {
        return Err("the edited arguments are not a JSON object".to_owned());
    }
    Ok((decision, always))
}

/// Adds the turn's decisions to the run-local values.
pub(super) fn store(
    locals: &mut Locals,
    decisions: BTreeMap<String, Decision>,
) -> Result<(), serde_json::Error> {
    let mut stored: BTreeMap<String, Decision> = locals.get(DECISIONS)?.unwrap_or_default();
    stored.extend(decisions);
    locals.insert(DECISIONS, &stored)
}

/// Takes the decision the turn's answer holds for this call, if any.
pub(super) fn take(request: &ToolRequest) -> Result<Option<Decision>, serde_json::Error> {
    let mut locals = request.locals();
    if !locals.contains(DECISIONS) {
        return Ok(None);
    }
    let mut stored: BTreeMap<String, Decision> = locals.get(DECISIONS)?.unwrap_or_default();
    let decision = stored.remove(request.call_id.as_str());
    if stored.is_empty() {
        locals.remove(DECISIONS);
    } else {
        locals.insert(DECISIONS, &stored)?;
    }
    Ok(decision)
}
