//! The answer to a call that a policy sent for approval, and who gives it.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use adk::ToolRequest;
use futures::future::BoxFuture;
use serde_json::Value;

/// An approver's answer to a call that a policy [asked](crate::Decision::Ask) about.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::{Approval, Decision};
/// use serde_json::json;
///
/// let gate = tower_adk::handlers::policy(|call| match call.name.as_str() {
///     "transfer" => Decision::ask("moves money"),
///     _ => Decision::Allow,
/// })
/// .approver(|call, _reason| {
///     let amount = call.arguments["amount"].as_u64().unwrap_or(0);
///     async move {
///         match amount {
///             0..=100 => Approval::Approve,
///             101..=1000 => Approval::Edit(json!({"amount": 100})),
///             _ => Approval::reject("amounts over 1000 need a human"),
///         }
///     }
/// });
/// # let _ = gate;
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Approval {
    /// Run the call as it is.
    Approve,
    /// Do not run the call; the model sees a [`Denied`](adk::ToolErrorKind::Denied)
    /// tool error with this reason.
    Reject(String),
    /// Run the call with these arguments instead, checked against the tool's schema
    /// first, like a policy's [rewrite](crate::Decision::Rewrite).
    Edit(Value),
}

impl Approval {
    /// [`Approval::Reject`] with this reason.
    pub fn reject(reason: impl Into<String>) -> Self {
        Approval::Reject(reason.into())
    }
}

/// The erased approver: the call and the policy's reason in, the answer out.
type ReviewFn = dyn Fn(&ToolRequest, &str) -> BoxFuture<'static, Approval> + Send + Sync;

/// An async approver, erased once when it is configured.
#[derive(Clone)]
pub(super) struct Approver(Arc<ReviewFn>);

impl Approver {
    pub(super) fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(&ToolRequest, &str) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        Approver(Arc::new(move |call: &ToolRequest, reason: &str| {
            Box::pin(f(call, reason)) as BoxFuture<'static, Approval>
        }))
    }

    pub(super) fn review(&self, call: &ToolRequest, reason: &str) -> BoxFuture<'static, Approval> {
        (self.0)(call, reason)
    }
}

impl fmt::Debug for Approver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Approver").finish_non_exhaustive()
    }
}
