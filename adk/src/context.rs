//! What a run carries from hook to hook: typed extensions, run-local values, history.
//!
//! - [`RunContext`] holds the request's typed extensions (an [`http::Extensions`]) and the
//!   run-local values ([`Locals`]). Hooks get it mutably; values they insert are seen by
//!   every later hook, by the wrappers, the model and the tools of the run.
//! - [`RunState`] holds the message history the loop keeps. `before_model` and
//!   `after_model` hooks rewrite it, and later iterations see the rewrite.
//!
//! Run-local values are plain JSON data, so a run can be checkpointed and resumed with
//! them; extensions are typed, in-memory values (a database pool, the caller's identity).
//!
//! # Example
//!
//! ```
//! use tower_adk::{Locals, RunContext};
//!
//! #[derive(Clone)]
//! struct Role(&'static str);
//!
//! let mut extensions = http::Extensions::new();
//! extensions.insert(Role("admin"));
//! let mut cx = RunContext::new(extensions);
//! assert_eq!(cx.extensions().get::<Role>().map(|r| r.0), Some("admin"));
//!
//! cx.locals_mut().insert("searches", &3).unwrap();
//! assert_eq!(cx.locals().get::<u32>("searches").unwrap(), Some(3));
//! ```

use std::any::TypeId;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Hook, Messages};

/// The context of one run, handed to every hook.
///
/// It serializes as its run-local values and iteration, the part of it that is plain
/// data; the extensions are in-memory values (a database pool, the caller's identity)
/// that each request brings, and are not kept.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunContext {
    #[serde(skip)]
    extensions: Arc<http::Extensions>,
    locals: Locals,
    iteration: usize,
    /// Set by a state hook's default: that hook of that handler type passed through.
    #[serde(skip)]
    passed: Option<(Hook, TypeId)>,
}

impl RunContext {
    /// A context with these extensions and no run-local values.
    pub fn new(extensions: http::Extensions) -> Self {
        RunContext {
            extensions: Arc::new(extensions),
            locals: Locals::default(),
            iteration: 0,
            passed: None,
        }
    }

    /// The run's typed extensions: those of the request, plus what hooks inserted.
    pub fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }

    /// The run's extensions, mutably. What a hook inserts here is seen by every later
    /// hook, wrapper, model call and tool call of the run.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        Arc::make_mut(&mut self.extensions)
    }

    pub(crate) fn shared_extensions(&self) -> Arc<http::Extensions> {
        Arc::clone(&self.extensions)
    }

    /// The run-local values.
    pub fn locals(&self) -> &Locals {
        &self.locals
    }

    /// The run-local values, mutably. They persist across the iterations of the run.
    pub fn locals_mut(&mut self) -> &mut Locals {
        &mut self.locals
    }

    /// How many model calls the run has made so far (1 during the first call's hooks).
    pub fn iteration(&self) -> usize {
        self.iteration
    }

    pub(crate) fn set_iteration(&mut self, iteration: usize) {
        self.iteration = iteration;
    }

    /// Notes that the default of `hook` of the handler type `H` ran: it passes through.
    pub(crate) fn passed_by<H: ?Sized + 'static>(&mut self, hook: Hook) {
        self.passed = Some((hook, TypeId::of::<H>()));
    }

    pub(crate) fn take_passed(&mut self) -> Option<(Hook, TypeId)> {
        self.passed.take()
    }
}

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
}

/// The state the loop keeps for a run: its message history.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunState {
    /// The history: the instruction (as a system message, if any), the input and every
    /// turn since.
    pub messages: Messages,
}

impl RunState {
    /// A state with this history.
    pub fn new(messages: Messages) -> Self {
        RunState { messages }
    }
}
