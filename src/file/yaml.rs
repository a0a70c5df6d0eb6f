//! The typed walk over the YAML nodes: each reader checks one node's type, records a
//! [`Problem`] where it is when the node does not fit, and goes on, so that a file's
//! problems are all found in one pass.

use std::time::Duration;

use saphyr::{MarkedYaml, Scalar, YamlData};
use serde_json::Value;

use super::error::{Location, Problem, ProblemKind};

/// A YAML node of the file.
pub(crate) type Node<'a> = MarkedYaml<'a>;

/// Reads the environment: the process's, or a map in tests.
pub(crate) type EnvFn<'e> = &'e dyn Fn(&str) -> Option<String>;

/// A value and where it is in the file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) at: Location,
    pub(crate) width: usize,
}

/// Where a node starts.
pub(crate) fn location(node: &Node<'_>) -> Location {
    Location::from_marker(node.span.start)
}

/// How many characters of its line a node covers (at least 1).
fn width(node: &Node<'_>) -> usize {
    let span = node.span;
    if span.end.line() == span.start.line() {
        span.len().max(1)
    } else {
        1
    }
}

/// What a node is, for messages ("found a list").
fn what(node: &Node<'_>) -> &'static str {
    match &node.data {
        YamlData::Value(Scalar::Null) => "nothing",
        YamlData::Value(Scalar::Boolean(_)) => "true or false",
        YamlData::Value(Scalar::Integer(_)) => "an integer",
        YamlData::Value(Scalar::FloatingPoint(_)) => "a number",
        YamlData::Value(Scalar::String(_)) => "a string",
        YamlData::Sequence(_) => "a list",
        YamlData::Mapping(_) => "a mapping",
        _ => "an unsupported YAML node (alias or tag)",
    }
}

/// The problems found so far, and what the walk needs to read values.
pub(crate) struct Walk<'e> {
    pub(crate) problems: Vec<Problem>,
    env: EnvFn<'e>,
}

/// A mapping's entries, read by key.
pub(crate) struct Fields<'a, 'n> {
    node: &'a Node<'n>,
}

impl<'a, 'n> Fields<'a, 'n> {
    /// The value under `key`, if any.
    pub(crate) fn get(&self, key: &str) -> Option<&'a Node<'n>> {
        let YamlData::Mapping(map) = &self.node.data else {
            return None;
        };
        map.iter()
            .find(|(k, _)| k.data.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// The node of `key` itself, if the mapping has it.
    pub(crate) fn key(&self, key: &str) -> Option<&'a Node<'n>> {
        let YamlData::Mapping(map) = &self.node.data else {
            return None;
        };
        map.keys().find(|k| k.data.as_str() == Some(key))
    }

    /// Whether the mapping has `key`.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Where the mapping is.
    pub(crate) fn at(&self) -> Location {
        location(self.node)
    }
}

impl<'e> Walk<'e> {
    pub(crate) fn new(env: EnvFn<'e>) -> Self {
        Walk {
            problems: Vec::new(),
            env,
        }
    }

    /// A variable of the environment the file is read with.
    pub(crate) fn var(&self, name: &str) -> Option<String> {
        (self.env)(name)
    }

    pub(crate) fn problem(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    /// A problem at `node`, marking all of it.
    pub(crate) fn at(&mut self, node: &Node<'_>, kind: ProblemKind, message: impl Into<String>) {
        let problem = Problem::new(kind, location(node), message).width(width(node));
        self.problems.push(problem);
    }

    fn wrong_type(&mut self, node: &Node<'_>, expected: &str) {
        let message = format!("expected {expected}, found {}", what(node));
        self.at(node, ProblemKind::WrongType, message);
    }

    /// A mapping whose keys are all in `keys`; each other key is a problem with the
    /// closest valid one suggested. `None` (and a problem) when it is not a mapping.
    pub(crate) fn mapping<'a, 'n>(
        &mut self,
        node: &'a Node<'n>,
        place: &str,
        keys: &[&str],
    ) -> Option<Fields<'a, 'n>> {
        let YamlData::Mapping(map) = &node.data else {
            self.wrong_type(node, &format!("a mapping ({place})"));
            return None;
        };
        for key in map.keys() {
            match key.data.as_str() {
                Some(name) if keys.contains(&name) => {}
                Some(name) => {
                    let message = format!("unknown key `{name}` in {place}");
                    let problem = Problem::new(ProblemKind::UnknownKey, location(key), message)
                        .width(width(key))
                        .with_choices(name, keys.iter().copied());
                    self.problems.push(problem);
                }
                None => self.wrong_type(key, "a string key"),
            }
        }
        Some(Fields { node })
    }

    /// A required key of `fields`: a problem at the mapping when it is missing.
    pub(crate) fn required<'a, 'n>(
        &mut self,
        fields: &Fields<'a, 'n>,
        key: &str,
        place: &str,
    ) -> Option<&'a Node<'n>> {
        let value = fields.get(key);
        if value.is_none() {
            let message = format!("{place} needs `{key}`");
            self.problems
                .push(Problem::new(ProblemKind::MissingKey, fields.at(), message));
        }
        value
    }

    /// A string, with `${VAR}` replaced by the environment's values, or `{env: VAR}`.
    pub(crate) fn string(&mut self, node: &Node<'_>) -> Option<String> {
        match &node.data {
            YamlData::Value(Scalar::String(text)) => self.substitute(node, text),
            YamlData::Mapping(_) => {
                let fields = self.mapping(node, "an environment reference", &["env"])?;
                let var = self.required(&fields, "env", "an environment reference")?;
                let name = self.plain_string(var)?;
                match (self.env)(&name) {
                    Some(value) => Some(value),
                    None => {
                        self.missing_env(var, &name);
                        None
                    }
                }
            }
            _ => {
                self.wrong_type(node, "a string");
                None
            }
        }
    }

    /// A string taken as it is (no environment references).
    pub(crate) fn plain_string(&mut self, node: &Node<'_>) -> Option<String> {
        match node.data.as_str() {
            Some(text) => Some(text.to_owned()),
            None => {
                self.wrong_type(node, "a string");
                None
            }
        }
    }

    /// A string with its place, for names checked later.
    pub(crate) fn name(&mut self, node: &Node<'_>) -> Option<Spanned<String>> {
        let value = self.plain_string(node)?;
        Some(Spanned {
            value,
            at: location(node),
            width: width(node),
        })
    }

    fn missing_env(&mut self, node: &Node<'_>, name: &str) {
        let message = format!("environment variable `{name}` is not set");
        self.at(node, ProblemKind::MissingEnv, message);
    }

    /// Replaces each `${VAR}`; `$${` stands for a literal `${`.
    fn substitute(&mut self, node: &Node<'_>, text: &str) -> Option<String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let mut complete = true;
        while let Some(start) = rest.find("${") {
            if rest[..start].ends_with('$') {
                out.push_str(&rest[..start - 1]);
                out.push_str("${");
                rest = &rest[start + 2..];
                continue;
            }
            out.push_str(&rest[..start]);
            let Some(len) = rest[start + 2..].find('}') else {
                let message = "`${` without its closing `}` (write `$${` for a literal `${`)";
                self.at(node, ProblemKind::InvalidValue, message);
                return None;
            };
            let name = &rest[start + 2..start + 2 + len];
            match (self.env)(name) {
                Some(value) => out.push_str(&value),
                None => {
                    self.missing_env(node, name);
                    complete = false;
                }
            }
            rest = &rest[start + 3 + len..];
        }
        out.push_str(rest);
        complete.then_some(out)
    }

    pub(crate) fn bool(&mut self, node: &Node<'_>) -> Option<bool> {
        match &node.data {
            YamlData::Value(Scalar::Boolean(b)) => Some(*b),
            _ => {
                self.wrong_type(node, "true or false");
                None
            }
        }
    }

    /// A whole number of at least `min`.
    pub(crate) fn count(&mut self, node: &Node<'_>, min: u64) -> Option<u64> {
        let YamlData::Value(Scalar::Integer(n)) = &node.data else {
            self.wrong_type(node, "a whole number");
            return None;
        };
        match u64::try_from(*n) {
            Ok(n) if n >= min => Some(n),
            _ => {
                let message = format!("expected a whole number of at least {min}, found {n}");
                self.at(node, ProblemKind::InvalidValue, message);
                None
            }
        }
    }

    pub(crate) fn usize(&mut self, node: &Node<'_>, min: u64) -> Option<usize> {
        self.count(node, min).and_then(|n| usize::try_from(n).ok())
    }

    /// A whole number of at least `min` that fits in a `u32`.
    pub(crate) fn u32(&mut self, node: &Node<'_>, min: u64) -> Option<u32> {
        let n = self.count(node, min)?;
        let converted = u32::try_from(n).ok();
        if converted.is_none() {
            self.at(node, ProblemKind::InvalidValue, "too large");
        }
        converted
    }

    pub(crate) fn number(&mut self, node: &Node<'_>) -> Option<f64> {
        match &node.data {
            YamlData::Value(Scalar::FloatingPoint(x)) => Some(x.into_inner()),
            #[allow(clippy::cast_precision_loss)]
            YamlData::Value(Scalar::Integer(n)) => Some(*n as f64),
            _ => {
                self.wrong_type(node, "a number");
                None
            }
        }
    }

    /// A positive duration: a number of seconds, or a text such as `30s`, `1m 30s`,
    /// `500ms`.
    pub(crate) fn duration(&mut self, node: &Node<'_>) -> Option<Duration> {
        let duration = match &node.data {
            YamlData::Value(Scalar::Integer(_) | Scalar::FloatingPoint(_)) => {
                let seconds = self.number(node)?;
                Duration::try_from_secs_f64(seconds).ok()
            }
            YamlData::Value(Scalar::String(text)) => text
                .parse::<jiff::SignedDuration>()
                .ok()
                .and_then(|d| Duration::try_from(d).ok()),
            _ => {
                self.wrong_type(node, "a duration (`30s`, `2m`, `500ms`, or seconds)");
                return None;
            }
        };
        match duration {
            Some(d) if !d.is_zero() => Some(d),
            _ => {
                let message = "expected a positive duration such as `30s`, `2m`, `500ms`, or a number of seconds";
                self.at(node, ProblemKind::InvalidValue, message);
                None
            }
        }
    }

    /// A list, each item read by `item`; nothing (`~` or no value) is an empty list, and
    /// anything else (a single item too) is a problem: write `[item]` for a list of one.
    pub(crate) fn list<'a, 'n, T>(
        &mut self,
        node: &'a Node<'n>,
        mut item: impl FnMut(&mut Self, &'a Node<'n>) -> Option<T>,
    ) -> Vec<T> {
        match &node.data {
            YamlData::Sequence(items) => items.iter().filter_map(|n| item(self, n)).collect(),
            YamlData::Value(Scalar::Null) => Vec::new(),
            _ => {
                self.wrong_type(node, "a list");
                Vec::new()
            }
        }
    }

    /// A list of names with their places.
    pub(crate) fn names(&mut self, node: &Node<'_>) -> Vec<Spanned<String>> {
        self.list(node, Walk::name)
    }

    /// A mapping's entries as (key, value) pairs, keys with their places.
    pub(crate) fn entries<'a, 'n>(
        &mut self,
        node: &'a Node<'n>,
        place: &str,
    ) -> Vec<(Spanned<String>, &'a Node<'n>)> {
        let YamlData::Mapping(map) = &node.data else {
            if !matches!(node.data, YamlData::Value(Scalar::Null)) {
                self.wrong_type(node, &format!("a mapping ({place})"));
            }
            return Vec::new();
        };
        map.iter()
            .filter_map(|(k, v)| Some((self.name(k)?, v)))
            .collect()
    }

    /// One of `choices`, with the closest suggested when it is none of them.
    pub(crate) fn choice(
        &mut self,
        node: &Node<'_>,
        place: &str,
        choices: &[&str],
    ) -> Option<String> {
        let value = self.plain_string(node)?;
        if choices.contains(&value.as_str()) {
            return Some(value);
        }
        let message = format!("unknown {place} `{value}`");
        let problem = Problem::new(ProblemKind::InvalidValue, location(node), message)
            .width(width(node))
            .with_choices(&value, choices.iter().copied());
        self.problems.push(problem);
        None
    }

    /// Any YAML value as JSON (for tool arguments and a registered handler's settings),
    /// with `${VAR}` replaced in strings.
    pub(crate) fn json(&mut self, node: &Node<'_>) -> Option<Value> {
        Some(match &node.data {
            YamlData::Value(Scalar::Null) => Value::Null,
            YamlData::Value(Scalar::Boolean(b)) => Value::Bool(*b),
            YamlData::Value(Scalar::Integer(n)) => Value::from(*n),
            YamlData::Value(Scalar::FloatingPoint(x)) => Value::from(x.into_inner()),
            YamlData::Value(Scalar::String(text)) => Value::String(self.substitute(node, text)?),
            YamlData::Sequence(items) => {
                let items: Option<Vec<Value>> = items.iter().map(|n| self.json(n)).collect();
                Value::Array(items?)
            }
            YamlData::Mapping(map) => {
                let mut object = serde_json::Map::new();
                for (k, v) in map {
                    let key = self.plain_string(k)?;
                    object.insert(key, self.json(v)?);
                }
                Value::Object(object)
            }
            _ => {
                self.wrong_type(node, "a plain YAML value");
                return None;
            }
        })
    }
}
