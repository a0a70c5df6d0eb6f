//! The ReAct loop of one run: step functions that advance a [`Run`], and the thin
//! adapter that turns them into the run's events.
//!
//! Each step does one thing (call the model, read its reply, take the model's answer,
//! run the tools, read their results, finish) and says what it found; the compiled
//! variant of the loop ([`CompiledLoop`]) says where that leads. Between two steps the
//! run is its [`Run`], plain data; what is in flight (a streaming reply, the turn's
//! calls) is held beside it, in [`Work`].

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use tower::BoxError;

use super::batch::{self, BatchOptions, CallEvent};
use super::compile::{CompiledLoop, Outcome};
use super::durable::{self, Durable};
use super::request::Origin;
use super::{AgentConfig, AgentEvent, AgentInner, AgentRequest, AgentResult, AgentRun};
use super::{DefaultExecutor, Run, RunStatus, RunStep, ToolFailurePolicy, ToolRecord};
use crate::checkpoint::CheckpointStatus;
use crate::context::Scope;
use crate::handler::{Chain, Hook};
use crate::interrupt::{Decision, Interrupt, PendingInterrupt, Resumed};
use crate::run_shared::RunShared;
use crate::telemetry::{self, InSpan};
use crate::tool::{CallDecisions, NestedDecisions};
use crate::{AgentError, Finish, Message, MessageAccumulator, Messages, ModelDelta};
use crate::{ModelRequest, Tool, ToolCall, ToolError, ToolErrorKind, ToolInfo};

pub(super) fn start(agent: Arc<AgentInner>, request: AgentRequest) -> AgentRun {
    let timeout = agent.run_timeout;
    let audience = RunShared::new(agent.model.clone());
    let (input, extensions, handlers, origin) = request.into_parts();
    let run = Run::new(input, extensions);
    let mut run = Loop::new(agent, Chain::new(handlers), run, audience.clone());
    run.work = Work::Unstarted(origin);
    AgentRun::new(events(run), timeout, audience)
}

/// The adapter: the run's events, step after step, then its result. (The events of a
/// turn's calls are polled directly rather than through [`Loop::advance`]: output chunks
/// are most of a streaming run's events.)
fn events(mut run: Loop) -> impl Stream<Item = Result<AgentEvent, AgentError>> + Send + 'static {
    async_stream::try_stream! {
        loop {
            let step = if matches!(run.work, Work::Tools(_)) {
                std::future::poll_fn(|cx| run.poll_calls(cx)).await
            } else if run.finishing() {
                break;
            } else {
                run.advance().await
            };
            match step {
                Ok(Some(event)) => yield event,
                Ok(None) => {}
                Err(error) => match run.interrupted_by(error) {
                    Ok(event) => {
                        if let Some(event) = event {
                            yield event;
                        }
                    }
                    Err(error) => Err(run.fail(error).await)?,
                },
            }
        }
        let result = match run.finish().await {
            Ok(result) => result,
            Err(error) => Err(run.fail(error).await)?,
        };
        yield AgentEvent::Completed(result);
    }
}

/// A run in progress: its data, and what it runs with.
struct Loop {
    run: Run,
    work: Work,
    /// The text of a filler, which comes after the reply's message event.
    filler: Option<String>,
    agent: Arc<AgentInner>,
    chain: Chain,
    /// The run's configuration, as `before_agent` made it.
    config: AgentConfig,
    tool_infos: Arc<[Arc<ToolInfo>]>,
    graph: CompiledLoop,
    audience: RunShared,
    /// The model calls of the run before this loop took it up.
    model_calls: usize,
    /// The run's thread and checkpoints, once it has any.
    durable: Option<Box<Durable>>,
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
    Reply(Box<Streaming>),
    /// The turn's calls are running.
    Tools(BoxStream<'static, CallEvent>),
}

/// A reply that streams: what came so far, and the rest.
struct Streaming {
    reply: MessageAccumulator,
    deltas: BoxStream<'static, Result<ModelDelta, BoxError>>,
}

impl Loop {
    /// A run about to start (or be taken up), with the agent's own configuration until
    /// `before_agent` has made the run's.
    fn new(agent: Arc<AgentInner>, chain: Chain, run: Run, audience: RunShared) -> Self {
        Loop {
            model_calls: run.model_calls(),
            run,
            work: Work::Unstarted(None),
            filler: None,
            chain,
            config: agent.config.clone(),
            tool_infos: Arc::clone(&agent.tool_infos),
            graph: CompiledLoop::UNSTARTED,
            agent,
            audience,
            durable: None,
        }
    }

    /// Starts or takes up the run: reads its checkpoint or its thread, `before_agent`
    /// makes its configuration, a new run's history gets the instruction; a run with a
    /// thread claims it.
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
        self.graph = *agent.variants.get(config.key());
        if let Some(durable) = &self.durable {
            let messages = &mut self.run.state_mut().messages;
            durable::apply_edits(durable, &agent.name, &config, messages)?;
        }
        if self.run.step() == RunStep::Start {
            let mut input = std::mem::take(&mut self.run.state_mut().messages);
            if let Some(durable) = &self.durable
                && !durable.base.is_empty()
            {
                input = durable.base.iter().chain(input.iter()).cloned().collect();
            }
            input.repair_tool_calls();
            self.run.state_mut().messages = history(input, config.instruction());
            self.run.set_step(self.graph.entry());
        }
        self.config = config;
        if let Some(durable) = &mut self.durable {
            durable.claim(&self.run).await?;
        }
        Ok(())
    }

    /// Reads where the run comes from: the checkpoint it resumes, or its thread.
    #[cold]
    async fn open(&mut self, origin: Origin) -> Result<(), AgentError> {
        let store = Arc::clone(&self.agent.store);
        if let Some((id, decisions)) = origin.resume {
            let checkpoint = durable::open_checkpoint(&*store, &id, &decisions).await?;
            let mut run = checkpoint.run;
            let mut extensions = std::mem::take(self.run.context_mut().extensions_mut());
            extensions.insert(Resumed);
            run.context_mut().set_extensions(extensions);
            // A hook that interrupted gets its decision when it runs again.
            let prefix = format!("agent:{}/", self.agent.name);
            for interrupt in checkpoint.interrupts.iter().filter(|i| i.call.is_none()) {
                let at = interrupt.id.strip_prefix(&prefix);
                if let (Some(at), Some(decision)) = (at, decisions.get(&interrupt.id)) {
                    run.context_mut()
                        .set_answer(at.to_owned(), decision.clone());
                }
            }
            self.run = run;
            self.model_calls = self.run.model_calls();
            let run_id: Arc<str> = checkpoint.run_id.into();
            self.audience.set_run_id(Arc::clone(&run_id));
            let mut durable = Durable::new(
                store,
                id.thread.clone(),
                Some(id.version),
                run_id,
                checkpoint.base,
            );
            durable.answered = checkpoint.interrupts;
            durable.last = Some(id);
            // A run taken over after a crash keeps the decisions it was resumed with.
            durable.decisions = if decisions.is_empty() {
                checkpoint.decisions
            } else {
                decisions
            };
            self.durable = Some(Box::new(durable));
        } else if let Some(thread) = origin.thread {
            let (head, base, values) = durable::open_thread(&*store, &thread).await?;
            *self.run.context_mut().thread_values_mut() = values;
            let run_id = self.audience.run_id();
            self.durable = Some(Box::new(Durable::new(store, thread, head, run_id, base)));
        }
        Ok(())
    }

    /// The run's durable side, made now (on a thread of its own) if it has none.
    #[cold]
    fn durable_mut(&mut self) -> &mut Durable {
        let (store, audience) = (&self.agent.store, &self.audience);
        self.durable.get_or_insert_with(|| {
            let run_id = audience.run_id();
            let thread = run_id.to_string();
            let store = Arc::clone(store);
            Box::new(Durable::new(store, thread, None, run_id, Messages::new()))
        })
    }

    /// Whether the run stopped at an interrupt.
    fn interrupted(&self) -> bool {
        self.durable
            .as_ref()
            .is_some_and(|d| !d.interrupts.is_empty())
    }

    /// Whether all that is left is to finish.
    fn finishing(&self) -> bool {
        matches!(self.work, Work::Idle)
            && self.filler.is_none()
            && (matches!(self.run.step(), RunStep::Finish | RunStep::Done) || self.interrupted())
    }

    /// Takes one step, or reads one event of a step in flight; returns the event to
    /// pass on, if there is one.
    async fn advance(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        if let Some(text) = self.filler.take() {
            return Ok(Some(AgentEvent::Filler(text)));
        }
        if let Some(durable) = self.durable.as_mut().filter(|d| d.save_due) {
            durable.save_due = false;
            durable.write(CheckpointStatus::Running, &self.run).await?;
        }
        match self.work {
            Work::Unstarted(_) => self.start().await.map(|()| None),
            Work::Reply(_) => self.read_reply().await,
            Work::Tools(_) => self.read_tools().await,
            Work::Idle => match self.run.step() {
                RunStep::Start | RunStep::CallModel => self.call_model().await,
                RunStep::AfterModel => self.take_reply().await,
                RunStep::RunTools => Ok(self.run_tools()),
                RunStep::Finish | RunStep::Done => Ok(None),
            },
        }
    }

    /// Turns an error that is a hook's interrupt into the run's interrupt: the step that
    /// was interrupted runs again when the run resumes. Other errors are given back.
    #[cold]
    fn interrupted_by(&mut self, error: AgentError) -> Result<Option<AgentEvent>, AgentError> {
        let Some(failed) = error.as_handler() else {
            return Err(error);
        };
        let Some(interrupt) = failed.interrupt() else {
            return Err(error);
        };
        let (hook, handler) = (failed.hook(), failed.handler().to_owned());
        let pending = PendingInterrupt::for_hook(
            &self.agent.name,
            hook,
            &handler,
            interrupt.payload().clone(),
        );
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
        self.durable_mut().interrupts.push(pending);
        Ok(event)
    }

    /// Writes what a failed run leaves to its thread (the thread's history before it,
    /// and the run as it was, which a resume can take over), and gives the error back.
    #[cold]
    async fn fail(&mut self, error: AgentError) -> AgentError {
        let Some(durable) = self.durable.as_mut().filter(|d| d.claimed && !d.ended) else {
            return error;
        };
        if matches!(&error, AgentError::Checkpoint(e) if durable::is_conflict(e)) {
            // Someone else holds the thread now: it is not this run's to free.
            durable.ended = true;
        } else {
            // Best effort: the run's own error is the one to report.
            let _ = durable.write(CheckpointStatus::Failed, &self.run).await;
        }
        error
    }

    /// Calls the model: `before_model`, then the `wrap_model` chain. A whole reply goes
    /// into the history at once; a streamed one is read by [`Loop::read_reply`].
    async fn call_model(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        let limit = self.agent.max_iterations;
        let iteration = self.run.context().iteration() + 1;
        if iteration > limit {
            return Err(AgentError::MaxIterations { limit });
        }
        self.run.context_mut().set_iteration(iteration);
        let (cx, state) = self.run.parts();
        if self.chain.calls(Hook::BeforeModel) {
            self.chain.before_model(cx, state).await?;
        }

        let span = telemetry::model_span(iteration, self.tool_infos.len());
        let request = self.model_request();
        self.lend_locals();
        let call = self.chain.model(request, self.audience.clone());
        let response = InSpan::new(call, span).await;
        self.take_locals_back();
        let response = response.map_err(AgentError::from_chain)?;
        self.run
            .set_model_calls(self.model_calls + self.audience.model_calls());
        match response.into_whole() {
            Ok(reply) => {
                let listening = self.audience.listening() && !reply.content().is_empty();
                let text = listening.then(|| AgentEvent::TextDelta(reply.content().to_owned()));
                self.run.state_mut().messages.push(reply);
                self.run.set_step(RunStep::AfterModel);
                Ok(text)
            }
            Err(deltas) => {
                let reply = MessageAccumulator::default();
                self.work = Work::Reply(Box::new(Streaming { reply, deltas }));
                Ok(None)
            }
        }
    }

    /// Reads the next delta of a streamed reply; its text is passed on as it comes.
    async fn read_reply(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        let Work::Reply(streaming) = &mut self.work else {
            return Ok(None);
        };
        match streaming.deltas.next().await {
            Some(Ok(ModelDelta::Text(text))) => {
                streaming.reply.push_text(&text);
                Ok(Some(AgentEvent::TextDelta(text)).filter(|_| self.audience.listening()))
            }
            Some(Ok(delta)) => {
                streaming.reply.push(delta);
                Ok(None)
            }
            Some(Err(error)) => Err(AgentError::Model(error)),
            None => {
                let Work::Reply(streaming) = std::mem::replace(&mut self.work, Work::Idle) else {
                    return Ok(None);
                };
                self.run.state_mut().messages.push(streaming.reply.finish());
                self.run.set_step(RunStep::AfterModel);
                Ok(None)
            }
        }
    }

    /// Takes the model's reply: `after_model` may rewrite it, then the loop routes on it.
    async fn take_reply(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        let (cx, state) = self.run.parts();
        if self.chain.calls(Hook::AfterModel) {
            self.chain.after_model(cx, state).await?;
        }
        let messages = &self.run.state().messages;
        let tool_calls = messages.last().is_some_and(|m| !m.tool_calls().is_empty());
        let outcome = Outcome {
            tool_calls,
            ..Outcome::default()
        };
        self.run
            .set_step(self.graph.next(RunStep::AfterModel, outcome));

        let reply = self.run.state().messages.last();
        let Some(reply) = reply.filter(|_| self.audience.listening()) else {
            return Ok(None);
        };
        if self.agent.filler_messages && tool_calls && !reply.content().is_empty() {
            self.filler = Some(reply.content().to_owned());
        }
        Ok(Some(AgentEvent::Message(reply.clone())))
    }

    /// Starts the calls of the model's last reply, as the run's executor says (all at
    /// once by default, up to the agent's cap). A turn taken up from a checkpoint runs
    /// only its calls that did not finish, as the person decided.
    fn run_tools(&mut self) -> Option<AgentEvent> {
        // The reply's calls are read where they are (the history is shared, not copied).
        let history = self.run.state().messages.clone();
        let calls = history.last().map_or(&[][..], |reply| reply.tool_calls());
        let resumed = self.run.turn_mut().is_some();
        if !resumed {
            self.run.begin_turn(calls.len());
        }
        let options = BatchOptions {
            events: self.audience.listening(),
            ..self.agent.batch
        };
        let mut scope = self.scope();
        let (chain, config) = (self.chain.clone(), self.config.clone());
        if !resumed && self.config.executor().is_none() {
            // The common case: every call of the reply, read where they are.
            self.lend_locals();
            let calls = calls.iter().cloned().enumerate();
            self.work = Work::Tools(batch::run_batch(chain, config, scope, calls, options));
            return None;
        }
        let mut answered = Vec::new();
        let pending: Vec<(usize, ToolCall)> = match &self.durable {
            Some(durable) if resumed => {
                let (decisions, nested) = durable.call_decisions(&self.agent.name);
                if !nested.is_empty() {
                    scope
                        .extensions_mut()
                        .insert(NestedDecisions(Arc::new(nested)));
                }
                let unfinished: Vec<usize> = self.run.unfinished_calls().collect();
                let mut pending = Vec::new();
                for at in unfinished {
                    let Some(call) = calls.get(at) else { continue };
                    match decisions.get(call.id.as_str()) {
                        Some(Decision::Reject { reason }) => {
                            let error = ToolError::rejected(reason);
                            answered.push((at, ToolRecord::failure(call, error)));
                        }
                        Some(Decision::Respond { answer }) => {
                            answered.push((at, ToolRecord::success(call, answer_text(answer))));
                        }
                        _ => pending.push((at, call.clone())),
                    }
                }
                scope
                    .extensions_mut()
                    .insert(CallDecisions(Arc::new(decisions)));
                pending
            }
            _ => calls.iter().cloned().enumerate().collect(),
        };
        self.lend_locals();
        let events = match self.config.executor() {
            Some(executor) => {
                executor.run(pending, DefaultExecutor::new(chain, config, scope, options))
            }
            None => batch::run_batch(chain, config, scope, pending.into_iter(), options),
        };
        self.work = Work::Tools(if answered.is_empty() {
            events
        } else {
            let answered = answered
                .into_iter()
                .map(|(at, record)| CallEvent::Done(at, Arc::new(record)));
            futures::stream::iter(answered).chain(events).boxed()
        });
        None
    }

    /// Reads the next event of the turn's calls.
    async fn read_tools(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        std::future::poll_fn(|cx| self.poll_calls(cx)).await
    }

    /// Polls the turn's calls for their next event. (The adapter polls it directly:
    /// output chunks are most of a streaming run's events.)
    fn poll_calls(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<AgentEvent>, AgentError>> {
        let Work::Tools(calls) = &mut self.work else {
            return Poll::Ready(Ok(None));
        };
        let event = std::task::ready!(calls.poll_next_unpin(cx));
        if event.is_none() {
            self.work = Work::Idle;
        }
        Poll::Ready(self.call_event(event))
    }

    /// Takes one event of the turn's calls; `None` when they are all done, which ends
    /// the turn.
    fn call_event(&mut self, event: Option<CallEvent>) -> Result<Option<AgentEvent>, AgentError> {
        let Some(event) = event else {
            self.take_locals_back();
            return Ok(self.end_turn());
        };
        match event {
            CallEvent::Event(event) => Ok(Some(event).filter(|_| self.audience.listening())),
            CallEvent::Fatal(error) => Err(error),
            CallEvent::Done(index, record)
                if record
                    .error
                    .as_ref()
                    .is_some_and(|e| e.kind() == ToolErrorKind::Interrupted) =>
            {
                Ok(self.call_interrupted(index, &record))
            }
            CallEvent::Done(_, record)
                if !record.is_success()
                    && self.agent.on_tool_failure == ToolFailurePolicy::FailRun =>
            {
                Err(AgentError::ToolFailed(Box::new(Arc::unwrap_or_clone(
                    record,
                ))))
            }
            CallEvent::Done(index, record) => Ok(self.finished(index, record)),
        }
    }

    /// Keeps the record of a call that finished. The first finishing call, in the
    /// model's order, wins; its result is held back to come last.
    fn finished(&mut self, index: usize, record: Arc<ToolRecord>) -> Option<AgentEvent> {
        let listening = self.audience.listening();
        let turn = self.run.turn_mut()?;
        let mut emit = Some(index);
        if record.finish.is_some() && turn.winner.is_none_or(|w| index < w) {
            emit = turn.winner.replace(index);
        }
        *turn.finished.get_mut(index)? = Some(record);
        let record = turn.finished.get(emit?)?.as_ref()?;
        listening.then(|| AgentEvent::ToolResult(Arc::clone(record)))
    }

    /// Keeps the interrupt of a call that interrupted the run; the turn's other calls
    /// go on.
    #[cold]
    fn call_interrupted(&mut self, index: usize, record: &ToolRecord) -> Option<AgentEvent> {
        let reply = self.run.state().messages.last()?;
        let call = reply.tool_calls().get(index)?.clone();
        // The interrupt's payload travels as the failure's message, in JSON.
        let message = record.error.as_ref().map_or("", ToolError::message);
        let payload = serde_json::from_str(message)
            .unwrap_or_else(|_| serde_json::Value::String(message.to_owned()));
        let nested = record
            .error
            .as_ref()
            .and_then(|e| std::error::Error::source(e)?.downcast_ref::<Interrupt>())
            .map_or(&[][..], Interrupt::nested_interrupts);
        if !nested.is_empty() {
            return self.call_interrupted_through(&call, nested);
        }
        let pending = PendingInterrupt::for_call(&self.agent.name, &call, payload);
        let event = self
            .audience
            .listening()
            .then(|| AgentEvent::Interrupt(Box::new(pending.clone())));
        self.durable_mut().interrupts.push(pending);
        event
    }

    /// Keeps the interrupts of an agent that a call ran, as this run's, each behind the
    /// call's address; the events of all but the first come next in the turn's events.
    #[cold]
    fn call_interrupted_through(
        &mut self,
        call: &ToolCall,
        nested: &[PendingInterrupt],
    ) -> Option<AgentEvent> {
        let name = Arc::clone(&self.agent.name);
        let pending: Vec<PendingInterrupt> = nested
            .iter()
            .map(|inner| PendingInterrupt::through_call(&name, call, inner))
            .collect();
        let mut events: Vec<CallEvent> = if self.audience.listening() {
            let event = |p: &PendingInterrupt| AgentEvent::Interrupt(Box::new(p.clone()));
            pending.iter().map(|p| CallEvent::Event(event(p))).collect()
        } else {
            Vec::new()
        };
        self.durable_mut().interrupts.extend(pending);
        let first = (!events.is_empty()).then(|| events.remove(0));
        if let (Work::Tools(calls), false) = (&mut self.work, events.is_empty()) {
            let rest = std::mem::replace(calls, futures::stream::empty().boxed());
            *calls = futures::stream::iter(events).chain(rest).boxed();
        }
        match first {
            Some(CallEvent::Event(event)) => Some(event),
            _ => None,
        }
    }

    /// Ends the turn: the results go into the history, a finishing call (or the failure
    /// policy) says how the run ends, and the graph says where it goes.
    fn end_turn(&mut self) -> Option<AgentEvent> {
        if self.interrupted() {
            // The turn waits, with its finished calls, for the decisions.
            return None;
        }
        let reply = self.run.state().messages.len().checked_sub(1)?;
        let turn = self.run.end_turn()?;
        let winner = turn.winner.and_then(|i| turn.finished.get(i)?.as_ref());
        let mut outcome = Outcome {
            tool_calls: true,
            ..Outcome::default()
        };
        if let Some(record) = winner {
            let message = match &record.finish {
                Some(Finish::WithTurnText) => {
                    Message::assistant(self.run.state().messages[reply].content())
                }
                Some(Finish::With(message)) => message.clone(),
                _ => record.to_message(),
            };
            self.run.end_with(message, RunStatus::Completed);
            // Return-directly tools are the topology's business; other finishes halt.
            outcome.returned_directly = self.config.is_return_directly(&record.name);
            outcome.halt = !outcome.returned_directly;
        } else if self.agent.on_tool_failure == ToolFailurePolicy::EndDegraded {
            // The first failed call, in the model's order, ends the run.
            let failed = turn.finished.iter().flatten().find(|r| !r.is_success());
            if let Some(failed) = failed {
                self.run.end_with(failed.to_message(), RunStatus::Degraded);
                outcome.halt = true;
            }
        }
        self.run
            .set_step(self.graph.next(RunStep::RunTools, outcome));
        if self.agent.durable
            && let Some(durable) = &mut self.durable
        {
            durable.save_due = self.run.step() == RunStep::CallModel;
        }
        let record = winner.filter(|_| self.audience.listening())?;
        Some(AgentEvent::ToolResult(Arc::clone(record)))
    }

    /// Ends the run: `after_agent`, then the result; or, at an interrupt, its
    /// checkpoint and the interrupts that wait.
    async fn finish(&mut self) -> Result<Box<AgentResult>, AgentError> {
        if self.interrupted() {
            return self.stop_at_interrupts().await;
        }
        let (cx, state) = self.run.parts();
        if self.chain.calls(Hook::AfterAgent) {
            self.chain.after_agent(cx, state).await?;
        }
        self.run.set_step(RunStep::Done);
        let Some(durable) = &mut self.durable else {
            return Ok(Box::new(self.run.take_result()));
        };
        // The thread goes on from this run's history; the record keeps no second copy.
        let instructed = !self.config.instruction().is_empty();
        durable.base = durable::thread_history(&self.run.state().messages, instructed);
        let messages = std::mem::take(&mut self.run.state_mut().messages);
        let written = durable.write(CheckpointStatus::Completed, &self.run).await;
        self.run.state_mut().messages = messages;
        written?;
        let mut result = Box::new(self.run.take_result());
        result.checkpoint = durable.last.clone();
        Ok(result)
    }

    /// Writes the interrupted run's checkpoint; the result names it and the interrupts.
    async fn stop_at_interrupts(&mut self) -> Result<Box<AgentResult>, AgentError> {
        let run = &self.run;
        let durable = self.durable.as_mut().ok_or(AgentError::Incomplete)?;
        let id = durable.write(CheckpointStatus::Interrupted, run).await?;
        let mut result = Box::new(self.run.interrupted_result());
        result.interrupts = durable.interrupts.clone();
        result.checkpoint = Some(id);
        Ok(result)
    }

    /// The request of one model call: the history so far, the run's tools, its scope.
    /// (A run that resumes from a `wrap_model` interrupt carries the decision in it.)
    fn model_request(&mut self) -> ModelRequest {
        let messages = self.run.state().messages.clone();
        let tools = Arc::clone(&self.tool_infos);
        let mut request = ModelRequest::for_run(messages, tools, self.scope());
        request.options = self.agent.options.clone();
        if let Some(decision) = self.run.context_mut().take_answer_for(Hook::WrapModel) {
            let decision = crate::model::ModelDecision(decision);
            request.extensions_mut().insert(decision);
        }
        request
    }

    /// What the run's calls carry from it: its extensions and its run-local values.
    fn scope(&self) -> Scope {
        Scope::new(
            self.run.context().shared_extensions(),
            self.audience.clone(),
        )
    }

    /// Lends the run-local values to the calls about to run (see [`LocalsGuard`]).
    ///
    /// [`LocalsGuard`]: crate::LocalsGuard
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

impl Drop for Loop {
    /// A run dropped while it holds its thread (its caller went away, or its deadline
    /// passed) frees the thread; see [`durable::release`].
    fn drop(&mut self) {
        if let Some(durable) = self.durable.take()
            && let Some(write) = durable::release(durable, self.run.clone())
        {
            self.audience.set_released(write);
        }
    }
}

/// The text of an answer given in a call's place: a string as it is, anything else as
/// JSON.
fn answer_text(answer: &serde_json::Value) -> String {
    match answer {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The run's history: the instruction (if any), then the request's messages, in a new
/// vector with room for a few turns (growing one in place is the allocator's slow path).
fn history(input: Messages, instruction: &str) -> Messages {
    const ROOM: usize = 8;
    let mut history = Vec::with_capacity(input.len() + 1 + ROOM);
    if !instruction.is_empty() {
        history.push(Message::system(instruction));
    }
    history.extend(input.into_vec());
    Messages::from(history)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::{ScriptedModel, Turn};
    use crate::{Agent, AgentRequest};

    fn script() -> ScriptedModel {
        ScriptedModel::new([
            Turn::call("c1", "echo", json!({"n": 1})).with_call("c2", "echo", json!({"n": 2})),
            Turn::call("c3", "echo", json!({"n": 3})),
            Turn::text("done"),
        ])
    }

    /// Echoes its arguments, and counts its calls in the run's own values.
    fn counted_echo() -> Tool {
        let info = crate::ToolInfo::new("echo", "Echoes, counting");
        Tool::from_fn(info, |request: crate::ToolRequest| async move {
            let mut locals = request.locals();
            let calls = locals.get::<u32>("echoes")?.unwrap_or(0) + 1;
            locals.insert("echoes", &calls)?;
            Ok::<_, serde_json::Error>(crate::ToolOutput::new(request.arguments.to_string()))
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
        let mut run = Loop::new(inner, Chain::new(Vec::new()), run, audience);
        run.start().await?;
        while !run.finishing() {
            run.advance().await?;
        }
        run.finish().await.map(|r| *r)
    }

    /// The run is its data: written between two steps, read back and taken up by a new
    /// loop, it ends as the same run left alone does.
    #[tokio::test]
    async fn a_run_written_between_steps_and_read_back_ends_as_if_left_alone() {
        let alone = agent(script()).run(AgentRequest::user("go")).await;
        let alone = alone.unwrap_or_else(|e| panic!("{e}"));

        let agent = agent(script());
        let inner = Arc::clone(&agent.inner);
        let audience = RunShared::new(inner.model.clone());
        let input = Messages::from(vec![Message::user("go")]);
        let mut run = Loop::new(
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

        // The rest of the run, on a new loop: the model goes on with its second turn.
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
