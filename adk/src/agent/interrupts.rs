//! What interrupts a run, as the [`PendingInterrupt`]s it stops at: a hook's error that
//! is an [`Interrupt`], or the record of a call that interrupted (its own, or those of
//! an agent it ran, each behind the call's address).

use super::error::AgentError;
use crate::interrupt::{Interrupt, PendingInterrupt};
use crate::message::ToolCall;
use crate::tool::{ToolError, ToolErrorKind, ToolRecord};

/// The interrupt of `agent` that a hook's error raised; `None` for any other error.
pub(super) fn of_hook(agent: &str, error: &AgentError) -> Option<PendingInterrupt> {
    let failed = error.as_handler()?;
    let interrupt = failed.interrupt()?;
    Some(PendingInterrupt::for_hook(
        agent,
        failed.hook(),
        failed.handler(),
        interrupt.payload().clone(),
    ))
}

/// Whether a call's record is that of a call that interrupted the run.
pub(super) fn is_interrupted(record: &ToolRecord) -> bool {
    record
        .error
        .as_ref()
        .is_some_and(|e| e.kind() == ToolErrorKind::Interrupted)
}

/// The interrupts of `agent` that the call `call` raised, its record says: its own, or
/// those of an agent it ran, each behind the call's address.
pub(super) fn of_call(agent: &str, call: &ToolCall, record: &ToolRecord) -> Vec<PendingInterrupt> {
    let nested = record
        .error
        .as_ref()
        .and_then(|e| std::error::Error::source(e)?.downcast_ref::<Interrupt>())
        .map_or(&[][..], Interrupt::nested_interrupts);
    if !nested.is_empty() {
        let through = |inner| PendingInterrupt::through_call(agent, call, inner);
        return nested.iter().map(through).collect();
    }
    // The interrupt's payload travels as the failure's message, in JSON.
    let message = record.error.as_ref().map_or("", ToolError::message);
    let payload = serde_json::from_str(message)
        .unwrap_or_else(|_| serde_json::Value::String(message.to_owned()));
    vec![PendingInterrupt::for_call(agent, call, payload)]
}
