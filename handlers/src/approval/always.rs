//! "Always approve this tool": what a person granted for the rest of the thread.

use std::collections::BTreeSet;
use std::sync::Arc;

use adk::{BoxError, RunContext};

/// The key of the approved tools in the thread's values
/// ([`RunContext::thread_values`]).
pub(super) const KEY: &str = "human_approval.always";

/// Approves these tools for the rest of the run's thread: put in the extensions of a
/// request (typically the resume that approves a call of the tool), it adds them to
/// the tools [`HumanApproval`](crate::HumanApproval) no longer asks about on this
/// thread. Only tools whose rule allows [`approve`](crate::DecisionKind::Approve) are
/// added.
///
/// This is the per-call mode's form of "always": a [`Decision`](adk::interrupt::Decision)
/// of a call carries no more than approve or edit. In the per-turn mode the person's
/// answer can say it itself (see [`HumanApproval`](crate::HumanApproval#always)).
///
/// # Example
///
/// ```
/// use tower_adk::AgentRequest;
/// use tower_adk::checkpoint::CheckpointId;
/// use tower_adk::handlers::AlwaysApprove;
/// use tower_adk::interrupt::Decision;
///
/// # fn resume(checkpoint: CheckpointId, id: String) -> AgentRequest {
/// AgentRequest::resume(checkpoint, [(id, Decision::Approve)])
///     .with_extension(AlwaysApprove::tools(["refund"]))
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlwaysApprove(BTreeSet<String>);

impl AlwaysApprove {
    /// Approves these tools for good.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::AlwaysApprove;
    ///
    /// assert!(AlwaysApprove::tools(["refund"]).contains("refund"));
    /// ```
    pub fn tools<I, S>(tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        AlwaysApprove(tools.into_iter().map(Into::into).collect())
    }

    /// Whether `tool` is among them.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::AlwaysApprove;
    ///
    /// assert!(!AlwaysApprove::default().contains("refund"));
    /// ```
    pub fn contains(&self, tool: &str) -> bool {
        self.0.contains(tool)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }
}

/// The tools approved for good, as the hooks left them: in the run's extensions, where
/// the tool wrappers read them.
#[derive(Debug, Clone, Default)]
pub(super) struct Approved(Arc<BTreeSet<String>>);

impl Approved {
    /// Whether the run's extensions say `tool` is approved for good.
    pub(super) fn holds(extensions: &http::Extensions, tool: &str) -> bool {
        extensions
            .get::<Approved>()
            .is_some_and(|approved| approved.0.contains(tool))
    }
}

/// Reads the tools approved for good on the thread, adds `more`, writes them back if
/// they changed, and hands them to the wrappers.
///
/// # Errors
///
/// When the thread's values hold something else at the key.
pub(super) fn remember<I>(cx: &mut RunContext, more: I) -> Result<(), BoxError>
where
    I: IntoIterator<Item = String>,
{
    let mut tools: BTreeSet<String> = cx.thread_values().get(KEY)?.unwrap_or_default();
    let known = tools.len();
    tools.extend(more);
    if tools.len() != known {
        cx.thread_values_mut().insert(KEY, &tools)?;
    }
    cx.extensions_mut().insert(Approved(Arc::new(tools)));
    Ok(())
}
