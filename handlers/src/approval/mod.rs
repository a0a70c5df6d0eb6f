//! Human approval of tool calls: the run stops at a call that needs a person's yes, and
//! goes on with their decision.

mod always;
mod rule;
mod turn;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use adk::interrupt::{Decision, Interrupt};
use adk::{AgentConfig, BoxError, Handler, History, RunContext, ToolCallNext, ToolError};
use adk::{ToolOutput, ToolRequest, ToolResponse};
use serde_json::Value;

pub use self::always::AlwaysApprove;
use self::always::Approved;
pub use self::rule::{ApprovalRule, DecisionKind};
use self::turn::Asked;
use crate::revalidate::revalidate;

/// A handler that stops the run at the tool calls that need a person's approval, and
/// runs them (or not) as the person decides: LangChain's `HumanInTheLoopMiddleware`, on
/// the core's [interrupts](adk::interrupt).
///
/// Each tool that needs approval gets an [`ApprovalRule`]: which of its calls need it
/// (all, or those a predicate over the arguments and the run's extensions picks; a
/// predicate that fails asks), which decisions the person may make, and what they are
/// shown. A call of another tool, or one its rule lets through, runs without asking.
///
/// The run ends with [`RunStatus::Interrupted`](adk::RunStatus::Interrupted); the
/// person's decisions come back with [`AgentRequest::resume`](adk::AgentRequest::resume).
/// Give the resume the same handler: it is the one that applies the decisions.
///
/// # Per call (the default)
///
/// Each call that needs approval interrupts on its own (in `wrap_tool`), with the id
/// `agent:NAME/tool:CALL_ID` and this payload:
///
/// ```json
/// {"kind": "approval", "tool": "refund", "arguments": {"order": 7, "amount": 250},
///  "description": "Refund 250 on order 7?", "allowed": ["approve", "edit", "reject", "respond"]}
/// ```
///
/// The core applies the decision: an approved call runs; an edited one runs with the new
/// arguments, which the core checks against the tool's schema when the run resumes
/// (invalid ones refuse the resume with
/// [`ResumeError::InvalidEdit`](adk::agent::ResumeError::InvalidEdit), the
/// checkpoint stays usable); a rejected call never runs and the model reads the reason;
/// a response is the call's result.
///
/// # Per turn
///
/// With [`per_turn`](HumanApproval::per_turn), the calls of a turn that need approval
/// are asked about at once (in `after_model`): one interrupt, with the id
/// `agent:NAME/after_model:human_approval` and the payload
///
/// ```json
/// {"kind": "approvals", "calls": [
///   {"call_id": "c1", "tool": "refund", "arguments": {...}, "description": "...", "allowed": [...]},
///   {"call_id": "c3", "tool": "close_account", "arguments": {...}, "description": "...", "allowed": [...]}
/// ]}
/// ```
///
/// The person answers with one decision for the whole turn: [`Decision::Approve`] or
/// [`Decision::Reject`] answer every call alike, and [`Decision::Respond`] carries a
/// decision per call, a JSON object from call id to a decision in its serde form:
///
/// ```json
/// {"type": "respond", "answer": {
///   "c1": {"type": "edit", "arguments": {"order": 7, "amount": 100}},
///   "c3": {"type": "reject", "reason": "accounts are closed by the back office"}
/// }}
/// ```
///
/// Each call's wrapper then applies its decision: approve runs it; edit runs it with the
/// new arguments (they replace the model's in the history, and are checked against the
/// tool's schema again: invalid ones are the model's
/// [`InvalidArguments`](adk::ToolErrorKind::InvalidArguments) error, the tool not
/// called); reject gives the model a [`Denied`](adk::ToolErrorKind::Denied) error with
/// the reason; respond makes the answer the call's result. An answer that is not one of
/// these, or lacks a call's decision, is not taken: the person is asked again, with an
/// `"error"` in the payload saying why. Nothing runs meanwhile.
///
/// # Always
///
/// A person can approve a tool for the rest of the thread: its calls no longer ask,
/// on this run and on the next runs of its [thread](adk::AgentRequest::on_thread) (the
/// tools are kept in the thread's values, [`RunContext::thread_values`]). Only tools
/// whose rule allows `approve` can be approved for good. In the per-turn mode a call's
/// decision says so with `"always": true` next to an approve or an edit
/// (`{"type": "approve", "always": true}`); in the per-call mode, where a call's
/// [`Decision`] carries nothing more, the resume request carries an [`AlwaysApprove`]
/// extension.
///
/// # Decisions the rule does not allow
///
/// The payload lists the allowed decisions, for the person's client to offer. What the
/// handler enforces: an approve or an edit that the rule does not allow does not run
/// the call (the model reads a `Denied` error saying so). In the per-turn mode a reject
/// or a respond that is not allowed is refused the same way. In the per-call mode a
/// reject or a respond never reaches the handler (the core answers the call itself), so
/// a rule cannot refuse them there: both keep the call from running.
///
/// # Order
///
/// Register it before (outside) the wrappers it guards: they see a call only once it is
/// approved. One `HumanApproval` per run: a second one's per-turn interrupt would have
/// the same id.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, RunStatus};
/// use tower_adk::handlers::{ApprovalRule, HumanApproval};
/// use tower_adk::interrupt::Decision;
/// use tower_adk::testing::{text_tool, ScriptedModel, Turn};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     Turn::call("c1", "refund", json!({"order": 7, "amount": 250})),
///     Turn::text("Refunded."),
/// ]);
/// let agent = Agent::builder(model).name("support").tool(text_tool("refund", "refunded")).build()?;
/// let approval = HumanApproval::new().tool(
///     "refund",
///     ApprovalRule::new().describe(|args| format!("Refund {} on order {}?", args["amount"], args["order"])),
/// );
///
/// let stopped = agent.run(AgentRequest::user("refund order 7").with_handler(approval.clone())).await?;
/// assert_eq!(stopped.status, RunStatus::Interrupted);
/// let asked = &stopped.interrupts[0];
/// assert_eq!(asked.id, "agent:support/tool:c1");
/// assert_eq!(asked.payload["kind"], "approval");
/// assert_eq!(asked.payload["description"], "Refund 250 on order 7?");
///
/// let checkpoint = stopped.checkpoint.clone().unwrap();
/// let resume = AgentRequest::resume(checkpoint, [(asked.id.clone(), Decision::Approve)]);
/// let done = agent.run(resume.with_handler(approval)).await?;
/// assert_eq!(done.tool_record("c1").unwrap().content, "refunded");
/// assert_eq!(done.final_message.content(), "Refunded.");
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Default)]
pub struct HumanApproval {
    rules: Arc<BTreeMap<String, ApprovalRule>>,
    per_turn: bool,
}

impl HumanApproval {
    /// A handler that asks about nothing yet; add tools with [`tool`](Self::tool) or
    /// [`when`](Self::when).
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{ApprovalRule, HumanApproval};
    ///
    /// let approval = HumanApproval::new()
    ///     .tool("refund", ApprovalRule::default())
    ///     .tool("close_account", ApprovalRule::new().description("Closes the account for good."));
    /// # let _ = approval;
    /// ```
    pub fn new() -> Self {
        HumanApproval::default()
    }

    /// Calls of `tool` need approval as `rule` says (replacing the tool's rule, if any).
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{ApprovalRule, DecisionKind, HumanApproval};
    ///
    /// let approval = HumanApproval::new()
    ///     .tool("delete", ApprovalRule::new().allow([DecisionKind::Approve, DecisionKind::Reject]));
    /// # let _ = approval;
    /// ```
    pub fn tool(mut self, tool: impl Into<String>, rule: ApprovalRule) -> Self {
        Arc::make_mut(&mut self.rules).insert(tool.into(), rule);
        self
    }

    /// Calls of `tool` need approval when `predicate` says so (or fails), with every
    /// decision allowed: [`ApprovalRule::when`] on the default rule.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::HumanApproval;
    ///
    /// #[derive(Clone, PartialEq)]
    /// enum Role { Admin, Viewer }
    ///
    /// // Admins transfer without asking; anyone else's transfers wait for a person.
    /// let approval = HumanApproval::new()
    ///     .when("transfer", |_args, ext| Ok(ext.get::<Role>() != Some(&Role::Admin)));
    /// # let _ = approval;
    /// ```
    pub fn when<F>(self, tool: impl Into<String>, predicate: F) -> Self
    where
        F: Fn(&Value, &http::Extensions) -> Result<bool, BoxError> + Send + Sync + 'static,
    {
        self.tool(tool, ApprovalRule::new().when(predicate))
    }

    /// Asks about all the calls of a turn that need approval in one interrupt; see
    /// [Per turn](HumanApproval#per-turn).
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{ApprovalRule, HumanApproval};
    ///
    /// let approval = HumanApproval::new().tool("refund", ApprovalRule::new()).per_turn();
    /// # let _ = approval;
    /// ```
    pub fn per_turn(mut self) -> Self {
        self.per_turn = true;
        self
    }

    /// The calls of the model's last reply that need approval.
    fn asked<'a>(&'a self, cx: &RunContext, history: &'a History) -> Vec<Asked<'a>> {
        let calls = history.messages.last().map_or(&[][..], |m| m.tool_calls());
        let asked = calls.iter().filter_map(|call| {
            let rule = self.rules.get(call.name.as_str())?;
            // Arguments that are not JSON ask too (the core refuses them anyway).
            let arguments = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
            let needed = !Approved::holds(cx.extensions(), &call.name)
                && rule.needs_approval(&arguments, cx.extensions());
            needed.then_some(Asked {
                call,
                rule,
                arguments,
            })
        });
        asked.collect()
    }

    /// The per-turn mode's `after_model`: asks about the turn's calls, or takes the
    /// answer, keeping each call's decision for its wrapper.
    fn ask_for_turn(&self, cx: &mut RunContext, history: &mut History) -> Result<(), BoxError> {
        let asked = self.asked(cx, history);
        if asked.is_empty() {
            return Ok(());
        }
        let Some(decision) = cx.decision() else {
            return Err(Interrupt::new(turn::payload(&asked, None)).into());
        };
        let answer = match turn::read(decision, &asked) {
            Ok(answer) => answer,
            Err(error) => return Err(Interrupt::new(turn::payload(&asked, Some(&error))).into()),
        };
        let edits: Vec<(adk::SmolStr, adk::SmolStr)> = asked
            .iter()
            .filter(|a| a.rule.allows(DecisionKind::Edit))
            .filter_map(|a| match answer.decisions.get(a.call.id.as_str()) {
                Some(Decision::Edit { arguments }) => {
                    Some((a.call.id.clone(), arguments.to_string().into()))
                }
                _ => None,
            })
            .collect();
        drop(asked);
        // The history shows the arguments the calls run with.
        let calls = history.messages.last_mut().and_then(|m| m.tool_calls_mut());
        for call in calls.into_iter().flatten() {
            if let Some((_, arguments)) = edits.iter().find(|(id, _)| *id == call.id) {
                call.arguments = arguments.clone();
            }
        }
        always::remember(cx, answer.always)?;
        turn::store(cx.locals_mut(), answer.decisions)?;
        Ok(())
    }

    /// Runs a call as the person decided about it in the turn's answer.
    async fn apply(
        &self,
        rule: &ApprovalRule,
        decision: Decision,
        mut request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        check_allowed(rule, &decision, &request.name)?;
        match decision {
            Decision::Approve => next.run(request).await,
            Decision::Edit { arguments } => {
                revalidate(&request, &arguments, "the person's edit")?;
                request.arguments = arguments;
                next.run(request).await
            }
            Decision::Reject { reason } => Err(ToolError::rejected(&reason).into()),
            Decision::Respond { answer } => Ok(ToolOutput::new(answer_text(answer)).into()),
            other => Err(ToolError::denied(format!(
                "the decision `{}` is not known here; the call was not run",
                other.kind()
            ))
            .into()),
        }
    }
}

/// Refuses a decision that the call's rule does not allow.
fn check_allowed(rule: &ApprovalRule, decision: &Decision, tool: &str) -> Result<(), ToolError> {
    match DecisionKind::of(decision) {
        Some(kind) if rule.allows(kind) => Ok(()),
        _ => Err(ToolError::denied(format!(
            "a person answered `{}`, which is not allowed for `{tool}`; the call was not run",
            decision.kind()
        ))),
    }
}

/// The text of an answer given in a call's place: a string as it is, anything else as
/// JSON (as the core answers a per-call response).
fn answer_text(answer: Value) -> String {
    match answer {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

impl Handler for HumanApproval {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("human_approval")
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        let granted: Vec<String> = match cx.extensions().get::<AlwaysApprove>() {
            Some(grant) => grant
                .iter()
                .filter(|tool| {
                    let rule = self.rules.get(tool.as_str());
                    rule.is_some_and(|r| r.allows(DecisionKind::Approve))
                })
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        always::remember(cx, granted)?;
        Ok(config)
    }

    async fn after_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        if self.per_turn {
            self.ask_for_turn(cx, history)?;
        }
        Ok(())
    }

    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        let Some(rule) = self.rules.get(request.name.as_str()) else {
            return next.run(request).await;
        };
        if let Some(decision) = turn::take(&request)? {
            return self.apply(rule, decision, request, next).await;
        }
        if let Some(decision) = request.decision() {
            // Resumed from this call's interrupt: only approvals and edits come here.
            check_allowed(rule, decision, &request.name)?;
            return next.run(request).await;
        }
        let needed = !Approved::holds(request.extensions(), &request.name)
            && rule.needs_approval(&request.arguments, request.extensions());
        if !needed {
            return next.run(request).await;
        }
        // A call the turn's interrupt did not ask about (per turn) asks on its own.
        Err(Interrupt::new(rule.payload(&request.name, &request.arguments)).into())
    }
}

impl fmt::Debug for HumanApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HumanApproval")
            .field("rules", &self.rules)
            .field("per_turn", &self.per_turn)
            .finish()
    }
}
