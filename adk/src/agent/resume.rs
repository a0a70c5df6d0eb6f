//! Resuming a run: [`Resume`], a checkpoint read and its decisions checked, which gives
//! the run it takes up and one [`Plan`] for the rest; the plan applied once the run's
//! configuration is made ([`Plan::apply`]), and the turn it leaves to run
//! ([`ResumedTurn`]). Why a resume is refused is a
//! [`ResumeError`](super::error::ResumeError).
//!
//! Where each decision goes:
//!
//! | interrupted by | approve | edit | reject | respond |
//! |---|---|---|---|---|
//! | a tool call (or its wrapper) | the call runs, and reads it ([`ToolRequest::decision`]) | the call runs with the edited arguments, checked against its tool | the call's result is the reason, a failure | the call's result is the answer |
//! | an agent a call ran | the call runs again, and hands the decisions on by their ids there ([`ToolRequest::nested_decisions`]) | | | |
//! | a hook | the hook runs again, and reads it ([`RunContext::decision`], [`ModelRequest::decision`]) | refused | | |
//!
//! [`ToolRequest::decision`]: crate::tool::ToolRequest::decision
//! [`ToolRequest::nested_decisions`]: crate::tool::ToolRequest::nested_decisions
//! [`RunContext::decision`]: crate::context::RunContext::decision
//! [`ModelRequest::decision`]: crate::model::ModelRequest::decision

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;

use super::batch::{self, CallEvent};
use super::checkpoint::{Checkpoint, CheckpointStatus};
use super::error::{AgentError, ResumeError};
use super::executor::{self, BatchRunner};
use super::run::Run;
use crate::auth::{Action, Asker, Decided, Identity, KeptTypes, Principal};
use crate::checkpoint::{CheckpointId, CheckpointStore, StoredRecord};
use crate::config::AgentConfig;
use crate::interrupt::{CallAnswers, Decision, Decisions, HookAnswer, InterruptAddress};
use crate::interrupt::{PendingInterrupt, Resumed};
use crate::message::{Message, Messages, ToolCall};
use crate::model::UsageTotals;
use crate::tool::{ToolError, ToolRecord};

/// A resume, read and checked: the checkpoint it takes the run up from, and the
/// decisions that hold for it.
#[derive(Debug)]
pub(super) struct Resume {
    id: CheckpointId,
    checkpoint: Checkpoint,
    /// Those of the request or, for a run taken over after a crash, those it was
    /// resumed with.
    decisions: Decisions,
    /// Who decided, when the request brought decisions.
    decider: Option<Principal>,
}

impl Resume {
    /// Reads the checkpoint that `id` names, asks whether the caller may take its run
    /// up (its owner resuming it, or someone else deciding on its interrupts), and
    /// checks the decisions against it.
    ///
    /// # Errors
    ///
    /// An unknown, used or ended checkpoint (one the caller may not resume is unknown to
    /// them); a missing decision, or one for no interrupt, or of a kind the interrupt
    /// does not take ([`ResumeError`]); the store's, or a record that cannot be read
    /// ([`CheckpointError`](crate::checkpoint::CheckpointError)).
    pub(super) async fn open(
        store: &dyn CheckpointStore,
        id: CheckpointId,
        decisions: Decisions,
        asker: &Asker<'_>,
    ) -> Result<Resume, AgentError> {
        let unknown = || ResumeError::Unknown(id.clone());
        let head = store.head(&id.thread).await.map_err(checkpoint_error)?;
        let head = head.ok_or_else(unknown)?;
        let newest = head.version;
        let checkpoint = match newest.cmp(&id.version) {
            std::cmp::Ordering::Equal => Checkpoint::load(store, &id.thread, &head).await?,
            // An older record of the same run was used; anything else is unknown.
            std::cmp::Ordering::Greater => {
                let older = store.get(&id.thread, id.version).await;
                let older = older.map_err(checkpoint_error)?.ok_or_else(unknown)?;
                let older = Checkpoint::load(store, &id.thread, &older).await;
                older.map_err(|_| unknown())?
            }
            std::cmp::Ordering::Less => return Err(unknown().into()),
        };
        if checkpoint.run_id != id.run {
            return Err(unknown().into());
        }
        let action = if decisions.is_empty() || *asker.caller == checkpoint.owner {
            Action::Resume
        } else {
            Action::Decide
        };
        let (owner, waiting) = (Some(&checkpoint.owner), &checkpoint.interrupts);
        if !asker.allows(action, &id.thread, owner, waiting).await {
            return Err(unknown().into());
        }
        if newest != id.version && !marks_failure_of(&head, id.version, &checkpoint) {
            return Err(ResumeError::Used(id, newest).into());
        }
        match checkpoint.status {
            CheckpointStatus::Completed => return Err(ResumeError::Ended(id).into()),
            // Taking over a run that was running: the decisions it was resumed with hold.
            CheckpointStatus::Running | CheckpointStatus::Failed => {
                if let Some(extra) = decisions.keys().next() {
                    return Err(ResumeError::UnknownInterrupt(extra.clone()).into());
                }
            }
            _ => check_decisions(&checkpoint.interrupts, &decisions)?,
        }
        let decider = (!decisions.is_empty()).then(|| asker.caller.clone());
        let decisions = if decisions.is_empty() {
            checkpoint.decisions.clone()
        } else {
            decisions
        };
        Ok(Resume {
            id,
            checkpoint,
            decisions,
            decider,
        })
    }

    /// Takes the run up as its requester's, with the extensions of the request that
    /// resumes it (marked [`Resumed`]) but the identity values the agent keeps put back
    /// as the requester's: the resumer is the run's decider. A hook of `agent` that
    /// interrupted gets its decision when it runs again; each decision joins the
    /// thread's audit trail. Gives the run, and what its durable side takes the thread
    /// over with.
    pub(super) fn take_up(
        self,
        agent: &str,
        kept: &KeptTypes,
        mut extensions: http::Extensions,
    ) -> (Run, TakenUp) {
        let Resume {
            id,
            checkpoint,
            decisions,
            decider,
        } = self;
        let mut run = checkpoint.run;
        let mut audit = checkpoint.audit;
        if let Some(by) = decider {
            let decided = |(at, decision): (&String, &Decision)| {
                Decided::now(at.clone(), decision.clone(), by.clone())
            };
            audit.extend(decisions.iter().map(decided));
            let resumer = Identity::new(by).with_extensions(extensions.clone());
            run.context_mut().set_decider(resumer);
        }
        let requester = run.context().requester().cloned();
        kept.restore(requester.as_ref(), &mut extensions);
        let principal = requester.map_or_else(Principal::anonymous, |r| r.principal);
        extensions.insert(principal);
        extensions.insert(Resumed);
        run.context_mut().set_extensions(extensions);
        for interrupt in checkpoint.interrupts.iter().filter(|i| i.call.is_none()) {
            let (Some(decision), Ok(address)) = (decisions.get(&interrupt.id), interrupt.address())
            else {
                continue;
            };
            if let Some((hook, handler)) = address.hook().filter(|_| address.agent() == agent) {
                let handler = handler.to_owned();
                let decision = decision.clone();
                run.context_mut().set_answer(HookAnswer {
                    hook,
                    handler,
                    decision,
                });
            }
        }
        let taken = TakenUp {
            id,
            run_id: checkpoint.run_id.into(),
            base: checkpoint.base,
            plan: Plan {
                answered: checkpoint.interrupts,
                decisions,
                #[cfg(feature = "metrics")]
                waited: checkpoint.status == CheckpointStatus::Interrupted,
            },
            owner: checkpoint.owner,
            audit,
            earlier_usage: checkpoint.earlier_usage,
        };
        (run, taken)
    }
}

/// What the durable side of a run taken up from its checkpoint takes the thread over
/// with (see [`Durable::resumed`](super::durable::Durable::resumed)).
#[derive(Debug)]
pub(super) struct TakenUp {
    /// The checkpoint it resumes.
    pub(super) id: CheckpointId,
    pub(super) run_id: Arc<str>,
    /// The thread's history before the run.
    pub(super) base: Messages,
    pub(super) plan: Plan,
    /// The principal the thread belongs to.
    pub(super) owner: Principal,
    /// The thread's audit trail, with this resume's decisions.
    pub(super) audit: Vec<Decided>,
    /// What the thread's runs before this one used.
    pub(super) earlier_usage: UsageTotals,
}

/// Whether `head` is the failed mark that the run of `running` (at `version`) wrote
/// right on top of it, when it failed or was dropped: taking `running` over goes on over
/// the mark, as when it lands between the resume's read and its claim (see
/// [`Durable::claim`](super::durable::Durable::claim)), whatever order they come in.
fn marks_failure_of(head: &StoredRecord, version: u64, running: &Checkpoint) -> bool {
    if running.status != CheckpointStatus::Running || version.checked_add(1) != Some(head.version) {
        return false;
    }
    let Ok(mark) = Checkpoint::decode(&head.bytes) else {
        return false;
    };
    mark.status == CheckpointStatus::Failed && mark.run_id == running.run_id
}

/// A store's failure while a resume reads its checkpoint.
fn checkpoint_error(error: crate::checkpoint::StoreError) -> AgentError {
    crate::checkpoint::CheckpointError::from(error).into()
}

/// Each interrupt has exactly one decision, of a kind it takes.
fn check_decisions(
    interrupts: &[PendingInterrupt],
    decisions: &Decisions,
) -> Result<(), ResumeError> {
    for interrupt in interrupts {
        let decision = decisions
            .get(&interrupt.id)
            .ok_or_else(|| ResumeError::MissingDecision(interrupt.id.clone()))?;
        if interrupt.call.is_none() && matches!(decision, Decision::Edit { .. }) {
            return Err(ResumeError::WrongDecision {
                id: interrupt.id.clone(),
                decision: decision.kind(),
            });
        }
    }
    match decisions
        .keys()
        .find(|id| interrupts.iter().all(|i| &i.id != *id))
    {
        Some(extra) => Err(ResumeError::UnknownInterrupt(extra.clone())),
        None => Ok(()),
    }
}

/// The decisions of a resumed run and the interrupts they answer: applied once, when
/// its configuration is made ([`Plan::apply`]); and written with each of its checkpoints
/// while it runs, so that a run taken over after a crash applies the same ones.
#[derive(Debug, Default)]
pub(super) struct Plan {
    pub(super) answered: Vec<PendingInterrupt>,
    pub(super) decisions: Decisions,
    /// Whether the interrupts answered waited in the checkpoint resumed (rather than a
    /// running one taken over, whose resume took them up already).
    #[cfg(feature = "metrics")]
    pub(super) waited: bool,
}

impl Plan {
    /// How many interrupts the run takes up that waited until now (0 without the
    /// `metrics` feature, which is all that counts them).
    pub(super) fn waited(&self) -> usize {
        #[cfg(feature = "metrics")]
        return if self.waited { self.answered.len() } else { 0 };
        #[cfg(not(feature = "metrics"))]
        0
    }

    /// Applies the decisions to the run of `agent`, with the configuration its
    /// `before_agent` hooks made: edited arguments take the place of the model's in its
    /// last reply (checked against the run's tools); and the calls of the turn that
    /// waits, if one does, are sorted: those rejected or answered in place get their
    /// records, the others run with their decisions.
    ///
    /// # Errors
    ///
    /// [`ResumeError::InvalidEdit`]: edited arguments that are not an object, that the
    /// tool refuses, or for a call that is not in the last reply.
    pub(super) fn apply(
        &self,
        agent: &str,
        config: &AgentConfig,
        run: &mut Run,
    ) -> Result<Option<ResumedTurn>, ResumeError> {
        self.edit(agent, config, run)?;
        if run.turn().is_none() {
            return Ok(None);
        }
        let answers = self.call_answers(agent);
        let reply = run.history().messages.last();
        let calls = reply.map_or(&[][..], Message::tool_calls);
        let mut turn = ResumedTurn {
            answered: Vec::new(),
            pending: Vec::new(),
            answers,
        };
        for at in run.unfinished_calls() {
            let Some(call) = calls.get(at) else { continue };
            match turn.answers.of(&call.id) {
                Some(Decision::Reject { reason }) => {
                    let record = ToolRecord::failure(call, ToolError::rejected(reason));
                    turn.answered.push((at, record));
                }
                Some(Decision::Respond { answer }) => {
                    let record = ToolRecord::success(call, answer_text(answer));
                    turn.answered.push((at, record));
                }
                _ => turn.pending.push((at, call.clone())),
            }
        }
        Ok(Some(turn))
    }

    /// The decisions of the calls of the resumed turn, by call id; and those of the
    /// interrupts that came through a call from an agent it ran, by call id and their
    /// ids there (such a call itself is approved: it runs again, to pass them on).
    fn call_answers(&self, agent: &str) -> CallAnswers {
        let (mut own, mut nested) = (HashMap::new(), HashMap::<String, Decisions>::new());
        for interrupt in &self.answered {
            let (Some(call), Some(decision)) = (&interrupt.call, self.decisions.get(&interrupt.id))
            else {
                continue;
            };
            match own_address(interrupt, agent)
                .as_ref()
                .and_then(InterruptAddress::nested)
            {
                Some(inner) => {
                    own.insert(call.id.to_string(), Decision::Approve);
                    let of_call = nested.entry(call.id.to_string()).or_default();
                    of_call.insert(inner.to_owned(), decision.clone());
                }
                None => {
                    own.insert(call.id.to_string(), decision.clone());
                }
            }
        }
        CallAnswers::new(own, nested)
    }

    /// Checks the edited arguments of the resumed calls against their tools, and puts
    /// them in place of the model's in the run's last reply.
    fn edit(&self, agent: &str, config: &AgentConfig, run: &mut Run) -> Result<(), ResumeError> {
        // An edit of a nested interrupt is the nested agent's to apply.
        let own = self
            .answered
            .iter()
            .filter(|i| own_address(i, agent).is_some_and(|address| address.nested().is_none()));
        for interrupt in own {
            let (Some(call), Some(Decision::Edit { arguments })) =
                (&interrupt.call, self.decisions.get(&interrupt.id))
            else {
                continue;
            };
            let invalid = |reason: String| ResumeError::InvalidEdit {
                id: interrupt.id.clone(),
                reason,
            };
            if !arguments.is_object() {
                return Err(invalid("the arguments are not a JSON object".to_owned()));
            }
            #[cfg(feature = "validation")]
            if let Some(tool) = config.tool(&call.name) {
                tool.validate(arguments)
                    .map_err(|e| invalid(e.message().to_owned()))?;
            }
            #[cfg(not(feature = "validation"))]
            let _ = config;
            let messages = &mut run.history_mut().messages;
            let reply = messages.last_mut().and_then(Message::tool_calls_mut);
            let Some(edited) = reply.and_then(|calls| calls.iter_mut().find(|c| c.id == call.id))
            else {
                return Err(invalid(
                    "the call is not in the run's last reply".to_owned(),
                ));
            };
            edited.arguments = arguments.to_string().into();
        }
        Ok(())
    }
}

/// The address of a call's interrupt, when it is one of `agent`'s calls.
fn own_address(interrupt: &PendingInterrupt, agent: &str) -> Option<InterruptAddress> {
    let address = interrupt.address().ok()?;
    let call = interrupt.call.as_ref()?;
    (address.agent() == agent && address.call_id() == Some(&*call.id)).then_some(address)
}

/// The text of an answer given in a call's place: a string as it is, anything else as
/// JSON.
fn answer_text(answer: &serde_json::Value) -> String {
    match answer {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The turn a resumed run takes up: the calls the decisions answered in place, with
/// their records; the calls that run, with their places in the turn; and the decisions
/// those calls read.
#[derive(Debug)]
pub(super) struct ResumedTurn {
    answered: Vec<(usize, ToolRecord)>,
    pending: Vec<(usize, ToolCall)>,
    answers: CallAnswers,
}

impl ResumedTurn {
    /// Runs the turn's pending calls, with their decisions in their extensions, through
    /// the run's executor (or the default batch); the records of the calls answered in
    /// place come first.
    pub(super) fn run(self, mut runner: BatchRunner) -> BoxStream<'static, CallEvent> {
        runner.scope.extensions_mut().insert(self.answers);
        let events = match runner.config.executor().cloned() {
            Some(custom) => executor::run_custom(&custom, self.pending, runner),
            None => batch::run_batch(
                &runner.chain,
                &runner.config,
                &runner.scope,
                self.pending.into_iter(),
                runner.options,
            ),
        };
        if self.answered.is_empty() {
            return events;
        }
        let answered = self
            .answered
            .into_iter()
            .map(|(at, record)| CallEvent::Done(at, Arc::new(record)));
        futures::stream::iter(answered).chain(events).boxed()
    }
}
