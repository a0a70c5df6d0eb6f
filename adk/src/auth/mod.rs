//! Who calls, and what they may do: every caller is a [`Principal`] (a stable subject)
//! with typed identity values ([`Identity`]); a thread, its checkpoints and a streamed
//! run belong to the principal whose run created them; one replaceable [`Authorize`]
//! decides what a caller may do with them, by default only their owner
//! ([`OwnerOnly`]); and each decision on a run's interrupts is kept with who made it and
//! when ([`Decided`]).
//!
//! The checks are in the core: an [`AgentRequest`](crate::agent::AgentRequest) carries
//! its principal, and a run on a thread, a resume and the thread methods of an
//! [`Agent`](crate::agent::Agent) ask the agent's [`Authorize`], so a program that uses
//! the library without the server gets the same guarantees as one that serves it. A
//! caller who may not touch a thread is told it does not exist (`unknown_thread`,
//! `checkpoint_unknown`), and nothing runs or is written.
//!
//! # Resumes keep the requester's identity
//!
//! A run keeps who it is for: its principal, and the identity values the agent keeps
//! (see [`AgentBuilder::keep_identity`](crate::agent::AgentBuilder::keep_identity)),
//! written with its checkpoints. When another person resumes it (a manager approving a
//! clerk's call, allowed by an [`Authorize`] that lets managers
//! [decide](Action::Decide)), the run's hooks see the clerk's identity, so a role filter
//! gives the run the clerk's tools, not the manager's; the manager is the run's
//! [decider](crate::context::RunContext::decider), and each decision is recorded with
//! the manager's principal.
//!
//! # Example
//!
//! ```
//! use tower_adk::auth::{Access, Action, Principal};
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use tower_adk::{Agent, AgentRequest};
//!
//! #[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
//! enum Role { Clerk, Manager }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let agent = Agent::builder(ScriptedModel::per_run([Turn::text("Hi.")]))
//!     .keep_identity::<Role>("role")
//!     // Owners do anything with their threads; managers may also answer interrupts.
//!     .authorize(|access: &Access<'_>| {
//!         access.is_owner()
//!             || (access.action == Action::Decide && access.identity.get() == Some(&Role::Manager))
//!     })
//!     .build()?;
//!
//! let alice = AgentRequest::user("hi").with_principal(Principal::new("alice")).on_thread("t1");
//! agent.run(alice.with_extension(Role::Clerk)).await?;
//!
//! // Bob may not continue Alice's thread: for him it does not exist.
//! let bob = AgentRequest::user("hi").with_principal(Principal::new("bob")).on_thread("t1");
//! let refused = agent.run(bob).await.unwrap_err();
//! assert_eq!(refused.code(), "unknown_thread");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod audit;
mod authorize;
mod kept;

use std::fmt;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};

pub use self::audit::Decided;
pub use self::authorize::{Access, Action, Authorize, OwnerOnly};
pub(crate) use self::authorize::{Asker, SharedAuthorize};
pub(crate) use self::kept::{KeptTypes, Requester};

/// Who a caller is: a stable subject, the same for every request of the same person or
/// program (a user id, a token's own name), which threads and checkpoints record as
/// their owner. Cheap to clone.
///
/// A request that names none is the [anonymous](Principal::anonymous) principal's, as
/// every request of a program or server without identities is: they share everything.
///
/// ```
/// use tower_adk::auth::Principal;
///
/// let alice = Principal::new("alice");
/// assert_eq!(alice.subject(), "alice");
/// assert!(!alice.is_anonymous());
/// assert!(Principal::default().is_anonymous());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Principal(Arc<str>);

/// The subject of the anonymous principal.
const ANONYMOUS: &str = "anonymous";

impl Principal {
    /// The principal with this subject.
    pub fn new(subject: impl Into<Arc<str>>) -> Self {
        Principal(subject.into())
    }

    /// The anonymous principal (subject `anonymous`): the caller of a request that names
    /// none, and the owner of the records written before owners were recorded (format
    /// 1). Give no real caller this subject.
    pub fn anonymous() -> Self {
        static ANON: LazyLock<Principal> = LazyLock::new(|| Principal::new(ANONYMOUS));
        ANON.clone()
    }

    /// The subject.
    pub fn subject(&self) -> &str {
        &self.0
    }

    /// Whether this is the anonymous principal.
    pub fn is_anonymous(&self) -> bool {
        &*self.0 == ANONYMOUS
    }
}

impl Default for Principal {
    fn default() -> Self {
        Principal::anonymous()
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Principal({:?})", &*self.0)
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A caller: its [`Principal`], and typed values about it (a role, a tenant) for the
/// extensions of its runs, which hooks, policies and [`Authorize`] read.
///
/// ```
/// use tower_adk::auth::{Identity, Principal};
///
/// #[derive(Clone, Debug, PartialEq)]
/// struct Role(&'static str);
///
/// let clerk = Identity::new(Principal::new("carol")).with(Role("clerk"));
/// assert_eq!(clerk.principal().subject(), "carol");
/// assert_eq!(clerk.extensions().get::<Role>(), Some(&Role("clerk")));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Identity {
    principal: Principal,
    extensions: http::Extensions,
}

impl Identity {
    /// The identity of `principal`, with no values yet.
    pub fn new(principal: Principal) -> Self {
        Identity {
            principal,
            extensions: http::Extensions::new(),
        }
    }

    /// The anonymous principal's identity, with no values.
    pub fn anonymous() -> Self {
        Identity::default()
    }

    /// Adds a typed value about the caller.
    #[must_use]
    pub fn with<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The caller's principal.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// The typed values about the caller.
    pub fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }

    /// The typed values about the caller, mutably.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        &mut self.extensions
    }

    /// Adds these typed values about the caller.
    #[must_use]
    pub fn with_extensions(mut self, values: http::Extensions) -> Self {
        self.extensions.extend(values);
        self
    }

    /// The principal and the values.
    pub fn into_parts(self) -> (Principal, http::Extensions) {
        (self.principal, self.extensions)
    }
}
