//! Which calls of a tool need a person's approval, what the person may decide, and what
//! they are shown.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use adk::BoxError;
use adk::interrupt::Decision;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The kinds of [`Decision`] a person can make about a call, for
/// [`ApprovalRule::allow`].
///
/// # Example
///
/// ```
/// use tower_adk::handlers::DecisionKind;
/// use tower_adk::interrupt::Decision;
///
/// assert_eq!(DecisionKind::of(&Decision::Approve), Some(DecisionKind::Approve));
/// assert_eq!(DecisionKind::Edit.as_str(), "edit");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DecisionKind {
    /// [`Decision::Approve`]: run the call as it is.
    Approve,
    /// [`Decision::Edit`]: run it with other arguments.
    Edit,
    /// [`Decision::Reject`]: do not run it; the model reads the reason.
    Reject,
    /// [`Decision::Respond`]: answer in the call's place.
    Respond,
}

impl DecisionKind {
    /// Every kind, in the order above.
    pub const ALL: [DecisionKind; 4] = [
        DecisionKind::Approve,
        DecisionKind::Edit,
        DecisionKind::Reject,
        DecisionKind::Respond,
    ];

    /// The kind of `decision`; `None` for a kind this version does not know.
    pub fn of(decision: &Decision) -> Option<DecisionKind> {
        match decision {
            Decision::Approve => Some(DecisionKind::Approve),
            Decision::Edit { .. } => Some(DecisionKind::Edit),
            Decision::Reject { .. } => Some(DecisionKind::Reject),
            Decision::Respond { .. } => Some(DecisionKind::Respond),
            _ => None,
        }
    }

    /// The name used in payloads: `approve`, `edit`, `reject`, `respond`.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Approve => "approve",
            DecisionKind::Edit => "edit",
            DecisionKind::Reject => "reject",
            DecisionKind::Respond => "respond",
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for DecisionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Decides from a call's arguments and the run's extensions whether it needs approval.
type PredicateFn = dyn Fn(&Value, &http::Extensions) -> Result<bool, BoxError> + Send + Sync;

/// What the person is shown about a call.
#[derive(Clone)]
enum Description {
    /// "`NAME` needs your approval".
    Default,
    Text(Cow<'static, str>),
    Fn(Arc<dyn Fn(&Value) -> String + Send + Sync>),
}

/// How one tool is approved: which of its calls need approval (all, by default, or
/// those a predicate picks), which decisions the person may make (all, by default), and
/// what they are shown. Given to [`HumanApproval::tool`](crate::HumanApproval::tool).
///
/// # Example
///
/// ```
/// use tower_adk::handlers::{ApprovalRule, DecisionKind, HumanApproval};
///
/// // Refunds over 100 need a yes or a no (no edits, no answers in the call's place).
/// let rule = ApprovalRule::new()
///     .when(|args, _extensions| {
///         let amount = args["amount"].as_u64().ok_or("no amount")?;
///         Ok(amount > 100)
///     })
///     .allow([DecisionKind::Approve, DecisionKind::Reject])
///     .describe(|args| format!("Refund {} to order {}?", args["amount"], args["order"]));
/// let approval = HumanApproval::new().tool("refund", rule);
/// # let _ = approval;
/// ```
#[derive(Clone)]
pub struct ApprovalRule {
    predicate: Option<Arc<PredicateFn>>,
    allowed: u8,
    description: Description,
}

impl Default for ApprovalRule {
    fn default() -> Self {
        ApprovalRule {
            predicate: None,
            allowed: DecisionKind::ALL.iter().fold(0, |bits, k| bits | k.bit()),
            description: Description::Default,
        }
    }
}

impl ApprovalRule {
    /// Every call needs approval; every decision is allowed.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{ApprovalRule, DecisionKind};
    ///
    /// assert!(DecisionKind::ALL.iter().all(|k| ApprovalRule::new().allows(*k)));
    /// ```
    pub fn new() -> Self {
        ApprovalRule::default()
    }

    /// Only the calls for which `predicate` returns `Ok(true)` need approval; it gets
    /// the call's arguments and the run's extensions (the caller's role, tenant, ...).
    /// A predicate that fails (`Err`, e.g. on arguments it cannot read) fails closed:
    /// the call needs approval.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::ApprovalRule;
    ///
    /// #[derive(Clone, PartialEq)]
    /// enum Role { Admin, Viewer }
    ///
    /// let rule = ApprovalRule::new().when(|_args, ext| Ok(ext.get::<Role>() != Some(&Role::Admin)));
    /// let mut admin = http::Extensions::new();
    /// admin.insert(Role::Admin);
    /// assert!(!rule.needs_approval(&serde_json::json!({}), &admin));
    /// assert!(rule.needs_approval(&serde_json::json!({}), &http::Extensions::new()));
    /// ```
    pub fn when<F>(mut self, predicate: F) -> Self
    where
        F: Fn(&Value, &http::Extensions) -> Result<bool, BoxError> + Send + Sync + 'static,
    {
        self.predicate = Some(Arc::new(predicate));
        self
    }

    /// Only these decisions are allowed (the default: all). The payload lists them; see
    /// [`HumanApproval`](crate::HumanApproval#decisions-the-rule-does-not-allow) for
    /// what is enforced.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{ApprovalRule, DecisionKind};
    ///
    /// let rule = ApprovalRule::new().allow([DecisionKind::Approve, DecisionKind::Reject]);
    /// assert!(rule.allows(DecisionKind::Reject));
    /// assert!(!rule.allows(DecisionKind::Edit));
    /// ```
    pub fn allow(mut self, kinds: impl IntoIterator<Item = DecisionKind>) -> Self {
        self.allowed = kinds.into_iter().fold(0, |bits, k| bits | k.bit());
        self
    }

    /// Shows the person this text about each call.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::ApprovalRule;
    ///
    /// let rule = ApprovalRule::new().description("Moves money out of the account.");
    /// # let _ = rule;
    /// ```
    pub fn description(mut self, text: impl Into<Cow<'static, str>>) -> Self {
        self.description = Description::Text(text.into());
        self
    }

    /// Shows the person the text `describe` makes of each call's arguments.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::ApprovalRule;
    ///
    /// let rule = ApprovalRule::new().describe(|args| format!("Send {} to {}?", args["amount"], args["to"]));
    /// # let _ = rule;
    /// ```
    pub fn describe<F>(mut self, describe: F) -> Self
    where
        F: Fn(&Value) -> String + Send + Sync + 'static,
    {
        self.description = Description::Fn(Arc::new(describe));
        self
    }

    /// Whether the person may decide `kind`.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{ApprovalRule, DecisionKind};
    ///
    /// assert!(ApprovalRule::new().allows(DecisionKind::Respond));
    /// ```
    pub fn allows(&self, kind: DecisionKind) -> bool {
        self.allowed & kind.bit() != 0
    }

    /// Whether a call with these arguments, in a run with these extensions, needs
    /// approval: always without a predicate; when the predicate says so, or fails.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::ApprovalRule;
    /// use serde_json::json;
    ///
    /// let rule = ApprovalRule::new().when(|args, _| Ok(args["amount"].as_u64().ok_or("no amount")? > 100));
    /// let none = http::Extensions::new();
    /// assert!(!rule.needs_approval(&json!({"amount": 5}), &none));
    /// assert!(rule.needs_approval(&json!({"amount": 500}), &none));
    /// assert!(rule.needs_approval(&json!({"amount": "five"}), &none)); // fails closed
    /// ```
    pub fn needs_approval(&self, arguments: &Value, extensions: &http::Extensions) -> bool {
        match &self.predicate {
            None => true,
            Some(predicate) => predicate(arguments, extensions).unwrap_or(true),
        }
    }

    /// The allowed decisions' names, in [`DecisionKind::ALL`]'s order.
    pub(super) fn allowed_names(&self) -> Vec<&'static str> {
        let allowed = DecisionKind::ALL.into_iter().filter(|k| self.allows(*k));
        allowed.map(DecisionKind::as_str).collect()
    }

    /// What the person is shown about a call of `tool` with `arguments`.
    pub(super) fn describe_call(&self, tool: &str, arguments: &Value) -> String {
        match &self.description {
            Description::Default => format!("`{tool}` needs your approval"),
            Description::Text(text) => text.clone().into_owned(),
            Description::Fn(describe) => describe(arguments),
        }
    }

    /// The payload of a call's interrupt (see [`HumanApproval`](crate::HumanApproval)).
    pub(super) fn payload(&self, tool: &str, arguments: &Value) -> Value {
        json!({
            "kind": "approval",
            "tool": tool,
            "arguments": arguments,
            "description": self.describe_call(tool, arguments),
            "allowed": self.allowed_names(),
        })
    }
}

impl fmt::Debug for ApprovalRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let description = match &self.description {
            Description::Default => "default",
            Description::Text(_) => "text",
            Description::Fn(_) => "closure",
        };
        f.debug_struct("ApprovalRule")
            .field("predicate", &self.predicate.is_some())
            .field("allowed", &self.allowed_names())
            .field("description", &description)
            .finish()
    }
}
