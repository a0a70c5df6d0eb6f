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
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, MutexGuard};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::interrupt::Decision;
use crate::run_shared::RunShared;
use crate::{Hook, Messages};

/// The context of one run, handed to every hook.
///
/// It serializes as its run-local values, its thread's values and its iteration, the
/// part of it that is plain data; the extensions are in-memory values (a database pool,
/// the caller's identity) that each request brings, and are not kept.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunContext {
    #[serde(skip)]
    extensions: Arc<http::Extensions>,
    locals: Locals,
    /// Values the run's thread carries from run to run. (Boxed: most runs have none,
    /// and every run in flight holds its context.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thread: Option<Box<Locals>>,
    iteration: usize,
    /// Set by a state hook's default: that hook of that handler type passed through.
    #[serde(skip)]
    passed: Option<(Hook, TypeId)>,
    /// The decision for a hook's interrupt, while the run resumes from it.
    #[serde(skip)]
    answer: Option<Box<HookAnswer>>,
}

/// The decision for the interrupt of one hook of one handler.
#[derive(Debug, Clone)]
struct HookAnswer {
    /// `hook:handler`, the end of the interrupt's address.
    at: String,
    decision: Decision,
    /// Whether that hook of that handler is the one running.
    current: bool,
}

impl RunContext {
    /// A context with these extensions and no run-local values.
    pub fn new(extensions: http::Extensions) -> Self {
        RunContext {
            extensions: Arc::new(extensions),
            locals: Locals::default(),
            thread: None,
            iteration: 0,
            passed: None,
            answer: None,
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

    /// The thread's values: like the run-local values, they persist across the
    /// iterations of the run and survive interrupt and resume; and the next run on the
    /// same thread ([`AgentRequest::on_thread`](crate::AgentRequest::on_thread)) starts
    /// with them as this run left them, where run-local values start empty. A run on no
    /// thread keeps them for its own length. What a person granted for the whole
    /// conversation (a tool approved for good) goes here. Hooks read and write them; the
    /// tools and wrappers of the run do not see them.
    ///
    /// ```
    /// use tower_adk::RunContext;
    ///
    /// let mut cx = RunContext::new(http::Extensions::new());
    /// cx.thread_values_mut().insert("approved", &["refund"]).unwrap();
    /// assert_eq!(cx.thread_values().get::<Vec<String>>("approved").unwrap(), Some(vec!["refund".to_owned()]));
    /// assert!(cx.locals().is_empty());
    /// ```
    pub fn thread_values(&self) -> &Locals {
        static NONE: std::sync::LazyLock<Locals> = std::sync::LazyLock::new(Locals::default);
        self.thread.as_deref().unwrap_or(&NONE)
    }

    /// The thread's values, mutably; see [`RunContext::thread_values`].
    pub fn thread_values_mut(&mut self) -> &mut Locals {
        self.thread.get_or_insert_default()
    }

    /// How many model calls the run has made so far (1 during the first call's hooks).
    pub fn iteration(&self) -> usize {
        self.iteration
    }

    pub(crate) fn set_iteration(&mut self, iteration: usize) {
        self.iteration = iteration;
    }

    /// The person's decision about this hook's interrupt, while the run resumes from it
    /// (see [`interrupt`](crate::interrupt)): a hook that interrupted reads the answer
    /// here when it runs again, and goes on. `None` in every other hook, and once the
    /// hook has run through.
    ///
    /// ```
    /// use tower_adk::{AgentConfig, BoxError, Handler, RunContext, RunState};
    /// use tower_adk::interrupt::{Decision, Interrupt};
    ///
    /// /// Asks the person for the customer's name before the first model call.
    /// struct AskName;
    ///
    /// impl Handler for AskName {
    ///     async fn before_model(&self, cx: &mut RunContext, _: &mut RunState) -> Result<(), BoxError> {
    ///         if cx.locals().contains("name") {
    ///             return Ok(());
    ///         }
    ///         match cx.decision() {
    ///             Some(Decision::Respond { answer }) => {
    ///                 let answer = answer.clone();
    ///                 cx.locals_mut().insert("name", &answer)?;
    ///                 Ok(())
    ///             }
    ///             _ => Err(Interrupt::new("What is the customer's name?").into()),
    ///         }
    ///     }
    /// }
    /// ```
    pub fn decision(&self) -> Option<&Decision> {
        let answer = self.answer.as_ref().filter(|a| a.current)?;
        Some(&answer.decision)
    }

    /// Replaces the extensions (those of the request that takes a run up).
    pub(crate) fn set_extensions(&mut self, extensions: http::Extensions) {
        self.extensions = Arc::new(extensions);
    }

    /// Gives the hook at `at` (`hook:handler`) its decision when it runs again.
    pub(crate) fn set_answer(&mut self, at: String, decision: Decision) {
        let current = false;
        self.answer = Some(Box::new(HookAnswer {
            at,
            decision,
            current,
        }));
    }

    /// Notes which hook of which handler runs now.
    pub(crate) fn enter_hook<N: AsRef<str>>(&mut self, hook: Hook, handler: impl FnOnce() -> N) {
        if let Some(answer) = &mut self.answer {
            let handler = handler();
            let handler = handler.as_ref();
            let at = answer.at.split_once(':');
            answer.current = at.is_some_and(|(h, name)| h == hook.as_str() && name == handler);
        }
    }

    /// Takes the decision for an interrupt of `hook` (of whichever handler): for a
    /// `wrap_model` interrupt, whose wrapper reads it from its request.
    pub(crate) fn take_answer_for(&mut self, hook: Hook) -> Option<Decision> {
        let at = &self.answer.as_ref()?.at;
        if at.split_once(':').is_some_and(|(h, _)| h == hook.as_str()) {
            return self.answer.take().map(|a| a.decision);
        }
        None
    }

    /// The hook that ran now went through: its decision is used.
    pub(crate) fn hook_done(&mut self) {
        if self.answer.as_ref().is_some_and(|a| a.current) {
            self.answer = None;
        }
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

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
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

/// What the calls of a run carry from it: its extensions, and its run-local values,
/// which the run lends to the calls in flight (the model call and its wrappers, or a
/// turn's tool calls and theirs) and takes back when they are done.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    pub(crate) extensions: Arc<http::Extensions>,
    /// `None` for a request made outside a run.
    run: Option<RunShared>,
}

impl Scope {
    pub(crate) fn new(extensions: Arc<http::Extensions>, run: RunShared) -> Self {
        Scope {
            extensions,
            run: Some(run),
        }
    }

    pub(crate) fn extensions_mut(&mut self) -> &mut http::Extensions {
        Arc::make_mut(&mut self.extensions)
    }

    /// The id of the run, if the request comes from one.
    pub(crate) fn run_id(&self) -> Option<Arc<str>> {
        self.run.as_ref().map(RunShared::run_id)
    }

    pub(crate) fn locals(&self) -> LocalsGuard<'_> {
        LocalsGuard(match &self.run {
            Some(run) => Guarded::Run(run.locals()),
            None => Guarded::Alone(Locals::default()),
        })
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
pub struct LocalsGuard<'a>(Guarded<'a>);

enum Guarded<'a> {
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
