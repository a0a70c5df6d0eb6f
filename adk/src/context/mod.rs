//! What a run carries from hook to hook: typed extensions, run-local values, history.
//!
//! - [`RunContext`] holds the request's typed extensions (an [`http::Extensions`]) and the
//!   run-local values ([`Locals`]). Hooks get it mutably; values they insert are seen by
//!   every later hook, by the wrappers, the model and the tools of the run.
//! - [`History`] holds the message history the loop keeps. `before_model` and
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

mod history;
mod locals;
mod scope;

use std::any::TypeId;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

#[allow(deprecated)]
pub use self::history::{History, RunState};
pub use self::locals::{Locals, LocalsGuard};
pub(crate) use self::scope::{RunLink, Scope};
use crate::auth::{Identity, Principal, Requester};
use crate::hook::Hook;
use crate::interrupt::{Decision, HookAnswer};

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
    /// Who the run is for, when it is not anonymous or keeps identity values. (Boxed:
    /// most runs have none.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    requester: Option<Box<Requester>>,
    /// Who answered the interrupts the run resumes from, while it resumes.
    #[serde(skip)]
    decider: Option<Box<Identity>>,
    /// Set by a state hook's default: that hook of that handler type passed through.
    #[serde(skip)]
    passed: Option<(Hook, TypeId)>,
    /// The decision for a hook's interrupt, while the run resumes from it.
    #[serde(skip)]
    answer: Option<Box<Answering>>,
}

/// The decision for a hook's interrupt, and whether that hook of that handler is the one
/// running.
#[derive(Debug, Clone)]
struct Answering {
    answer: HookAnswer,
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
            requester: None,
            decider: None,
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

    /// Who the run is for: the principal of the request that started it, the same when
    /// someone else resumes it (see [`auth`](crate::auth)).
    pub fn principal(&self) -> &Principal {
        static ANONYMOUS: std::sync::LazyLock<Principal> =
            std::sync::LazyLock::new(Principal::anonymous);
        self.requester.as_ref().map_or(&ANONYMOUS, |r| &r.principal)
    }

    /// Who answered the interrupts this run resumes from (their principal, and the
    /// values of their request's identity), while it resumes; `None` for a run that did
    /// not resume. The run's own extensions keep its requester's identity values (see
    /// [`AgentBuilder::keep_identity`](crate::agent::AgentBuilder::keep_identity)), so
    /// the decider's role never becomes the run's.
    pub fn decider(&self) -> Option<&Identity> {
        self.decider.as_deref()
    }

    pub(crate) fn requester(&self) -> Option<&Requester> {
        self.requester.as_deref()
    }

    pub(crate) fn set_requester(&mut self, requester: Option<Requester>) {
        self.requester = requester.map(Box::new);
    }

    pub(crate) fn set_decider(&mut self, decider: Identity) {
        self.decider = Some(Box::new(decider));
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
    /// use tower_adk::{AgentConfig, BoxError, Handler, RunContext, History};
    /// use tower_adk::interrupt::{Decision, Interrupt};
    ///
    /// /// Asks the person for the customer's name before the first model call.
    /// struct AskName;
    ///
    /// impl Handler for AskName {
    ///     async fn before_model(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
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
        let answering = self.answer.as_ref().filter(|a| a.current)?;
        Some(&answering.answer.decision)
    }

    /// Replaces the extensions (those of the request that takes a run up).
    pub(crate) fn set_extensions(&mut self, extensions: http::Extensions) {
        self.extensions = Arc::new(extensions);
    }

    /// Gives the hook that interrupted its decision when it runs again.
    pub(crate) fn set_answer(&mut self, answer: HookAnswer) {
        let current = false;
        self.answer = Some(Box::new(Answering { answer, current }));
    }

    /// Notes which hook of which handler runs now.
    pub(crate) fn enter_hook<N: AsRef<str>>(&mut self, hook: Hook, handler: impl FnOnce() -> N) {
        if let Some(answering) = &mut self.answer {
            answering.current = answering.answer.is_for(hook, handler().as_ref());
        }
    }

    /// Takes the decision for an interrupt of `hook` (of whichever handler): for a
    /// `wrap_model` interrupt, whose wrapper reads it from its request.
    pub(crate) fn take_answer_for(&mut self, hook: Hook) -> Option<HookAnswer> {
        if self.answer.as_ref()?.answer.hook == hook {
            return self.answer.take().map(|a| a.answer);
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
