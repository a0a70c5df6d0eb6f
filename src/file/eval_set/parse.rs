//! From YAML nodes to the [`EvalSet`]: every reader records its problems and goes on,
//! as the agent file's do. Regular expressions and JSON Schemas are compiled here, so a
//! bad one is a problem where it is written, not a failed case later.

use std::collections::HashMap;

use adk::eval::{
    ArgMatcher, Criteria, EvalCase, EvalSet, EvalTurn, ExpectedCall, ResponseMatcher, Trajectory,
    TrajectoryMatch,
};
use saphyr::{Scalar, YamlData};

use crate::file::error::{Location, Problem, ProblemKind};
use crate::file::spec::Spec;
use crate::file::yaml::{Node, Walk, location};

const KEYS: &[&str] = &["name", "description", "criteria", "judge", "cases"];
const CASE_KEYS: &[&str] = &["id", "description", "criteria", "conversation"];
const TURN_KEYS: &[&str] = &["user", "tool_uses", "response"];
const CRITERIA_KEYS: &[&str] = &["tool_trajectory_avg_score", "response_match_score"];
const TRAJECTORY_KEYS: &[&str] = &["match", "calls"];
const MATCHES: &[&str] = &["exact", "in_order", "any_order"];
const CALL_KEYS: &[&str] = &["name", "args"];
const RESPONSE_KEYS: &[&str] = &["exact", "contains", "regex", "json_schema", "judge"];

/// Reads the whole file: the set, and the judge's model as a spec of its own.
pub(super) fn eval_set(walk: &mut Walk<'_>, root: &Node<'_>) -> (EvalSet, Option<Spec>) {
    let Some(top) = walk.mapping(root, "the eval set", KEYS) else {
        return (EvalSet::new(""), None);
    };
    let name = walk
        .required(&top, "name", "the eval set")
        .and_then(|n| walk.plain_string(n))
        .unwrap_or_default();
    let mut set = EvalSet::new(name);
    if let Some(node) = top.get("description") {
        set.description = walk.string(node).unwrap_or_default();
    }
    if let Some(node) = top.get("criteria") {
        set.criteria = criteria(walk, node, Criteria::default());
    }
    let judge = top.get("judge").map(|node| {
        let (model, options) = crate::file::parse::model(walk, node);
        Spec {
            model,
            options,
            ..Spec::default()
        }
    });
    let mut judged = Vec::new();
    let mut ids: HashMap<String, Location> = HashMap::new();
    if let Some(node) = walk.required(&top, "cases", "the eval set") {
        let base = set.criteria;
        let cases = walk.list(node, |walk, node| {
            case(walk, node, base, &mut judged, &mut ids)
        });
        if cases.is_empty() && walk.problems.is_empty() {
            walk.at(node, ProblemKind::InvalidValue, "the eval set has no cases");
        }
        set.cases = cases;
    }
    if judge.is_none() {
        for at in judged {
            let message = "a `judge` matcher needs the set's `judge:` model (e.g. `judge: {provider: openai, name: gpt-4o-mini}`)";
            walk.problem(Problem::new(ProblemKind::MissingKey, at, message));
        }
    }
    (set, judge)
}

/// Thresholds: each key given replaces `base`'s.
fn criteria(walk: &mut Walk<'_>, node: &Node<'_>, base: Criteria) -> Criteria {
    let mut criteria = base;
    let Some(fields) = walk.mapping(node, "`criteria`", CRITERIA_KEYS) else {
        return criteria;
    };
    if let Some(node) = fields.get("tool_trajectory_avg_score") {
        criteria.tool_trajectory_avg_score = threshold(walk, node).unwrap_or(1.0);
    }
    if let Some(node) = fields.get("response_match_score") {
        criteria.response_match_score = threshold(walk, node).unwrap_or(1.0);
    }
    criteria
}

fn threshold(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<f64> {
    let value = walk.number(node)?;
    if (0.0..=1.0).contains(&value) {
        return Some(value);
    }
    let message = format!("a threshold is from 0 to 1, found {value}");
    walk.at(node, ProblemKind::InvalidValue, message);
    None
}

fn case(
    walk: &mut Walk<'_>,
    node: &Node<'_>,
    base: Criteria,
    judged: &mut Vec<Location>,
    ids: &mut HashMap<String, Location>,
) -> Option<EvalCase> {
    let fields = walk.mapping(node, "a case", CASE_KEYS)?;
    let id = walk
        .required(&fields, "id", "a case")
        .and_then(|n| walk.name(n))?;
    if let Some(first) = ids.get(&id.value) {
        let message = format!("the case id `{}` is used already, at {first}", id.value);
        walk.problem(Problem::new(ProblemKind::DuplicateKey, id.at, message).width(id.width));
    } else {
        ids.insert(id.value.clone(), id.at);
    }
    let mut case = EvalCase::new(id.value);
    if let Some(node) = fields.get("description") {
        case.description = walk.string(node).unwrap_or_default();
    }
    if let Some(node) = fields.get("criteria") {
        case = case.criteria(criteria(walk, node, base));
    }
    if let Some(node) = walk.required(&fields, "conversation", "a case") {
        let empty = match &node.data {
            YamlData::Sequence(items) => items.is_empty(),
            data => matches!(data, YamlData::Value(Scalar::Null)),
        };
        if empty {
            walk.at(
                node,
                ProblemKind::InvalidValue,
                "a case needs at least one turn",
            );
        }
        let turns = walk.list(node, |walk, node| turn(walk, node, judged));
        case.conversation = turns;
    }
    Some(case)
}

fn turn(walk: &mut Walk<'_>, node: &Node<'_>, judged: &mut Vec<Location>) -> Option<EvalTurn> {
    let fields = walk.mapping(node, "a turn", TURN_KEYS)?;
    let user = walk
        .required(&fields, "user", "a turn")
        .and_then(|n| walk.string(n))?;
    let mut turn = EvalTurn::user(user);
    if let Some(node) = fields.get("tool_uses") {
        turn.tool_uses = trajectory(walk, node);
    }
    if let Some(node) = fields.get("response") {
        let matchers = match &node.data {
            YamlData::Sequence(items) => items
                .iter()
                .filter_map(|n| response(walk, n, judged))
                .collect(),
            _ => response(walk, node, judged).into_iter().collect(),
        };
        turn.response = matchers;
    }
    Some(turn)
}

/// The calls expected: a list (matched exactly), or `{match, calls}`.
fn trajectory(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<Trajectory> {
    let (how, calls) = match &node.data {
        YamlData::Sequence(_) | YamlData::Value(Scalar::Null) => (TrajectoryMatch::Exact, node),
        _ => {
            let fields = walk.mapping(node, "`tool_uses`", TRAJECTORY_KEYS)?;
            // A wrong `match` is a problem; the calls are still read, for theirs.
            let chosen = fields
                .get("match")
                .and_then(|n| walk.choice(n, "match", MATCHES));
            let how = match chosen.as_deref() {
                Some("in_order") => TrajectoryMatch::InOrder,
                Some("any_order") => TrajectoryMatch::AnyOrder,
                _ => TrajectoryMatch::Exact,
            };
            (how, walk.required(&fields, "calls", "`tool_uses`")?)
        }
    };
    let calls = walk.list(calls, expected_call);
    Some(
        calls
            .into_iter()
            .fold(Trajectory::new(how), Trajectory::call),
    )
}

fn expected_call(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<ExpectedCall> {
    let fields = walk.mapping(node, "an expected call", CALL_KEYS)?;
    let name = walk
        .required(&fields, "name", "an expected call")
        .and_then(|n| walk.plain_string(n))?;
    let mut call = ExpectedCall::new(name);
    if let Some(args) = fields.get("args") {
        for (arg, value) in walk.entries(args, "`args`") {
            if let Some(matcher) = arg_matcher(walk, value) {
                call = call.arg(arg.value, matcher);
            }
        }
    }
    Some(call)
}

/// A plain value (equal to it), or a mapping of one `$` key: a matcher.
fn arg_matcher(walk: &mut Walk<'_>, node: &Node<'_>) -> Option<ArgMatcher> {
    let dollar = match &node.data {
        YamlData::Mapping(map) if map.len() == 1 => map
            .keys()
            .next()
            .and_then(|k| k.data.as_str())
            .filter(|k| k.starts_with('$')),
        _ => None,
    };
    if dollar.is_none() {
        return walk.json(node).map(ArgMatcher::Equals);
    }
    let fields = walk.mapping(node, "an argument matcher", ArgMatcher::KEYS)?;
    if let Some(n) = fields.get("$any") {
        walk.bool(n)?;
        return Some(ArgMatcher::Any);
    }
    if let Some(n) = fields.get("$regex") {
        let matcher = ArgMatcher::Regex(walk.string(n)?);
        return valid(walk, n, matcher, ArgMatcher::invalid);
    }
    if let Some(n) = fields.get("$contains") {
        return walk.string(n).map(ArgMatcher::Contains);
    }
    let n = fields.get("$schema")?;
    let matcher = ArgMatcher::Schema(walk.json(n)?);
    valid(walk, n, matcher, ArgMatcher::invalid)
}

/// One response matcher: a mapping of one of [`RESPONSE_KEYS`].
fn response(
    walk: &mut Walk<'_>,
    node: &Node<'_>,
    judged: &mut Vec<Location>,
) -> Option<ResponseMatcher> {
    let fields = walk.mapping(node, "a response matcher", RESPONSE_KEYS)?;
    let given: Vec<&str> = RESPONSE_KEYS
        .iter()
        .copied()
        .filter(|k| fields.has(k))
        .collect();
    let [key] = given.as_slice() else {
        let message = "a response matcher has one key: exact, contains, regex, json_schema or judge (give a list for more)";
        walk.at(node, ProblemKind::InvalidValue, message);
        return None;
    };
    let value = fields.get(key)?;
    let matcher = match *key {
        "exact" => walk.string(value).map(ResponseMatcher::Exact),
        "contains" => walk.string(value).map(ResponseMatcher::Contains),
        "regex" => walk.string(value).map(ResponseMatcher::Regex),
        "json_schema" => walk.json(value).map(ResponseMatcher::JsonSchema),
        _ => {
            let judge = walk.mapping(value, "a judge", &["rubric"])?;
            let rubric = walk
                .required(&judge, "rubric", "a judge")
                .and_then(|n| walk.string(n))?;
            judged.push(fields.key(key).map_or_else(|| location(value), location));
            Some(ResponseMatcher::judge(rubric))
        }
    }?;
    valid(walk, value, matcher, ResponseMatcher::invalid)
}

/// A matcher, or a problem at `node` when it does not compile.
fn valid<M>(
    walk: &mut Walk<'_>,
    node: &Node<'_>,
    matcher: M,
    invalid: fn(&M) -> Option<String>,
) -> Option<M> {
    match invalid(&matcher) {
        None => Some(matcher),
        Some(message) => {
            walk.at(node, ProblemKind::InvalidValue, message);
            None
        }
    }
}
