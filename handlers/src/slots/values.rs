//! The values of a run's slots, as the run's result holds them.

use std::collections::BTreeMap;
use std::fmt;

use adk::Locals;
use serde::{Deserialize, Serialize};

/// The value of one slot: text (also a categorical slot's value), a boolean or a number.
///
/// It serializes as the plain JSON value: `"Paris"`, `true`, `3.0`.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::SlotValue;
///
/// let nights = SlotValue::Float(3.0);
/// assert_eq!(nights.as_f64(), Some(3.0));
/// assert_eq!(nights.as_str(), None);
/// assert_eq!(nights.to_string(), "3");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SlotValue {
    /// A boolean slot's value.
    Bool(bool),
    /// A float slot's value.
    Float(f64),
    /// A text or categorical slot's value.
    Text(String),
}

impl SlotValue {
    /// The text, for a text or categorical slot.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            SlotValue::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The boolean, for a boolean slot.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            SlotValue::Bool(value) => Some(*value),
            _ => None,
        }
    }

    /// The number, for a float slot.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            SlotValue::Float(value) => Some(*value),
            _ => None,
        }
    }
}

impl fmt::Display for SlotValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlotValue::Bool(value) => value.fmt(f),
            SlotValue::Float(value) => value.fmt(f),
            SlotValue::Text(text) => f.write_str(text),
        }
    }
}

/// The slots set so far, by name (a slot not set yet is absent).
///
/// A run with a [`SlotFilling`](crate::SlotFilling) handler ends with its values in the
/// result's run-local values, under [`SlotValues::LOCALS_KEY`]; read them with
/// [`SlotValues::from_locals`]. In a request's extensions, they are the values a
/// slot-filling run starts from (see [across runs](crate::SlotFilling#across-runs)).
///
/// # Example
///
/// ```
/// use tower_adk::Locals;
/// use tower_adk::handlers::{SlotValue, SlotValues};
///
/// let mut values = SlotValues::new();
/// values.insert("city", SlotValue::Text("Paris".into()));
///
/// let mut locals = Locals::default();
/// locals.insert(SlotValues::LOCALS_KEY, &values)?;
/// let read = SlotValues::from_locals(&locals)?;
/// assert_eq!(read.get("city").and_then(SlotValue::as_str), Some("Paris"));
/// assert!(!read.is_set("nights"));
/// # Ok::<_, serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SlotValues(BTreeMap<String, SlotValue>);

impl SlotValues {
    /// The key of the slot values in a run's [`Locals`]: `"slots"`.
    pub const LOCALS_KEY: &'static str = "slots";

    /// No slot set.
    pub fn new() -> Self {
        SlotValues::default()
    }

    /// The slot values stored in a run's locals (e.g. [`AgentResult::locals`](adk::AgentResult::locals)),
    /// or none if there are none.
    ///
    /// # Errors
    ///
    /// When the value under [`SlotValues::LOCALS_KEY`] is not a map of slot values.
    pub fn from_locals(locals: &Locals) -> Result<Self, serde_json::Error> {
        Ok(locals.get(Self::LOCALS_KEY)?.unwrap_or_default())
    }

    /// The value of the slot `name`, if it is set.
    pub fn get(&self, name: &str) -> Option<&SlotValue> {
        self.0.get(name)
    }

    /// Whether the slot `name` is set.
    pub fn is_set(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// Sets the slot `name`, returning its previous value.
    pub fn insert(&mut self, name: impl Into<String>, value: SlotValue) -> Option<SlotValue> {
        self.0.insert(name.into(), value)
    }

    /// The slots that are set, by name in alphabetical order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &SlotValue)> {
        self.0.iter().map(|(name, value)| (name.as_str(), value))
    }

    /// How many slots are set.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no slot is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
