//! [`ServedRun`]: a run the server started, counted in flight for its graceful shutdown
//! and cancelled at the drain's deadline, holding its caller's slot while it lives.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt};
use tokio_util::sync::WaitForCancellationFutureOwned;
use tokio_util::task::task_tracker::TaskTrackerToken;

use super::limit::RunSlot;
use super::shutdown::{Admitted, Shutdown};
use crate::agent::AgentError;
use crate::agent::AgentEvent;
use crate::agent::AgentResult;
use crate::agent::AgentRun;
use crate::checkpoint::CheckpointId;

/// The run's events, as [`AgentRun`]'s, until the drain's deadline: then the run is
/// cancelled and its last item is [`AgentError::Cancelled`] with the checkpoint it left.
///
/// A run with an event ready gives it after a look at [`Shutdown::is_cut`]; only a run
/// that waits watches the deadline ([`Shutdown::cut`], made the first time it waits),
/// so that a run that never waits costs no token and no lock.
pub(crate) struct ServedRun {
    state: State,
    /// Made the first time the run waits. (Boxed, so that the run is `Unpin` as an
    /// [`AgentRun`] is.)
    cut: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    shutdown: Shutdown,
    _tracked: TaskTrackerToken,
    /// The caller's slot, when its runs in flight are limited.
    _slot: Option<RunSlot>,
}

enum State {
    Running(AgentRun),
    /// Cut: its checkpoint is being written. (Boxed: few runs get here.)
    Cancelling(BoxFuture<'static, Option<CheckpointId>>),
    Ended,
}

impl ServedRun {
    pub(crate) fn new(run: AgentRun, admitted: Admitted, slot: Option<RunSlot>) -> Self {
        ServedRun {
            state: State::Running(run),
            cut: None,
            shutdown: admitted.shutdown,
            _tracked: admitted.tracked,
            _slot: slot,
        }
    }

    /// The run's result, skipping its events (which the run then does not build).
    pub(crate) async fn result(mut self) -> Result<AgentResult, AgentError> {
        if let State::Running(run) = &self.state {
            run.leave();
        }
        while let Some(event) = self.next().await {
            if let AgentEvent::Completed(result) = event? {
                return Ok(*result);
            }
        }
        Err(AgentError::Incomplete)
    }
}

impl Stream for ServedRun {
    type Item = Result<AgentEvent, AgentError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Running(run) => {
                    if !this.shutdown.is_cut() {
                        if let Poll::Ready(next) = run.poll_next_unpin(cx) {
                            if next.is_none() {
                                this.state = State::Ended;
                            }
                            return Poll::Ready(next);
                        }
                        let shutdown = &this.shutdown;
                        let cut = this.cut.get_or_insert_with(|| Box::pin(shutdown.cut()));
                        if cut.as_mut().poll(cx).is_pending() {
                            return Poll::Pending;
                        }
                    }
                    if let State::Running(run) = std::mem::replace(&mut this.state, State::Ended) {
                        this.state = State::Cancelling(run.cancel().boxed());
                    }
                }
                State::Cancelling(cancel) => {
                    let checkpoint = ready!(cancel.as_mut().poll(cx));
                    this.state = State::Ended;
                    this.shutdown.count_cancelled();
                    let checkpoint = checkpoint.map(Box::new);
                    return Poll::Ready(Some(Err(AgentError::Cancelled { checkpoint })));
                }
                State::Ended => return Poll::Ready(None),
            }
        }
    }
}

impl ServedRun {
    /// Cancels the run as [`AgentRun::cancel`] does: a run that held a thread leaves its
    /// checkpoint, which this waits for and gives back.
    #[cfg(feature = "a2a")]
    pub(crate) async fn cancel(mut self) -> Option<CheckpointId> {
        match std::mem::replace(&mut self.state, State::Ended) {
            State::Running(run) => run.cancel().await,
            _ => None,
        }
    }
}
