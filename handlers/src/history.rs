//! Rewrite the history before or after each model call with a closure.

use std::borrow::Cow;
use std::fmt;

use adk::{BoxError, Handler, History, RunContext};

/// Runs a closure before each model call. See [`before_model`].
#[derive(Clone)]
pub struct BeforeModelFn<F> {
    f: F,
}

/// Runs a closure after each model call. See [`after_model`].
#[derive(Clone)]
pub struct AfterModelFn<F> {
    f: F,
}

/// A handler that rewrites the history before each model call. Changes persist: later
/// iterations see them.
///
/// # Example
///
/// ```
/// use tower_adk::Message;
///
/// // Keep the system message and the last 20 messages.
/// let trim = tower_adk::handlers::before_model(|_cx, history| {
///     let len = history.messages.len();
///     if len > 21 {
///         let messages = history.messages.to_mut();
///         messages.drain(1..len - 20);
///     }
///     Ok(())
/// });
/// # let _ = trim;
/// ```
pub fn before_model<F>(f: F) -> BeforeModelFn<F>
where
    F: Fn(&mut RunContext, &mut History) -> Result<(), BoxError> + Send + Sync + 'static,
{
    BeforeModelFn { f }
}

/// A handler that rewrites the history after each model call; the model's reply is the
/// last message, and the loop routes on it as rewritten (remove its tool calls to end the
/// run, add some to run them).
///
/// # Example
///
/// ```
/// // Never let the model call `shutdown`.
/// let guard = tower_adk::handlers::after_model(|_cx, history| {
///     if let Some(calls) = history.messages.last_mut().and_then(|m| m.tool_calls_mut()) {
///         calls.retain(|c| c.name != "shutdown");
///     }
///     Ok(())
/// });
/// # let _ = guard;
/// ```
pub fn after_model<F>(f: F) -> AfterModelFn<F>
where
    F: Fn(&mut RunContext, &mut History) -> Result<(), BoxError> + Send + Sync + 'static,
{
    AfterModelFn { f }
}

impl<F> Handler for BeforeModelFn<F>
where
    F: Fn(&mut RunContext, &mut History) -> Result<(), BoxError> + Send + Sync + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("before_model")
    }

    async fn before_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        (self.f)(cx, history)
    }
}

impl<F> Handler for AfterModelFn<F>
where
    F: Fn(&mut RunContext, &mut History) -> Result<(), BoxError> + Send + Sync + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("after_model")
    }

    async fn after_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        (self.f)(cx, history)
    }
}

impl<F> fmt::Debug for BeforeModelFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BeforeModelFn").finish_non_exhaustive()
    }
}

impl<F> fmt::Debug for AfterModelFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AfterModelFn").finish_non_exhaustive()
    }
}
