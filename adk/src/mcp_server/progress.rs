//! A run followed to its end, what it streams sent to the client as MCP progress
//! notifications (`notifications/progress`) when the client asked for them with a
//! `progressToken`.

use futures::StreamExt;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext, RoleServer};

use crate::agent::{AgentError, AgentEvent, AgentResult, AgentRun};

/// What of a run's stream becomes progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Streamed {
    /// The model's text deltas (an agent called as a tool).
    Text,
    /// The output chunks of the tool calls (a tool called directly).
    ToolChunks,
}

/// Where a call's progress goes: the client's token and the connection back to it.
pub(crate) struct Progress {
    token: ProgressToken,
    peer: Peer<RoleServer>,
    /// How many notifications were sent; each one's `progress` is the next count, so
    /// the values only go up, as the spec asks.
    sent: u32,
}

impl Progress {
    /// The progress of the request in `context`, if its client gave a token.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Option<Self> {
        let token = context.meta.get_progress_token()?;
        Some(Progress {
            token,
            peer: context.peer.clone(),
            sent: 0,
        })
    }

    /// Sends one chunk as a notification whose `message` is the chunk, in order: the
    /// next is sent once this one is written. A client that went away is not an error
    /// of the run (the call's cancellation stops it).
    async fn send(&mut self, chunk: &str) {
        self.sent += 1;
        let param = ProgressNotificationParam::new(self.token.clone(), f64::from(self.sent))
            .with_message(chunk);
        let _ = self.peer.notify_progress(param).await;
    }
}

/// Reads `run` to its end, sending what it streams as progress, and returns its result.
///
/// # Errors
///
/// The run's, or [`AgentError::Incomplete`] for a run that ended without its result.
pub(crate) async fn follow(
    mut run: AgentRun,
    streamed: Streamed,
    mut progress: Option<Progress>,
) -> Result<AgentResult, AgentError> {
    while let Some(event) = run.next().await {
        let chunk = match (event?, streamed) {
            (AgentEvent::Completed(result), _) => return Ok(*result),
            (AgentEvent::TextDelta(text), Streamed::Text) => text,
            (AgentEvent::ToolOutputChunk { chunk, .. }, Streamed::ToolChunks) => chunk,
            _ => continue,
        };
        if let Some(progress) = progress.as_mut()
            && !chunk.is_empty()
        {
            progress.send(&chunk).await;
        }
    }
    Err(AgentError::Incomplete)
}
