//! The ReAct loop of one run: step functions that advance a [`Run`] (which a thin
//! adapter, [`AgentRun::start`](super::AgentRun), turns into the run's events).
//!
//! Each step does one thing (call the model, read its reply, take the model's answer,
//! run the tools, read their results, finish) and says what it found; the compiled
//! variant of the loop ([`CompiledLoop`]) says where that leads. Between two steps the
//! run is its [`Run`], plain data; what is in flight (a streaming reply, the turn's
//! calls) is held beside it, in [`Work`]. Where a run comes from and where its
//! checkpoints go is its durable side ([`Durable`]); how a resume's decisions apply is
//! its plan ([`resume`](super::resume)).

mod reply;
mod turn;

use std::sync::Arc;

use futures::stream::BoxStream;

use super::AgentInner;
use super::batch::CallEvent;
use super::compile::{CompiledLoop, LoopKey};
use super::durable::Durable;
use super::error::AgentError;
use super::event::AgentEvent;
use super::interrupts;
use super::request::{AgentRequest, Origin, principal_of};
use super::result::AgentResult;
use super::resume::{Resume, ResumedTurn};
use super::run::{Run, RunStep};
use super::shared::RunShared;
use super::thread::check_thread;
use crate::auth::Asker;
use crate::config::AgentConfig;
use crate::context::Scope;
use crate::handler::{Chain, Hook};
use crate::message::Messages;
use crate::telemetry::{self, metrics};
use crate::tool::{Tool, ToolInfo, ToolRecord};

/// A run in progress: its data, and what it runs with.
pub(super) struct Runner {
    run: Run,
    work: Work,
    /// The text of a filler, which comes after the reply's message event.
    filler: Option<String>,
    /// An event that comes after the one just passed on: a whole reply's usage after
    /// its text. (Boxed, as it is rare: the run's future holds the room.)
    queued: Option<Box<AgentEvent>>,
    agent: Arc<AgentInner>,
    chain: Chain,
    /// The run's configuration, as `before_agent` made it.
    config: AgentConfig,
    tool_infos: Arc<[Arc<ToolInfo>]>,
    graph: CompiledLoop,
    audience: RunShared,
    /// The model calls of the run before this runner took it up.
    model_calls: usize,
    /// The run's thread and checkpoints, once it has any.
    durable: Option<Box<Durable>>,
    /// The slots of the last turn's calls, emptied: the next turn's.
    spare_slots: Vec<Option<Arc<ToolRecord>>>,
}

/// What is in flight beside the run's data.
enum Work {
    /// Not started: the run's origin (a thread, a checkpoint) is read, `before_agent`
    /// makes its configuration.
    Unstarted(Option<Box<Origin>>),
    /// Nothing: the run's step says what comes next.
    Idle,
    /// The model's reply is streaming in. (Boxed: whole replies, the most common, do
    /// not pay for its room in every run.)
    Reply(Box<reply::Streaming>),
    /// The turn a resumed run takes up: its calls run next, as the decisions say.
    Resumed(Box<ResumedTurn>),
    /// The turn's calls are running.
    Tools(BoxStream<'static, CallEvent>),
}

impl Runner {
    /// A new run of the agent for the request: it starts when it is first advanced.
    pub(super) fn for_request(agent: Arc<AgentInner>, request: AgentRequest) -> Self {
        let audience = RunShared::new(agent.model.clone());
        let (input, extensions, handlers, origin) = request.into_parts();
        let requester = agent
            .kept
            .requester(&principal_of(&extensions), &extensions);
        let mut run = Run::new(input, extensions);
        run.context_mut().set_requester(requester);
        let mut runner = Runner::new(agent, Chain::new(handlers), run, audience);
        runner.work = Work::Unstarted(origin);
        runner
    }

    /// What the run shares with its caller and its calls.
    pub(super) fn audience(&self) -> &RunShared {
        &self.audience
    }

    /// Whether the turn's calls are running: the adapter polls them directly (see
    /// [`Runner::poll_calls`]).
    pub(super) fn running_tools(&self) -> bool {
        matches!(self.work, Work::Tools(_))
    }

    /// A run about to start (or be taken up), with the agent's own configuration until
    /// `before_agent` has made the run's.
    fn new(agent: Arc<AgentInner>, chain: Chain, run: Run, audience: RunShared) -> Self {
        Runner {
            model_calls: run.model_calls(),
            run,
            work: Work::Unstarted(None),
            filler: None,
            queued: None,
            chain,
            config: agent.config.clone(),
            tool_infos: Arc::clone(&agent.tool_infos),
            graph: CompiledLoop::UNSTARTED,
            agent,
            audience,
            durable: None,
            spare_slots: Vec::new(),
        }
    }

    /// Starts or takes up the run: reads its checkpoint or its thread, `before_agent`
    /// makes its configuration, a resume's decisions apply, a new run's history gets the
    /// instruction; a run with a thread claims it.
    async fn start(&mut self) -> Result<(), AgentError> {
        let Work::Unstarted(origin) = std::mem::replace(&mut self.work, Work::Idle) else {
            return Ok(());
        };
        if let Some(origin) = origin {
            // Boxed: the runs that have an origin pay for the room its future takes.
            Box::pin(self.open(*origin)).await?;
        } else if self.agent.durable {
            self.durable_mut();
        }
        let agent = &self.agent;
        let mut config = agent.config.clone();
        if self.chain.calls(Hook::BeforeAgent) {
            let cx = self.run.context_mut();
            config = self.chain.before_agent(cx, config).await?;
        }
        if !config.shares_tools_with(&agent.config) {
            config.check_tools().map_err(AgentError::Config)?;
            self.tool_infos = config.tools().iter().map(Tool::shared_info).collect();
        }
        self.graph = *agent.variants.get(LoopKey::of(&config));
        if let Some(durable) = &self.durable {
            let resumed = durable
                .resumed_with()
                .apply(&agent.name, &config, &mut self.run)?;
            if let Some(turn) = resumed {
                self.work = Work::Resumed(Box::new(turn));
            }
        }
        if self.run.step() == RunStep::Start {
            let base = self.durable.as_ref().map(|d| d.base());
            self.run
                .begin(base, config.instruction(), self.graph.entry());
        }
        self.config = config;
        if let Some(durable) = &mut self.durable {
            durable.claim(&self.run).await?;
            metrics::interrupts_taken_up(&self.agent.name, durable.resumed_with().waited());
        }
        Ok(())
    }

    /// Reads where the run comes from: the checkpoint it resumes, or its thread.
    #[cold]
    async fn open(&mut self, origin: Origin) -> Result<(), AgentError> {
        let store = Arc::clone(&self.agent.store);
        let extensions = self.run.context().shared_extensions();
        let caller = principal_of(&extensions);
        let asker = Asker {
            authorize: &self.agent.authorize,
            caller: &caller,
            identity: &extensions,
            agent: &self.agent.name,
        };
        if let Some((id, decisions)) = origin.resume {
            check_thread(&id.thread)?;
            telemetry::record_thread(&id.thread);
            telemetry::decided(&decisions);
            let resume = Resume::open(&*store, id, decisions, &asker).await?;
            let extensions = Arc::unwrap_or_clone(extensions);
            let (run, taken) = resume.take_up(&self.agent.name, &self.agent.kept, extensions);
            self.run = run;
            self.model_calls = self.run.model_calls();
            self.audience.set_run_id(Arc::clone(&taken.run_id));
            let lease = self.agent.claim_lease;
            self.durable = Some(Box::new(Durable::resumed(store, lease, taken)));
        } else if let Some(thread) = origin.thread {
            check_thread(&thread)?;
            let run_id = self.audience.run_id();
            let lease = self.agent.claim_lease;
            let opened = Durable::on_thread(store, lease, thread, run_id, &asker).await;
            let (durable, values) = opened?;
            *self.run.context_mut().thread_values_mut() = values;
            self.durable = Some(Box::new(durable));
        }
        Ok(())
    }

    /// The run's durable side, made now (on a thread of its own) if it has none.
    #[cold]
    fn durable_mut(&mut self) -> &mut Durable {
        let (store, audience) = (&self.agent.store, &self.audience);
        let owner = self.run.context().principal();
        let lease = self.agent.claim_lease;
        self.durable.get_or_insert_with(|| {
            let run_id = audience.run_id();
            let thread = run_id.to_string();
            let (store, owner) = (Arc::clone(store), owner.clone());
            let base = Messages::new();
            Box::new(Durable::new(
                store, lease, thread, owner, None, run_id, base,
            ))
        })
    }

    /// Whether the run stopped at an interrupt.
    fn interrupted(&self) -> bool {
        self.durable.as_ref().is_some_and(|d| d.is_interrupted())
    }

    /// Whether all that is left is to finish.
    pub(super) fn finishing(&self) -> bool {
        matches!(self.work, Work::Idle)
            && self.filler.is_none()
            && self.queued.is_none()
            && (matches!(self.run.step(), RunStep::Finish | RunStep::Done) || self.interrupted())
    }

    /// Takes one step, or reads one event of a step in flight; returns the event to
    /// pass on, if there is one.
    pub(super) async fn advance(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        if let Some(text) = self.filler.take() {
            return Ok(Some(AgentEvent::Filler(text)));
        }
        if let Some(event) = self.queued.take() {
            return Ok(Some(*event));
        }
        if let Some(durable) = &mut self.durable {
            durable.save_if_due(&self.run).await?;
        }
        loop {
            let event = match self.work {
                Work::Unstarted(_) => self.start().await.map(|()| None),
                Work::Reply(_) => self.read_reply().await,
                Work::Resumed(_) => Ok(self.run_resumed()),
                Work::Tools(_) => self.read_tools().await,
                Work::Idle => match self.run.step() {
                    RunStep::Start | RunStep::CallModel => self.call_model().await,
                    RunStep::AfterModel => self.take_reply().await,
                    RunStep::RunTools => Ok(self.run_tools()),
                    RunStep::Finish | RunStep::Done => Ok(None),
                },
            }?;
            if event.is_some() || !self.goes_on_quietly() {
                return Ok(event);
            }
        }
    }

    /// Whether the next step follows at once, in the same call of [`Runner::advance`]:
    /// when no one reads the events and no checkpoint can fall due in between, a step
    /// that gave no event is followed by the model's reply being taken, or the calls
    /// being started, without a round trip through the adapter.
    fn goes_on_quietly(&self) -> bool {
        matches!(self.work, Work::Idle)
            && matches!(self.run.step(), RunStep::AfterModel | RunStep::RunTools)
            && self.durable.is_none()
            && !self.audience.listening()
    }

    /// Turns an error that is a hook's interrupt into the run's interrupt: the step that
    /// was interrupted runs again when the run resumes. Other errors are given back.
    #[cold]
    pub(super) fn interrupted_by(
        &mut self,
        error: AgentError,
    ) -> Result<Option<AgentEvent>, AgentError> {
        let Some(pending) = interrupts::of_hook(&self.agent.name, &error) else {
            return Err(error);
        };
        // The model call runs again when the run resumes, as the same iteration.
        if self.run.step() == RunStep::CallModel {
            let iteration = self.run.context().iteration().saturating_sub(1);
            self.run.context_mut().set_iteration(iteration);
        }
        self.work = Work::Idle;
        let event = self
            .audience
            .listening()
            .then(|| AgentEvent::Interrupt(Box::new(pending.clone())));
        telemetry::interrupted(std::slice::from_ref(&pending));
        self.durable_mut().raise([pending]);
        Ok(event)
    }

    /// Writes what a failed run leaves to its thread (see [`Durable::fail`]), and gives
    /// the error back.
    #[cold]
    pub(super) async fn fail(&mut self, error: AgentError) -> AgentError {
        telemetry::record_error(error.code());
        if let Some(durable) = &mut self.durable {
            durable.fail(&self.run, &error).await;
        }
        error
    }

    /// Ends the run: `after_agent`, then the result; or, at an interrupt, its
    /// checkpoint and the interrupts that wait.
    pub(super) async fn finish(&mut self) -> Result<Box<AgentResult>, AgentError> {
        if self.interrupted() {
            return self.stop_at_interrupts().await;
        }
        let (cx, history) = self.run.parts();
        if self.chain.calls(Hook::AfterAgent) {
            self.chain.after_agent(cx, history).await?;
        }
        self.run.set_step(RunStep::Done);
        let Some(durable) = &mut self.durable else {
            let result = Box::new(self.run.take_result());
            return Ok(self.priced(result));
        };
        // The thread goes on from this run's history; the record keeps no second copy.
        let instructed = !self.config.instruction().is_empty();
        let checkpoint = durable.complete(&mut self.run, instructed).await?;
        let result = Box::new(self.run.take_result());
        let mut result = self.priced(result);
        result.checkpoint = Some(checkpoint);
        Ok(result)
    }

    /// The result, with its cost if the agent has prices. (Boxed where it is made: a
    /// result moved into its box is a copy of some 400 bytes.)
    fn priced(&self, mut result: Box<AgentResult>) -> Box<AgentResult> {
        if let Some(prices) = &self.agent.prices {
            result.cost = Some(result.usage.cost(prices));
        }
        result
    }

    /// Writes the interrupted run's checkpoint; the result names it and the interrupts.
    async fn stop_at_interrupts(&mut self) -> Result<Box<AgentResult>, AgentError> {
        let durable = self.durable.as_mut().ok_or(AgentError::Incomplete)?;
        let (checkpoint, interrupts) = durable.stop(&self.run).await?;
        let mut result = self.priced(Box::new(self.run.interrupted_result()));
        result.interrupts = interrupts;
        result.checkpoint = Some(checkpoint);
        Ok(result)
    }

    /// What the run's calls carry from it: its extensions and its run-local values.
    fn scope(&self) -> Scope {
        Scope::new(self.run.context().shared_extensions(), self.audience.link())
    }

    /// Lends the run-local values to the calls about to run (see
    /// [`LocalsGuard`](crate::context::LocalsGuard)).
    fn lend_locals(&mut self) {
        self.audience
            .swap_locals(self.run.context_mut().locals_mut());
    }

    /// Takes the run-local values back from the calls that are done.
    fn take_locals_back(&mut self) {
        self.audience
            .swap_locals(self.run.context_mut().locals_mut());
    }
}

impl Drop for Runner {
    /// A run dropped while it holds its thread (its caller went away, or its deadline
    /// passed) frees the thread; see [`Durable::release`].
    fn drop(&mut self) {
        if let Some(durable) = self.durable.take()
            && let Some(write) = durable.release(&self.run)
        {
            self.audience.set_released(write);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::agent::{Agent, AgentRequest};
    use crate::testing::{ScriptedModel, Turn};

    fn script() -> ScriptedModel {
        ScriptedModel::new([
            Turn::call("c1", "echo", json!({"n": 1})).with_call("c2", "echo", json!({"n": 2})),
            Turn::call("c3", "echo", json!({"n": 3})),
            Turn::text("done"),
        ])
    }

    /// Echoes its arguments, and counts its calls in the run's own values.
    fn counted_echo() -> crate::tool::Tool {
        let info = crate::tool::ToolInfo::new("echo", "Echoes, counting");
        crate::tool::Tool::from_fn(info, |request: crate::tool::ToolRequest| async move {
            let mut locals = request.locals();
            let calls = locals.get::<u32>("echoes")?.unwrap_or(0) + 1;
            locals.insert("echoes", &calls)?;
            Ok::<_, serde_json::Error>(crate::tool::ToolOutput::new(request.arguments.to_string()))
        })
    }

    fn agent(model: ScriptedModel) -> Agent {
        let built = Agent::builder(model)
            .instruction("Be brief.")
            .tool(counted_echo())
            .build();
        built.unwrap_or_else(|e| panic!("the agent builds: {e}"))
    }

    /// Takes a run up from `run` and drives it to its result.
    async fn finish(agent: &Agent, run: Run) -> Result<AgentResult, AgentError> {
        let inner = Arc::clone(&agent.inner);
        let audience = RunShared::new(inner.model.clone());
        let mut run = Runner::new(inner, Chain::new(Vec::new()), run, audience);
        run.start().await?;
        while !run.finishing() {
            run.advance().await?;
        }
        run.finish().await.map(|r| *r)
    }

    /// The run is its data: written between two steps, read back and taken up by a new
    /// runner, it ends as the same run left alone does.
    #[tokio::test]
    async fn a_run_written_between_steps_and_read_back_ends_as_if_left_alone() {
        let alone = agent(script()).run(AgentRequest::user("go")).await;
        let alone = alone.unwrap_or_else(|e| panic!("{e}"));

        let agent = agent(script());
        let inner = Arc::clone(&agent.inner);
        let audience = RunShared::new(inner.model.clone());
        let input = Messages::from(vec![crate::message::Message::user("go")]);
        let mut run = Runner::new(
            inner,
            Chain::new(Vec::new()),
            Run::new(input, http::Extensions::new()),
            audience,
        );
        let mut written = None;
        let mut steps = Vec::new();
        let started = run.start().await;
        assert!(started.is_ok());
        while !run.finishing() {
            run.advance().await.unwrap_or_else(|e| panic!("{e}"));
            steps.push(run.run.step());
            // After the first turn's tools: back at the model, nothing in flight.
            if matches!(run.work, Work::Idle) && run.run.step() == RunStep::CallModel {
                written = Some(serde_json::to_string(&run.run).unwrap_or_else(|e| panic!("{e}")));
                break;
            }
        }
        // The model's reply comes first, then `after_model` routes it to the tools.
        assert_eq!(steps.first(), Some(&RunStep::AfterModel));
        assert!(steps.contains(&RunStep::RunTools));
        let Some(written) = written else {
            panic!("the run came back to the model");
        };
        let read: Run = serde_json::from_str(&written).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read.step(), RunStep::CallModel);
        assert_eq!(read.context().iteration(), 1);
        assert_eq!(read.records().count(), 2);
        assert_eq!(read.pending_calls().count(), 0);
        // What the tools kept in the run's values is part of it.
        assert_eq!(
            read.context().locals().get::<u32>("echoes").ok().flatten(),
            Some(2)
        );

        // The rest of the run, on a new runner: the model goes on with its second turn.
        let taken_up = finish(&agent, read).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(taken_up.messages, alone.messages);
        assert_eq!(taken_up.final_message, alone.final_message);
        assert_eq!(taken_up.iterations, alone.iterations);
        assert_eq!(taken_up.model_calls, alone.model_calls);
        let contents = |r: &AgentResult| -> Vec<(String, String)> {
            r.tool_records
                .iter()
                .map(|t| (t.call_id.to_string(), t.content.clone()))
                .collect()
        };
        assert_eq!(contents(&taken_up), contents(&alone));
        assert_eq!(taken_up.locals, alone.locals);
        assert_eq!(taken_up.locals.get::<u32>("echoes").ok().flatten(), Some(3));
    }
}
