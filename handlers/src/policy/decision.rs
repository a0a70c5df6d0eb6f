//! What a policy decides, and the policies themselves.

use std::fmt;
use std::future::Future;

use adk::ToolRequest;
use serde_json::Value;

/// What a [`Policy`] decides about one tool call.
///
/// # Example
///
/// ```
/// use tower_adk::ToolRequest;
/// use tower_adk::handlers::Decision;
/// use serde_json::json;
///
/// fn decide(call: &ToolRequest) -> Decision {
///     match call.name.as_str() {
///         "read" => Decision::Allow,
///         "delete" => Decision::deny("deleting is not allowed here"),
///         // Force a safe page size, whatever the model asked.
///         "search" => Decision::rewrite(json!({"query": call.arguments["query"], "limit": 10})),
///         _ => Decision::ask("this tool has side effects"),
///     }
/// }
///
/// let call = ToolRequest::new("c1", "delete", json!({}));
/// assert_eq!(decide(&call), Decision::Deny("deleting is not allowed here".into()));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Decision {
    /// Run the call as it is.
    Allow,
    /// Do not run the call; the model sees a [`Denied`](adk::ToolErrorKind::Denied)
    /// tool error with this reason.
    Deny(String),
    /// Run the call with these arguments instead. They are checked against the tool's
    /// schema first; invalid ones give the model an
    /// [`InvalidArguments`](adk::ToolErrorKind::InvalidArguments) error and the tool is
    /// not called.
    Rewrite(Value),
    /// Ask the gate's approver, giving this reason; without an approver, ask a person:
    /// the run is interrupted (see [`PolicyGate`](crate::PolicyGate#ask)).
    Ask(String),
}

impl Decision {
    /// [`Decision::Deny`] with this reason.
    pub fn deny(reason: impl Into<String>) -> Self {
        Decision::Deny(reason.into())
    }

    /// [`Decision::Rewrite`] with these arguments.
    pub fn rewrite(arguments: Value) -> Self {
        Decision::Rewrite(arguments)
    }

    /// [`Decision::Ask`] with this reason.
    pub fn ask(reason: impl Into<String>) -> Self {
        Decision::Ask(reason.into())
    }
}

/// Decides, per tool call, whether and how it runs: from the tool's name, the arguments
/// and the run's extensions (the caller's role, tenant, ...), all in the [`ToolRequest`].
///
/// Closures `Fn(&ToolRequest) -> Decision` are policies; so is [`AsyncPolicy`] (from
/// [`policy_async`](crate::policy_async)); implement the trait for a policy that holds
/// state, with a plain `async fn`.
///
/// # Example
///
/// ```
/// use std::collections::HashSet;
/// use tower_adk::ToolRequest;
/// use tower_adk::handlers::{Decision, Policy, PolicyGate};
///
/// /// Allows only the tools on a list.
/// struct AllowList(HashSet<String>);
///
/// impl Policy for AllowList {
///     async fn decide(&self, call: &ToolRequest) -> Decision {
///         if self.0.contains(call.name.as_str()) {
///             Decision::Allow
///         } else {
///             Decision::deny(format!("`{}` is not on the allow list", call.name))
///         }
///     }
/// }
///
/// let gate = PolicyGate::new(AllowList(HashSet::from(["search".to_owned()])));
/// # let _ = gate;
/// ```
pub trait Policy: Send + Sync + 'static {
    /// Decides about one call.
    fn decide(&self, call: &ToolRequest) -> impl Future<Output = Decision> + Send;
}

impl<F> Policy for F
where
    F: Fn(&ToolRequest) -> Decision + Send + Sync + 'static,
{
    fn decide(&self, call: &ToolRequest) -> impl Future<Output = Decision> + Send {
        std::future::ready(self(call))
    }
}

/// A policy that allows every call: the default of a [`ToolGuard`](crate::ToolGuard).
///
/// # Example
///
/// ```
/// use tower_adk::ToolRequest;
/// use tower_adk::handlers::{AllowAll, Decision, Policy};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let call = ToolRequest::new("c1", "anything", serde_json::json!({}));
/// assert_eq!(AllowAll.decide(&call).await, Decision::Allow);
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Policy for AllowAll {
    fn decide(&self, _: &ToolRequest) -> impl Future<Output = Decision> + Send {
        std::future::ready(Decision::Allow)
    }
}

/// A policy from an async closure. See [`policy_async`](crate::policy_async).
///
/// # Example
///
/// ```
/// use tower_adk::handlers::{AsyncPolicy, Decision};
///
/// let policy = AsyncPolicy::new(|_call| async { Decision::Allow });
/// # let _ = policy;
/// ```
#[derive(Clone)]
pub struct AsyncPolicy<F> {
    f: F,
}

impl<F> AsyncPolicy<F> {
    /// A policy that awaits the future `f` returns for each call.
    pub fn new<Fut>(f: F) -> Self
    where
        F: Fn(&ToolRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Decision> + Send + 'static,
    {
        AsyncPolicy { f }
    }
}

impl<F, Fut> Policy for AsyncPolicy<F>
where
    F: Fn(&ToolRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    fn decide(&self, call: &ToolRequest) -> impl Future<Output = Decision> + Send {
        (self.f)(call)
    }
}

impl<F> fmt::Debug for AsyncPolicy<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncPolicy").finish_non_exhaustive()
    }
}
