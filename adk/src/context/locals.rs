//! [`Locals`], a run's own values as plain JSON data, and [`LocalsGuard`], the same values
//! locked for one call that the run lends them to.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::MutexGuard;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Run-local values: a JSON object that lives as long as the run, across iterations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Locals(Map<String, Value>);

impl Locals {
    /// The value at `key`, deserialized.
    ///
    /// # Errors
    ///
    /// When the stored value does not deserialize into `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, serde_json::Error> {
        self.0.get(key).map(|v| T::deserialize(v)).transpose()
    }

    /// The raw JSON value at `key`.
    pub fn get_value(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// Stores `value` at `key`, replacing what was there.
    ///
    /// # Errors
    ///
    /// When `value` does not serialize to JSON.
    pub fn insert<T: Serialize + ?Sized>(
        &mut self,
        key: impl Into<String>,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        self.0.insert(key.into(), serde_json::to_value(value)?);
        Ok(())
    }

    /// Removes and returns the value at `key`.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key)
    }

    /// Whether there is a value at `key`.
    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The run-local values of a run, locked for one call: what a wrapper, a model or a tool
/// gets from [`ToolRequest::locals`](crate::ToolRequest::locals) or
/// [`ModelRequest::locals`](crate::ModelRequest::locals).
///
/// The run lends its values to the calls in flight (the model call, or the tool calls of
/// a turn, which may run at once and share them) and takes them back, changed, when they
/// are done: what a call changes, the run's later hooks and calls see, and a checkpoint
/// keeps. Lock them briefly: the guard is not `Send`, so it cannot be held across an
/// `.await` of a call that must be `Send`. A request made outside a run (with
/// [`ToolRequest::new`](crate::ToolRequest::new)) has values of its own, empty, that go
/// nowhere.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, Tool, ToolInfo, ToolOutput, ToolRequest};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// // A tool that counts its calls in the run's own values.
/// let count = Tool::from_fn(ToolInfo::new("count", "Counts"), |request: ToolRequest| async move {
///     let mut locals = request.locals();
///     let calls = locals.get::<u32>("calls")?.unwrap_or(0) + 1;
///     locals.insert("calls", &calls)?;
///     Ok::<_, serde_json::Error>(ToolOutput::new(calls.to_string()))
/// });
/// let model = ScriptedModel::new([
///     Turn::call("c1", "count", json!({})).with_call("c2", "count", json!({})),
///     Turn::call("c3", "count", json!({})),
///     Turn::text("counted"),
/// ]);
/// let agent = Agent::builder(model).tool(count).build()?;
///
/// let result = agent.run(AgentRequest::user("count")).await?;
/// assert_eq!(result.locals.get::<u32>("calls")?, Some(3));
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct LocalsGuard<'a>(pub(super) Guarded<'a>);

pub(super) enum Guarded<'a> {
    Run(MutexGuard<'a, Locals>),
    Alone(Locals),
}

impl Deref for LocalsGuard<'_> {
    type Target = Locals;

    fn deref(&self) -> &Locals {
        match &self.0 {
            Guarded::Run(guard) => guard,
            Guarded::Alone(locals) => locals,
        }
    }
}

impl DerefMut for LocalsGuard<'_> {
    fn deref_mut(&mut self) -> &mut Locals {
        match &mut self.0 {
            Guarded::Run(guard) => guard,
            Guarded::Alone(locals) => locals,
        }
    }
}

impl fmt::Debug for LocalsGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn a_value_that_does_not_serialize_is_refused_when_it_is_set() {
        let mut locals = Locals::default();
        // JSON object keys are strings: a map keyed by pairs has no JSON form.
        let pairs: HashMap<(u8, u8), u8> = HashMap::from([((1, 2), 3)]);
        assert!(locals.insert("pairs", &pairs).is_err());
        assert!(!locals.contains("pairs"));
        assert!(locals.insert("n", &3).is_ok());
        let written = serde_json::to_string(&locals).unwrap_or_default();
        assert_eq!(written, r#"{"n":3}"#);
    }
}
