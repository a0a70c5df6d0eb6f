//! Decide per tool call: allow, deny, rewrite the arguments, or ask for approval.

mod approval;
mod decision;

use std::borrow::Cow;
use std::fmt;
use std::future::Future;

use adk::ToolRequest;
use adk::interrupt::{Decision as Decided, Interrupt};
use adk::{BoxError, Handler, ToolError};
use adk::{ToolCallNext, ToolResponse};

pub use self::approval::Approval;
use self::approval::Approver;
pub use self::decision::{AllowAll, AsyncPolicy, Decision, Policy};
use crate::revalidate::revalidate;
use serde_json::json;

/// A handler that asks a [`Policy`] about every tool call, invoked or streamed, before
/// the inner wrappers and the tool see it. The policy reads the tool's name, the arguments
/// and the run's extensions (the caller's role, tenant, ...) from the [`ToolRequest`] and
/// returns a [`Decision`]:
///
/// | decision | the tool | the model sees |
/// |----------|----------|----------------|
/// | [`Allow`](Decision::Allow) | runs as called | its output |
/// | [`Deny`](Decision::Deny) | is not called | a [`Denied`](adk::ToolErrorKind::Denied) error with the reason |
/// | [`Rewrite`](Decision::Rewrite) | runs with the new arguments, once they pass the tool's schema | its output, or an [`InvalidArguments`](adk::ToolErrorKind::InvalidArguments) error (tool not called) |
/// | [`Ask`](Decision::Ask) | runs if the [approver](PolicyGate::approver), or a person, approves (possibly with edited arguments, re-checked like a rewrite) | its output, or a `Denied` error with the reason |
///
/// # Ask
///
/// A gate with an [approver](PolicyGate::approver) asks it, in process. A gate without
/// one asks a person: it [interrupts](adk::interrupt) the run at the call, with the id
/// `agent:NAME/tool:CALL_ID` and the payload
///
/// ```json
/// {"kind": "policy", "tool": "transfer", "arguments": {"amount": 5000}, "reason": "moves money"}
/// ```
///
/// When the run [resumes](adk::AgentRequest::resume), the policy decides again about
/// the call, with the arguments as they are then: an approved call runs; an edited one
/// has the person's arguments (the core checked them against the tool's schema), which
/// the policy decides about anew (it may deny or rewrite them) and which are checked
/// again as a rewrite is; a rejected call never runs, and the model reads the reason.
///
/// # Order
///
/// Register the gate before (outside) the wrappers it guards: they see the call only once
/// the gate let it through, with the arguments the gate settled on. [`ToolGuard`] runs the
/// gate first of its stages, by construction.
///
/// [`ToolGuard`]: crate::ToolGuard
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, ToolErrorKind};
/// use tower_adk::testing::{text_tool, ScriptedModel, Turn};
/// use tower_adk::handlers::Decision;
/// use serde_json::json;
///
/// #[derive(Clone, PartialEq)]
/// enum Role { Admin, Viewer }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([Turn::call("c1", "drop_table", json!({})), Turn::text("ok")]);
/// let agent = Agent::builder(model).tool(text_tool("drop_table", "dropped")).build()?;
///
/// let admins_only = tower_adk::handlers::policy(|call| {
///     match call.extensions().get::<Role>() {
///         Some(Role::Admin) => Decision::Allow,
///         _ => Decision::deny(format!("only admins may call `{}`", call.name)),
///     }
/// });
/// let request = AgentRequest::user("drop it")
///     .with_extension(Role::Viewer)
///     .with_handler(admins_only);
/// let result = agent.run(request).await?;
///
/// let error = result.tool_records[0].error.as_ref().unwrap();
/// assert_eq!(error.kind(), ToolErrorKind::Denied);
/// assert_eq!(error.message(), "only admins may call `drop_table`");
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct PolicyGate<P> {
    policy: P,
    approver: Option<Approver>,
}

/// A policy gate from a closure that decides each call; see the [`PolicyGate`] docs.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::Decision;
///
/// let gate = tower_adk::handlers::policy(|call| {
///     if call.name.starts_with("delete_") {
///         Decision::ask("deletes data")
///     } else {
///         Decision::Allow
///     }
/// });
/// # let _ = gate;
/// ```
pub fn policy<F>(decide: F) -> PolicyGate<F>
where
    F: Fn(&ToolRequest) -> Decision + Send + Sync + 'static,
{
    PolicyGate::new(decide)
}

/// A policy gate from an async closure: it may look things up before deciding. The
/// closure gets the call by reference: take what the decision needs from it, then
/// return an `async move` block.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::Decision;
///
/// #[derive(Clone)]
/// struct UserId(u64);
///
/// async fn quota_left(user: u64) -> u32 { if user == 7 { 0 } else { 10 } }
///
/// let gate = tower_adk::handlers::policy_async(|call| {
///     let user = call.extensions().get::<UserId>().map(|u| u.0);
///     async move {
///         match user {
///             None => Decision::deny("no user"),
///             Some(user) if quota_left(user).await == 0 => Decision::deny("quota exhausted"),
///             Some(_) => Decision::Allow,
///         }
///     }
/// });
/// # let _ = gate;
/// ```
pub fn policy_async<F, Fut>(decide: F) -> PolicyGate<AsyncPolicy<F>>
where
    F: Fn(&ToolRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    PolicyGate::new(AsyncPolicy::new(decide))
}

impl<P: Policy> PolicyGate<P> {
    /// A gate that asks `policy` about every call, with no approver.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{AllowAll, PolicyGate};
    ///
    /// let gate = PolicyGate::new(AllowAll);
    /// # let _ = gate;
    /// ```
    pub fn new(policy: P) -> Self {
        PolicyGate {
            policy,
            approver: None,
        }
    }

    /// Answers the calls the policy [asks](Decision::Ask) about with `approver`, which
    /// gets the call and the policy's reason.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{Approval, Decision};
    ///
    /// let gate = tower_adk::handlers::policy(|_| Decision::ask("every call needs a yes"))
    ///     .approver(|call, reason| {
    ///         println!("approve `{}` ({reason})?", call.name);
    ///         async { Approval::Approve }
    ///     });
    /// # let _ = gate;
    /// ```
    pub fn approver<F, Fut>(mut self, approver: F) -> Self
    where
        F: Fn(&ToolRequest, &str) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        self.approver = Some(Approver::new(approver));
        self
    }

    /// Decides about `request`: the request to run (with the arguments settled on), or
    /// the tool error the model sees instead, or the run's interrupt.
    pub(crate) async fn admit(&self, mut request: ToolRequest) -> Result<ToolRequest, BoxError> {
        match self.policy.decide(&request).await {
            Decision::Allow => Ok(request),
            Decision::Deny(reason) => Err(ToolError::denied(reason).into()),
            Decision::Rewrite(arguments) => {
                revalidate(&request, &arguments, "the policy")?;
                request.arguments = arguments;
                Ok(request)
            }
            Decision::Ask(reason) => match &self.approver {
                Some(approver) => Ok(approve(approver, request, &reason).await?),
                None => ask_person(request, &reason),
            },
        }
    }
}

/// Asks the gate's approver about a call.
async fn approve(
    approver: &Approver,
    mut request: ToolRequest,
    reason: &str,
) -> Result<ToolRequest, ToolError> {
    match approver.review(&request, reason).await {
        Approval::Approve => Ok(request),
        Approval::Reject(why) => Err(ToolError::denied(format!(
            "the approver rejected the call: {why}"
        ))),
        Approval::Edit(arguments) => {
            revalidate(&request, &arguments, "the approver")?;
            request.arguments = arguments;
            Ok(request)
        }
    }
}

/// Asks a person about a call: interrupts the run, or, once the run resumes with the
/// person's decision, lets the call through. (The policy decided again on the arguments
/// as they are now: edited ones were put in place by the core and have passed it.)
fn ask_person(request: ToolRequest, reason: &str) -> Result<ToolRequest, BoxError> {
    match request.decision() {
        Some(Decided::Edit { arguments }) => {
            revalidate(&request, arguments, "the person's edit")?;
            Ok(request)
        }
        Some(approved) if approved.allows_call() => Ok(request),
        _ => {
            let payload = json!({
                "kind": "policy",
                "tool": request.name,
                "arguments": request.arguments,
                "reason": reason,
            });
            Err(Interrupt::new(payload).into())
        }
    }
}

impl<P: Policy> Handler for PolicyGate<P> {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("policy_gate")
    }

    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        let request = self.admit(request).await?;
        next.run(request).await
    }
}

impl<P> fmt::Debug for PolicyGate<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyGate")
            .field("policy", &std::any::type_name::<P>())
            .field("approver", &self.approver.is_some())
            .finish()
    }
}
