//! What the workflows that run one after the other share ([`Sequential`]'s agents,
//! [`Loop`]'s rounds): each run is given what the one before left ([`NextInput`],
//! [`Inputs`]), and its events are handed on while its result is kept ([`Relay`]).
//!
//! [`Sequential`]: super::Sequential
//! [`Loop`]: super::Loop

use std::sync::Arc;

use futures::StreamExt;

use super::{conversation, next_request};
use crate::agent::AgentError;
use crate::agent::AgentEvent;
use crate::agent::AgentRequest;
use crate::agent::AgentResult;
use crate::agent::AgentRun;
use crate::message::Messages;

/// Makes the next input of a workflow from a result.
type InputFn = Arc<dyn Fn(&AgentResult) -> Messages + Send + Sync>;

/// What each run after the first is given, made from the result before: by the
/// workflow's input function, or by default the result's conversation, without its
/// instruction.
#[derive(Clone, Default)]
pub(crate) struct NextInput(Option<InputFn>);

impl NextInput {
    /// The input that `f` makes.
    pub(crate) fn with<F>(f: F) -> Self
    where
        F: Fn(&AgentResult) -> Messages + Send + Sync + 'static,
    {
        NextInput(Some(Arc::new(f)))
    }

    /// The inputs of a workflow's run on `request`, in turn.
    pub(crate) fn inputs(&self, request: AgentRequest) -> Inputs<'_> {
        Inputs {
            template: next_request(&request, Messages::new()),
            first: Some(request),
            next: self,
        }
    }

    fn make(&self, previous: &AgentResult) -> Messages {
        match &self.0 {
            Some(input) => input(previous),
            None => conversation(previous),
        }
    }
}

/// The inputs of a workflow's runs, in turn: the request itself first, then each made
/// from the result before, with the request's extensions and handlers.
pub(crate) struct Inputs<'a> {
    template: AgentRequest,
    first: Option<AgentRequest>,
    next: &'a NextInput,
}

impl Inputs<'_> {
    /// The next input: the request, the first time; then the one made from `previous`,
    /// the result of the run before.
    pub(crate) fn next(
        &mut self,
        previous: Option<&AgentResult>,
    ) -> Result<AgentRequest, AgentError> {
        match (self.first.take(), previous) {
            (Some(first), _) => Ok(first),
            (None, Some(previous)) => Ok(next_request(&self.template, self.next.make(previous))),
            (None, None) => Err(AgentError::Incomplete),
        }
    }
}

/// One run of a workflow's: its events, handed on; its result, kept for the workflow
/// (whose own result comes last, made from its runs').
pub(crate) struct Relay {
    run: AgentRun,
    result: Option<Box<AgentResult>>,
}

impl Relay {
    pub(crate) fn new(run: AgentRun) -> Self {
        Relay { run, result: None }
    }

    /// The run's next event, but its `Completed`, whose result it keeps.
    pub(crate) async fn next(&mut self) -> Option<Result<AgentEvent, AgentError>> {
        loop {
            match self.run.next().await? {
                Ok(AgentEvent::Completed(result)) => self.result = Some(result),
                event => return Some(event),
            }
        }
    }

    /// The run's result, once its events are read: a run that ended without one is
    /// [`AgentError::Incomplete`].
    pub(crate) fn result(self) -> Result<Box<AgentResult>, AgentError> {
        self.result.ok_or(AgentError::Incomplete)
    }
}
