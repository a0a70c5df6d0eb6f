//! [`Authorize`]: what a caller may do with a thread, its checkpoints and its pending
//! interrupts; [`OwnerOnly`], the default.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::Principal;
use crate::interrupt::PendingInterrupt;

/// What a caller asks to do with a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Action {
    /// Read the thread: where it stands, its history, its audit trail, a streamed run's
    /// events.
    Read,
    /// Start a run on the thread (a new thread has no owner yet: its first run makes
    /// the caller its owner).
    Run,
    /// Take up the thread's interrupted (or crashed) run as its requester: the
    /// requester's own resume, or one without decisions.
    Resume,
    /// Answer the pending interrupts of someone else's run: a resume with decisions by
    /// a caller who is not the run's owner. The run goes on as its requester's.
    Decide,
    /// Delete the thread and its checkpoints.
    Delete,
}

impl Action {
    /// A stable snake_case name: `read`, `run`, `resume`, `decide`, `delete`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::Run => "run",
            Action::Resume => "resume",
            Action::Decide => "decide",
            Action::Delete => "delete",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One question for an [`Authorize`]: may this caller do this to this thread?
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Access<'a> {
    /// Who asks.
    pub caller: &'a Principal,
    /// The typed values about the caller (a role): its request's extensions.
    pub identity: &'a http::Extensions,
    /// What it asks to do.
    pub action: Action,
    /// The agent's name.
    pub agent: &'a str,
    /// The thread.
    pub thread: &'a str,
    /// The principal the thread belongs to; `None` for a thread with no record yet.
    pub owner: Option<&'a Principal>,
    /// The interrupts that wait on the thread (for [`Action::Resume`] and
    /// [`Action::Decide`], those of the checkpoint resumed); empty when none wait.
    pub interrupts: &'a [PendingInterrupt],
}

impl Access<'_> {
    /// Whether the caller owns the thread, or the thread has no owner yet.
    pub fn is_owner(&self) -> bool {
        self.owner.is_none_or(|owner| owner == self.caller)
    }
}

/// Decides whether a caller may do an [`Action`] to a thread: the one seam of
/// authorization, asked by the core before a run on a thread, a resume, and a thread's
/// read or deletion (set with
/// [`AgentBuilder::authorize`](crate::agent::AgentBuilder::authorize); the default is
/// [`OwnerOnly`]). A caller refused is told the thread (or checkpoint) does not exist;
/// nothing runs and nothing is written.
///
/// A closure `Fn(&Access) -> bool` is an `Authorize`.
///
/// # Example
///
/// ```
/// use tower_adk::auth::{Access, Action, Authorize};
///
/// #[derive(Clone, PartialEq)]
/// enum Role { Clerk, Manager }
///
/// /// Owners do anything with their threads; managers may also answer the interrupts
/// /// of others' runs, and nothing else of theirs.
/// struct ManagersDecide;
///
/// impl Authorize for ManagersDecide {
///     async fn allows(&self, access: &Access<'_>) -> bool {
///         let manager = access.identity.get::<Role>() == Some(&Role::Manager);
///         access.is_owner() || (manager && access.action == Action::Decide)
///     }
/// }
/// ```
pub trait Authorize: Send + Sync + 'static {
    /// Whether the caller may do what it asks.
    fn allows(&self, access: &Access<'_>) -> impl Future<Output = bool> + Send;
}

impl<F> Authorize for F
where
    F: Fn(&Access<'_>) -> bool + Send + Sync + 'static,
{
    async fn allows(&self, access: &Access<'_>) -> bool {
        self(access)
    }
}

/// Only a thread's owner may do anything with it (and anyone may start a new thread,
/// which makes them its owner): the default [`Authorize`].
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnerOnly;

impl Authorize for OwnerOnly {
    async fn allows(&self, access: &Access<'_>) -> bool {
        access.is_owner()
    }
}

/// The object-safe twin of [`Authorize`].
trait DynAuthorize: Send + Sync + 'static {
    fn allows<'a>(&'a self, access: &'a Access<'a>) -> BoxFuture<'a, bool>;
}

impl<A: Authorize> DynAuthorize for A {
    fn allows<'a>(&'a self, access: &'a Access<'a>) -> BoxFuture<'a, bool> {
        Box::pin(Authorize::allows(self, access))
    }
}

/// An agent's [`Authorize`], erased. Cheap to clone.
#[derive(Clone)]
pub(crate) struct SharedAuthorize(Arc<dyn DynAuthorize>);

impl SharedAuthorize {
    pub(crate) fn new(authorize: impl Authorize) -> Self {
        SharedAuthorize(Arc::new(authorize))
    }

    /// Whether the caller may do what it asks.
    pub(crate) async fn allows(&self, access: &Access<'_>) -> bool {
        self.0.allows(access).await
    }
}

impl Default for SharedAuthorize {
    fn default() -> Self {
        SharedAuthorize::new(OwnerOnly)
    }
}

impl fmt::Debug for SharedAuthorize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Authorize")
    }
}

/// Who asks an agent's [`Authorize`]: the caller (its principal and identity values) of a
/// run of the agent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asker<'a> {
    pub(crate) authorize: &'a SharedAuthorize,
    pub(crate) caller: &'a Principal,
    pub(crate) identity: &'a http::Extensions,
    pub(crate) agent: &'a str,
}

impl Asker<'_> {
    /// Whether the caller may do `action` to `thread` of `owner`, whose interrupts wait.
    pub(crate) async fn allows(
        &self,
        action: Action,
        thread: &str,
        owner: Option<&Principal>,
        interrupts: &[PendingInterrupt],
    ) -> bool {
        let access = Access {
            caller: self.caller,
            identity: self.identity,
            action,
            agent: self.agent,
            thread,
            owner,
            interrupts,
        };
        self.authorize.allows(&access).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _obj_safe(_: Box<dyn DynAuthorize>) {}
}
