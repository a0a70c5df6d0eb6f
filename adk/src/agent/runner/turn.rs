//! The tools' step of the loop: run the calls of the model's last reply (or of the turn
//! a resumed run takes up), read their events as they come, keep their records (and the
//! interrupts they raise), and end the turn.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::StreamExt;

use super::{Runner, Work};
use crate::agent::ToolFailurePolicy;
use crate::agent::batch::{self, BatchOptions, CallEvent};
use crate::agent::compile::Outcome;
use crate::agent::error::AgentError;
use crate::agent::event::AgentEvent;
use crate::agent::executor::{self, BatchRunner};
use crate::agent::interrupts;
use crate::agent::result::RunStatus;
use crate::agent::run::RunStep;
use crate::message::Message;
use crate::telemetry;
use crate::tool::{Finish, ToolRecord};

impl Runner {
    /// Starts the calls of the model's last reply, as the run's executor says (all at
    /// once by default, up to the agent's cap).
    pub(super) fn run_tools(&mut self) -> Option<AgentEvent> {
        let options = self.batch_options();
        if self.run.turn().is_none() {
            let calls = self
                .run
                .history()
                .messages
                .last()
                .map(|r| r.tool_calls().len());
            let slots = std::mem::take(&mut self.spare_slots);
            self.run.begin_turn(calls.unwrap_or(0), slots);
        }
        self.lend_locals();
        let scope = self.scope();
        // The reply's calls are read where they are, in the history.
        let reply = self.run.history().messages.last();
        let calls = reply.map_or(&[][..], |reply| reply.tool_calls());
        let calls = calls.iter().cloned().enumerate();
        let (chain, config) = (&self.chain, &self.config);
        let events = match config.executor() {
            // The common case: every call of the reply.
            None => batch::run_batch(chain, config, &scope, calls, options),
            Some(custom) => {
                let runner = BatchRunner::new(chain.clone(), config.clone(), scope, options);
                executor::run_custom(custom, calls.collect(), runner)
            }
        };
        self.work = Work::Tools(events);
        None
    }

    /// Starts the calls of the turn a resumed run takes up: those that did not finish
    /// and that the decisions did not answer in place.
    #[cold]
    pub(super) fn run_resumed(&mut self) -> Option<AgentEvent> {
        let Work::Resumed(turn) = std::mem::replace(&mut self.work, Work::Idle) else {
            return None;
        };
        let (chain, config) = (self.chain.clone(), self.config.clone());
        let runner = BatchRunner::new(chain, config, self.scope(), self.batch_options());
        self.lend_locals();
        self.work = Work::Tools(turn.run(runner));
        None
    }

    /// How the turn's calls run: the agent's options, with events only when they are
    /// read.
    fn batch_options(&self) -> BatchOptions {
        BatchOptions {
            events: self.audience.listening(),
            ..self.agent.batch
        }
    }

    /// Reads the next event of the turn's calls.
    pub(super) async fn read_tools(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        std::future::poll_fn(|cx| self.poll_calls(cx)).await
    }

    /// Polls the turn's calls for their next event for the caller, or the end of the
    /// turn; what the caller would not see (a record no one reads as an event) is taken
    /// in place, without going back to the adapter. (The adapter polls it directly:
    /// output chunks are most of a streaming run's events.)
    pub(in crate::agent) fn poll_calls(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<AgentEvent>, AgentError>> {
        loop {
            let Work::Tools(calls) = &mut self.work else {
                return Poll::Ready(Ok(None));
            };
            let event = std::task::ready!(calls.poll_next_unpin(cx));
            if event.is_none() {
                self.work = Work::Idle;
            }
            match self.call_event(event) {
                Ok(None) if self.running_tools() => continue,
                taken => return Poll::Ready(taken),
            }
        }
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
            CallEvent::Done(index, record) if interrupts::is_interrupted(&record) => {
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

    /// Keeps the interrupts of a call that interrupted the run (its own, or those of an
    /// agent it ran); the turn's other calls go on. The event of the first is given
    /// back, the others' come next in the turn's events.
    #[cold]
    fn call_interrupted(&mut self, index: usize, record: &ToolRecord) -> Option<AgentEvent> {
        let reply = self.run.history().messages.last()?;
        let call = reply.tool_calls().get(index)?;
        let raised = interrupts::of_call(&self.agent.name, call, record);
        let mut events: Vec<CallEvent> = if self.audience.listening() {
            let event = |p: &_| CallEvent::Event(AgentEvent::Interrupt(Box::new(Clone::clone(p))));
            raised.iter().map(event).collect()
        } else {
            Vec::new()
        };
        telemetry::interrupted(&raised);
        self.durable_mut().raise(raised);
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
    pub(super) fn end_turn(&mut self) -> Option<AgentEvent> {
        if self.interrupted() {
            // The turn waits, with its finished calls, for the decisions.
            return None;
        }
        let reply = self.run.history().messages.len().checked_sub(1)?;
        let turn = self.run.end_turn()?;
        let winner = turn.winner.and_then(|i| turn.finished.get(i)?.as_ref());
        let mut outcome = Outcome {
            tool_calls: true,
            ..Outcome::default()
        };
        if let Some(record) = winner {
            let message = match &record.finish {
                Some(Finish::WithTurnText) => {
                    Message::assistant(self.run.history().messages[reply].content())
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
        // A checkpoint at the end of a turn: every turn of a durable run; and of a run
        // that holds its thread, once its claim is half gone (it renews the claim).
        if let Some(durable) = &mut self.durable {
            let due = self.agent.durable || durable.claim_aging();
            durable.set_due(due && self.run.step() == RunStep::CallModel);
        }
        let event = winner.filter(|_| self.audience.listening());
        let event = event.map(|record| AgentEvent::ToolResult(Arc::clone(record)));
        // The turn's slots, emptied, are the next turn's.
        let mut slots = turn.finished;
        slots.clear();
        self.spare_slots = slots;
        event
    }
}
