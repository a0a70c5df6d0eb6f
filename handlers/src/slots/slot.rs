//! Slot definitions: a name, what the slot holds, and the tool that sets it.

use std::fmt;

use adk::ToolError;
use serde_json::{Value, json};

use super::SlotValue;

/// What a [`Slot`] holds.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::{Slot, SlotKind};
///
/// assert_eq!(Slot::float("nights", "How many nights").kind(), &SlotKind::Float);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SlotKind {
    /// Any text.
    Text,
    /// `true` or `false`.
    Bool,
    /// A number.
    Float,
    /// One of a fixed set of texts.
    Categorical(Vec<String>),
}

/// One piece of information the model collects, e.g. the destination of a trip.
///
/// Each slot becomes a tool named `set_slot_<name>` whose one parameter, `value`, has a
/// JSON Schema that fits the slot's kind; see [`Slot::parameters`].
///
/// # Example
///
/// ```
/// use tower_adk::handlers::{Slot, SlotKind};
/// use serde_json::json;
///
/// let room = Slot::categorical("room", "The room type", ["single", "double"]);
/// assert_eq!(room.tool_name(), "set_slot_room");
/// assert_eq!(room.kind(), &SlotKind::Categorical(vec!["single".into(), "double".into()]));
/// assert_eq!(room.parameters()["properties"]["value"]["enum"], json!(["single", "double"]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    name: String,
    description: String,
    kind: SlotKind,
}

impl Slot {
    /// A slot that holds any text.
    pub fn text(name: impl Into<String>, description: impl Into<String>) -> Self {
        Slot::new(name, description, SlotKind::Text)
    }

    /// A slot that holds `true` or `false`.
    pub fn bool(name: impl Into<String>, description: impl Into<String>) -> Self {
        Slot::new(name, description, SlotKind::Bool)
    }

    /// A slot that holds a number.
    pub fn float(name: impl Into<String>, description: impl Into<String>) -> Self {
        Slot::new(name, description, SlotKind::Float)
    }

    /// A slot that holds one of `allowed` (duplicates are dropped, the order is kept).
    pub fn categorical<I>(
        name: impl Into<String>,
        description: impl Into<String>,
        allowed: I,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let mut values: Vec<String> = Vec::new();
        for value in allowed.into_iter().map(Into::into) {
            if !values.contains(&value) {
                values.push(value);
            }
        }
        Slot::new(name, description, SlotKind::Categorical(values))
    }

    fn new(name: impl Into<String>, description: impl Into<String>, kind: SlotKind) -> Self {
        Slot {
            name: name.into(),
            description: description.into(),
            kind,
        }
    }

    /// The slot's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the slot is for, as the model is told.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// What the slot holds.
    pub fn kind(&self) -> &SlotKind {
        &self.kind
    }

    /// The name of the tool that sets the slot: `set_slot_<name>`.
    pub fn tool_name(&self) -> String {
        format!("set_slot_{}", self.name)
    }

    /// What the tool that sets the slot tells the model it does.
    pub fn tool_description(&self) -> String {
        let kind = match &self.kind {
            SlotKind::Text => "text".to_owned(),
            SlotKind::Bool => "true or false".to_owned(),
            SlotKind::Float => "a number".to_owned(),
            SlotKind::Categorical(allowed) => format!("one of {}", Allowed(allowed)),
        };
        format!(
            "Sets the slot `{}` ({kind}): {}",
            self.name, self.description
        )
    }

    /// The JSON Schema of the tool's arguments: an object with one required property,
    /// `value`, of type `string`, `boolean` or `number`, or a string `enum` of the allowed
    /// values for a categorical slot (whose description lists them too).
    pub fn parameters(&self) -> Value {
        let value = match &self.kind {
            SlotKind::Text => json!({"type": "string", "description": self.description}),
            SlotKind::Bool => json!({"type": "boolean", "description": self.description}),
            SlotKind::Float => json!({"type": "number", "description": self.description}),
            SlotKind::Categorical(allowed) => json!({
                "type": "string",
                "enum": allowed,
                "description": format!("{}; one of {}", self.description, Allowed(allowed)),
            }),
        };
        json!({
            "type": "object",
            "properties": {"value": value},
            "required": ["value"],
            "additionalProperties": false
        })
    }

    /// Reads the `value` argument of a call of the slot's tool. The loop has checked the
    /// arguments against [`Slot::parameters`] already, unless the agent turned that off.
    pub(crate) fn parse(&self, arguments: &Value) -> Result<SlotValue, ToolError> {
        let value = &arguments["value"];
        let parsed = match &self.kind {
            SlotKind::Text => value.as_str().map(|s| SlotValue::Text(s.to_owned())),
            SlotKind::Bool => value.as_bool().map(SlotValue::Bool),
            SlotKind::Float => value.as_f64().map(SlotValue::Float),
            SlotKind::Categorical(allowed) => value
                .as_str()
                .filter(|s| allowed.iter().any(|a| a == s))
                .map(|s| SlotValue::Text(s.to_owned())),
        };
        parsed.ok_or_else(|| {
            let expected = match &self.kind {
                SlotKind::Text => "a string".to_owned(),
                SlotKind::Bool => "true or false".to_owned(),
                SlotKind::Float => "a number".to_owned(),
                SlotKind::Categorical(allowed) => format!("one of {}", Allowed(allowed)),
            };
            ToolError::invalid_arguments(format!("at `/value`: {value} is not {expected}"))
        })
    }
}

/// Allowed values as the model reads them: `"a", "b" or "c"`.
struct Allowed<'a>(&'a [String]);

impl fmt::Display for Allowed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, value) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == self.0.len() { " or " } else { ", " })?;
            }
            write!(f, "{}", Value::from(value.as_str()))?;
        }
        Ok(())
    }
}
