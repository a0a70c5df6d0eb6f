//! What a turn is expected to do: the tool calls ([`Trajectory`], each call an
//! [`ExpectedCall`] whose arguments are [`ArgMatcher`]s) and the answer
//! ([`ResponseMatcher`]); and how each is scored into a [`Check`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool call a run made: the tool's name and its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CalledTool {
    /// The tool's name.
    pub name: String,
    /// The arguments, as JSON (a string when the model sent text that is not JSON).
    pub args: Value,
}

impl CalledTool {
    /// A call of `name` with `args`.
    pub fn new(name: impl Into<String>, args: Value) -> Self {
        CalledTool {
            name: name.into(),
            args,
        }
    }
}

/// The outcome of one expectation: a score from 0 to 1, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Check {
    /// What was checked: `trajectory`, or the matcher's kind (`contains`, `judge`, ...).
    pub kind: String,
    /// From 0 (not met) to 1 (met).
    pub score: f64,
    /// What was found, in a sentence: the first difference, or the judge's reason.
    pub detail: String,
}

impl Check {
    pub(crate) fn new(kind: &str, score: f64, detail: impl Into<String>) -> Self {
        Check {
            kind: kind.to_owned(),
            score,
            detail: detail.into(),
        }
    }

    fn pass(kind: &str, passed: bool, detail: impl Into<String>) -> Self {
        Check::new(kind, if passed { 1.0 } else { 0.0 }, detail)
    }
}

/// How the calls of a turn must match the expected ones. (Google ADK's match types.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TrajectoryMatch {
    /// The same calls, in the same order, and no others.
    #[default]
    Exact,
    /// The expected calls, in this order; other calls may come between them.
    InOrder,
    /// The expected calls, in any order; other calls may come too.
    AnyOrder,
}

impl TrajectoryMatch {
    /// The name used in eval set files.
    pub fn name(self) -> &'static str {
        match self {
            TrajectoryMatch::Exact => "exact",
            TrajectoryMatch::InOrder => "in_order",
            TrajectoryMatch::AnyOrder => "any_order",
        }
    }
}

/// The tool calls a turn is expected to make, and how they must match.
///
/// # Example
///
/// ```
/// use serde_json::json;
/// use tower_adk::eval::{ArgMatcher, CalledTool, ExpectedCall, Trajectory, TrajectoryMatch};
///
/// let expected = Trajectory::new(TrajectoryMatch::AnyOrder)
///     .call(ExpectedCall::new("set_slot_room").arg("value", json!("double")))
///     .call(ExpectedCall::new("set_slot_nights").arg("value", ArgMatcher::Any));
/// let made = [
///     CalledTool::new("set_slot_nights", json!({"value": 3})),
///     CalledTool::new("set_slot_room", json!({"value": "double"})),
/// ];
/// assert_eq!(expected.check(&made).score, 1.0);
/// let mut in_order = expected.clone();
/// in_order.r#match = TrajectoryMatch::InOrder;
/// assert_eq!(in_order.check(&made).score, 0.0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Trajectory {
    /// How the calls must match.
    #[serde(default)]
    pub r#match: TrajectoryMatch,
    /// The expected calls.
    #[serde(default)]
    pub calls: Vec<ExpectedCall>,
}

impl Trajectory {
    /// No calls expected yet, matched this way.
    pub fn new(r#match: TrajectoryMatch) -> Self {
        Trajectory {
            r#match,
            calls: Vec::new(),
        }
    }

    /// With this call expected too.
    pub fn call(mut self, call: ExpectedCall) -> Self {
        self.calls.push(call);
        self
    }

    /// Scores the calls a turn made: 1 when they match, 0 when not, with the first
    /// difference said.
    pub fn check(&self, made: &[CalledTool]) -> Check {
        let outcome = match self.r#match {
            TrajectoryMatch::Exact => self.exact(made),
            TrajectoryMatch::InOrder => self.in_order(made),
            TrajectoryMatch::AnyOrder => self.any_order(made),
        };
        let names: Vec<&str> = made.iter().map(|c| c.name.as_str()).collect();
        match outcome {
            Ok(()) => Check::pass("trajectory", true, format!("called [{}]", names.join(", "))),
            Err(why) => Check::pass(
                "trajectory",
                false,
                format!("{why} (called [{}])", names.join(", ")),
            ),
        }
    }

    fn exact(&self, made: &[CalledTool]) -> Result<(), String> {
        for (at, (expected, call)) in self.calls.iter().zip(made).enumerate() {
            expected
                .mismatch(call)
                .map_or(Ok(()), |why| Err(format!("call {}: {why}", at + 1)))?;
        }
        match made.len().cmp(&self.calls.len()) {
            std::cmp::Ordering::Equal => Ok(()),
            std::cmp::Ordering::Less => Err(format!(
                "expected {} calls, the run made {}: `{}` is missing",
                self.calls.len(),
                made.len(),
                self.calls[made.len()].name
            )),
            std::cmp::Ordering::Greater => Err(format!(
                "expected {} calls, the run made {}: `{}` is one too many",
                self.calls.len(),
                made.len(),
                made[self.calls.len()].name
            )),
        }
    }

    fn in_order(&self, made: &[CalledTool]) -> Result<(), String> {
        let mut rest = made.iter();
        for expected in &self.calls {
            if !rest.any(|call| expected.matches(call)) {
                return Err(format!("`{}` is missing, in this order", expected.name));
            }
        }
        Ok(())
    }

    /// Each expected call matched to a call of its own: a bipartite matching (by
    /// augmenting paths), so that a loose matcher listed first does not take the call a
    /// stricter one needs.
    fn any_order(&self, made: &[CalledTool]) -> Result<(), String> {
        let fits: Vec<Vec<usize>> = self
            .calls
            .iter()
            .map(|e| (0..made.len()).filter(|&i| e.matches(&made[i])).collect())
            .collect();
        let mut owner: Vec<Option<usize>> = vec![None; made.len()];
        for expected in 0..self.calls.len() {
            let mut seen = vec![false; made.len()];
            if !augment(expected, &fits, &mut owner, &mut seen) {
                return Err(format!("`{}` is missing", self.calls[expected].name));
            }
        }
        Ok(())
    }
}

/// Finds a call for `expected`, moving earlier ones to other calls where needed.
fn augment(
    expected: usize,
    fits: &[Vec<usize>],
    owner: &mut [Option<usize>],
    seen: &mut [bool],
) -> bool {
    for &call in &fits[expected] {
        if seen[call] {
            continue;
        }
        seen[call] = true;
        let free = match owner[call] {
            None => true,
            Some(other) => augment(other, fits, owner, seen),
        };
        if free {
            owner[call] = Some(expected);
            return true;
        }
    }
    false
}

/// A tool call expected: the tool's name and, optionally, what its arguments must
/// match. Only the arguments named are checked; others the call has are let be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExpectedCall {
    /// The tool's name.
    pub name: String,
    /// The arguments to check, by name; none: any arguments.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, ArgMatcher>,
}

impl ExpectedCall {
    /// A call of `name`, with any arguments.
    pub fn new(name: impl Into<String>) -> Self {
        ExpectedCall {
            name: name.into(),
            args: BTreeMap::new(),
        }
    }

    /// With the argument `name` checked by `matcher` (a JSON value: equal to it).
    pub fn arg(mut self, name: impl Into<String>, matcher: impl Into<ArgMatcher>) -> Self {
        self.args.insert(name.into(), matcher.into());
        self
    }

    /// Whether `call` is this call.
    pub fn matches(&self, call: &CalledTool) -> bool {
        self.mismatch(call).is_none()
    }

    /// Why `call` is not this call, if it is not.
    fn mismatch(&self, call: &CalledTool) -> Option<String> {
        if call.name != self.name {
            return Some(format!("expected `{}`, found `{}`", self.name, call.name));
        }
        for (name, matcher) in &self.args {
            let value = call.args.get(name);
            if let Some(why) = matcher.mismatch(value) {
                return Some(format!("`{}` argument `{name}`: {why}", self.name));
            }
        }
        None
    }
}

/// What one argument of an expected call must be.
///
/// In files and JSON a plain value means [`Equals`](ArgMatcher::Equals), and a mapping
/// of one key that starts with `$` is a matcher: `{$any: true}`, `{$regex: "^Par"}`,
/// `{$contains: "Par"}`, `{$schema: {type: integer, minimum: 1}}`.
///
/// ```
/// use serde_json::json;
/// use tower_adk::eval::ArgMatcher;
///
/// let matcher: ArgMatcher = serde_json::from_value(json!({"$regex": "^Par"}))?;
/// assert_eq!(matcher, ArgMatcher::Regex("^Par".into()));
/// assert!(matcher.matches(Some(&json!("Paris"))));
/// assert!(!matcher.matches(Some(&json!("Lyon"))));
/// # Ok::<_, serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Written", into = "Value")]
#[non_exhaustive]
pub enum ArgMatcher {
    /// Equal to this JSON value.
    Equals(Value),
    /// Present, with any value.
    Any,
    /// A string that this regular expression (the `regex` crate's syntax) finds a
    /// match in; anchor it (`^...$`) to match the whole.
    Regex(String),
    /// A string that contains this text, or a list that contains this string.
    Contains(String),
    /// A value valid against this JSON Schema.
    Schema(Value),
}

impl ArgMatcher {
    /// The keys that make a mapping a matcher.
    pub const KEYS: &'static [&'static str] = &["$any", "$regex", "$contains", "$schema"];

    /// What is wrong with the matcher itself: a regex or a schema that does not
    /// compile. (Such a matcher matches nothing.)
    pub fn invalid(&self) -> Option<String> {
        match self {
            ArgMatcher::Regex(pattern) => invalid_regex(pattern),
            ArgMatcher::Schema(schema) => invalid_schema(schema),
            _ => None,
        }
    }

    /// Whether `value` (`None`: the call has no such argument) matches.
    pub fn matches(&self, value: Option<&Value>) -> bool {
        self.mismatch(value).is_none()
    }

    fn mismatch(&self, value: Option<&Value>) -> Option<String> {
        let Some(value) = value else {
            return Some("missing".to_owned());
        };
        let fits = match self {
            ArgMatcher::Equals(expected) => value == expected,
            ArgMatcher::Any => true,
            ArgMatcher::Regex(pattern) => match regex::Regex::new(pattern) {
                Ok(re) => value.as_str().is_some_and(|s| re.is_match(s)),
                Err(_) => return invalid_regex(pattern),
            },
            ArgMatcher::Contains(text) => match value {
                Value::String(s) => s.contains(text.as_str()),
                Value::Array(items) => items.iter().any(|i| i.as_str() == Some(text)),
                _ => false,
            },
            ArgMatcher::Schema(schema) => match jsonschema::validator_for(schema) {
                Ok(validator) => validator.is_valid(value),
                Err(_) => return invalid_schema(schema),
            },
        };
        (!fits).then(|| format!("{value} does not match {}", Value::from(self.clone())))
    }
}

impl From<Value> for ArgMatcher {
    /// A plain value: equal to it. (Deserializing also reads `$` matchers.)
    fn from(value: Value) -> Self {
        ArgMatcher::Equals(value)
    }
}

/// An argument matcher as written: a value, or a mapping of one `$` key.
#[derive(Deserialize)]
#[serde(transparent)]
struct Written(Value);

impl TryFrom<Written> for ArgMatcher {
    type Error = String;

    fn try_from(Written(value): Written) -> Result<Self, String> {
        let Value::Object(map) = &value else {
            return Ok(ArgMatcher::Equals(value));
        };
        let mut entries = map.iter();
        let (Some((key, inner)), None) = (entries.next(), entries.next()) else {
            return Ok(ArgMatcher::Equals(value));
        };
        if !key.starts_with('$') {
            return Ok(ArgMatcher::Equals(value));
        }
        let text = || {
            inner
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("`{key}` takes a string"))
        };
        match key.as_str() {
            "$any" => Ok(ArgMatcher::Any),
            "$regex" => Ok(ArgMatcher::Regex(text()?)),
            "$contains" => Ok(ArgMatcher::Contains(text()?)),
            "$schema" => Ok(ArgMatcher::Schema(inner.clone())),
            other => Err(format!(
                "unknown argument matcher `{other}` (valid: {})",
                ArgMatcher::KEYS.join(", ")
            )),
        }
    }
}

impl From<ArgMatcher> for Value {
    fn from(matcher: ArgMatcher) -> Value {
        let one = |key: &str, value: Value| {
            Value::Object([(key.to_owned(), value)].into_iter().collect())
        };
        match matcher {
            ArgMatcher::Equals(value) => value,
            ArgMatcher::Any => one("$any", Value::Bool(true)),
            ArgMatcher::Regex(pattern) => one("$regex", Value::String(pattern)),
            ArgMatcher::Contains(text) => one("$contains", Value::String(text)),
            ArgMatcher::Schema(schema) => one("$schema", schema),
        }
    }
}

/// What a turn's final answer must satisfy.
///
/// In files and JSON each is a mapping of one key: `{exact: "..."}`, `{contains: "..."}`,
/// `{regex: "..."}`, `{json_schema: {...}}`, `{judge: {rubric: "..."}}`.
///
/// ```
/// use serde_json::json;
/// use tower_adk::eval::ResponseMatcher;
///
/// let answer = r#"{"city": "Paris", "nights": 3}"#;
/// let schema = json!({"type": "object", "required": ["city", "nights"]});
/// assert_eq!(ResponseMatcher::JsonSchema(schema).check(answer).unwrap().score, 1.0);
/// assert_eq!(ResponseMatcher::Regex(r"^\{.*Paris".into()).check(answer).unwrap().score, 1.0);
/// assert_eq!(ResponseMatcher::Exact("Paris".into()).check(answer).unwrap().score, 0.0);
/// // A judge is asked by the evaluator, not here.
/// assert!(ResponseMatcher::judge("Polite?").check(answer).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResponseMatcher {
    /// The answer is this text (both trimmed of surrounding white space).
    Exact(String),
    /// The answer contains this text.
    Contains(String),
    /// This regular expression (the `regex` crate's syntax) finds a match in the answer.
    Regex(String),
    /// The answer is JSON (a fenced code block of JSON counts) valid against this schema.
    JsonSchema(Value),
    /// An LLM judge scores the answer, from 0 to 1, against this rubric (see
    /// [`Judge`](super::Judge)).
    Judge {
        /// What a good answer does, for the judge.
        rubric: String,
    },
}

impl ResponseMatcher {
    /// A judge with this rubric.
    pub fn judge(rubric: impl Into<String>) -> Self {
        ResponseMatcher::Judge {
            rubric: rubric.into(),
        }
    }

    /// The matcher's kind, as files name it.
    pub fn kind(&self) -> &'static str {
        match self {
            ResponseMatcher::Exact(_) => "exact",
            ResponseMatcher::Contains(_) => "contains",
            ResponseMatcher::Regex(_) => "regex",
            ResponseMatcher::JsonSchema(_) => "json_schema",
            ResponseMatcher::Judge { .. } => "judge",
        }
    }

    /// What is wrong with the matcher itself: a regex or a schema that does not
    /// compile. (Such a matcher scores 0.)
    pub fn invalid(&self) -> Option<String> {
        match self {
            ResponseMatcher::Regex(pattern) => invalid_regex(pattern),
            ResponseMatcher::JsonSchema(schema) => invalid_schema(schema),
            _ => None,
        }
    }

    /// Scores `answer`; `None` for a judge, which needs a model.
    pub fn check(&self, answer: &str) -> Option<Check> {
        let kind = self.kind();
        let check = match self {
            ResponseMatcher::Exact(text) => {
                let same = answer.trim() == text.trim();
                Check::pass(kind, same, if same { "the same" } else { "differs" })
            }
            ResponseMatcher::Contains(text) => {
                let found = answer.contains(text.as_str());
                let detail = format!("{} `{text}`", if found { "contains" } else { "lacks" });
                Check::pass(kind, found, detail)
            }
            ResponseMatcher::Regex(pattern) => match regex::Regex::new(pattern) {
                Ok(re) => {
                    let found = re.is_match(answer);
                    let detail = format!(
                        "{} /{pattern}/",
                        if found { "matches" } else { "does not match" }
                    );
                    Check::pass(kind, found, detail)
                }
                Err(_) => Check::pass(kind, false, invalid_regex(pattern).unwrap_or_default()),
            },
            ResponseMatcher::JsonSchema(schema) => json_schema(schema, answer),
            ResponseMatcher::Judge { .. } => return None,
        };
        Some(check)
    }
}

fn invalid_regex(pattern: &str) -> Option<String> {
    // regex's errors draw the pattern over several lines; the last says what is wrong.
    regex::Regex::new(pattern).err().map(|error| {
        let text = error.to_string();
        let last = text.lines().rev().find_map(|l| l.strip_prefix("error: "));
        format!("not a valid regular expression: {}", last.unwrap_or(&text))
    })
}

fn invalid_schema(schema: &Value) -> Option<String> {
    jsonschema::validator_for(schema)
        .err()
        .map(|error| format!("not a valid JSON Schema: {error}"))
}

/// The answer read as JSON (inside a fenced code block, if it is one) and checked.
fn json_schema(schema: &Value, answer: &str) -> Check {
    let kind = "json_schema";
    let text = fenced(answer.trim());
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => return Check::pass(kind, false, format!("not JSON: {error}")),
    };
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return Check::pass(kind, false, invalid_schema(schema).unwrap_or_default());
    };
    match validator.iter_errors(&value).next() {
        None => Check::pass(kind, true, "valid"),
        Some(error) => {
            let at = error.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            Check::pass(kind, false, format!("at `{at}`: {error}"))
        }
    }
}

/// The inside of a fenced code block (```json ... ```), or the text itself.
fn fenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.split_once('\n').map_or("", |(_, body)| body);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}
