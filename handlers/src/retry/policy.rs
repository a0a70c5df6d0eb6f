//! The tower retry policy for tool calls.

use std::fmt;
use std::sync::Arc;

use adk::{BoxError, Tool, ToolError, ToolErrorKind, ToolRequest};
use tower::retry::Policy;
use tower::retry::backoff::{Backoff, ExponentialBackoff, MakeBackoff};
use tower::retry::budget::Budget;

use super::backoff::{SharedRng, default_backoff};

/// A [`tower::retry::Policy`] for tool calls: it retries a call of an idempotent tool that
/// failed with an infrastructure error, a bounded number of times, with backoff.
///
/// - **What is retried**: calls whose tool is marked [idempotent](Tool::is_idempotent)
///   (requests that come from a run; a request made with [`ToolRequest::new`] has no
///   tool and is never retried). Other calls are not even cloned.
/// - **On which errors**: [`ToolErrorKind::Failed`] (the tool's own error) and
///   [`ToolErrorKind::Timeout`] (including tower's `Elapsed`). Never
///   [`InvalidArguments`](ToolErrorKind::InvalidArguments), [`Denied`](ToolErrorKind::Denied),
///   [`Panicked`](ToolErrorKind::Panicked) or [`UnknownTool`](ToolErrorKind::UnknownTool):
///   trying again would fail the same way. Errors that are not tool failures (a handler
///   error that stops the run) are never retried.
/// - **How often**: at most `max_attempts` attempts per call, the first included; and, if
///   a [`budget`](Self::budget) is set, only while the budget allows. Every call that may
///   be retried deposits into the budget once; every retry withdraws.
/// - **When**: after a delay from the [`backoff`](Self::backoff), by default exponential
///   from 50ms, doubling up to 10s, each delay plus up to 100% random jitter (tower's
///   [`ExponentialBackoffMaker`](tower::retry::backoff::ExponentialBackoffMaker) with a
///   [`SharedRng`], so that calls that fail together do not retry together).
///
/// tower's [`Retry`](tower::retry::Retry) clones the policy for each call, so the attempt
/// count and the backoff sequence are per call, while the budget (an `Arc`) is shared.
/// When the attempts run out, the last error is the call's result.
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tower_adk::handlers::RetryPolicy;
/// use tower_adk::handlers::retry::SharedRng;
/// use tower::retry::backoff::ExponentialBackoffMaker;
/// use tower::retry::budget::TpsBudget;
///
/// // 100ms, 200ms, 400ms (capped at 2s), each plus up to 50% jitter.
/// let backoff = ExponentialBackoffMaker::new(
///     Duration::from_millis(100),
///     Duration::from_secs(2),
///     0.5,
///     SharedRng::new(),
/// )?;
/// // Across all calls, retries may add at most 20% to the calls made in the last 10s,
/// // plus 1 retry per second.
/// let budget = Arc::new(TpsBudget::new(Duration::from_secs(10), 1, 0.2));
///
/// let policy = RetryPolicy::new(4).backoff(backoff).budget(budget);
/// assert_eq!(policy.max_attempts(), 4);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RetryPolicy<B = ExponentialBackoff<SharedRng>> {
    max_attempts: usize,
    /// Attempts made so far in this policy's session (a call).
    attempts: usize,
    backoff: B,
    budget: Option<Arc<dyn Budget + Send + Sync>>,
}

impl RetryPolicy {
    /// At most `max_attempts` attempts per call, the first included (`0` and `1` mean no
    /// retry), with the default exponential backoff and no budget.
    pub fn new(max_attempts: usize) -> Self {
        RetryPolicy {
            max_attempts,
            attempts: 0,
            backoff: default_backoff(),
            budget: None,
        }
    }
}

impl<B> RetryPolicy<B> {
    /// Waits between attempts as backoffs made by `backoff` say: one backoff session per
    /// call.
    ///
    /// With tower's [`ExponentialBackoffMaker`](tower::retry::backoff::ExponentialBackoffMaker),
    /// give it a [`SharedRng`] so that each call gets its own jitter, and a minimum below one
    /// second: tower computes the jitter of the whole seconds of a delay apart from its
    /// fraction and rounds it down to whole seconds, so a minimum of exactly 1s gets no
    /// jitter at all.
    pub fn backoff<M: MakeBackoff>(self, mut backoff: M) -> RetryPolicy<M::Backoff> {
        RetryPolicy {
            max_attempts: self.max_attempts,
            attempts: self.attempts,
            backoff: backoff.make_backoff(),
            budget: self.budget,
        }
    }

    /// Also limits retries by `budget`, shared by every call (and every clone of this
    /// policy), e.g. a [`TpsBudget`](tower::retry::budget::TpsBudget).
    pub fn budget<T: Budget + Send + Sync + 'static>(mut self, budget: Arc<T>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The most attempts a call gets, the first included.
    pub fn max_attempts(&self) -> usize {
        self.max_attempts
    }
}

impl<B, Res> Policy<ToolRequest, Res, BoxError> for RetryPolicy<B>
where
    B: Backoff,
{
    type Future = B::Future;

    fn retry(
        &mut self,
        _: &mut ToolRequest,
        result: &mut Result<Res, BoxError>,
    ) -> Option<Self::Future> {
        self.attempts += 1;
        if self.attempts == 1
            && let Some(budget) = &self.budget
        {
            budget.deposit();
        }
        let error = result.as_ref().err()?;
        if !is_retryable(error) || self.attempts >= self.max_attempts {
            return None;
        }
        if let Some(budget) = &self.budget
            && !budget.withdraw()
        {
            return None;
        }
        Some(self.backoff.next_backoff())
    }

    fn clone_request(&mut self, request: &ToolRequest) -> Option<ToolRequest> {
        let idempotent = request.tool().is_some_and(Tool::is_idempotent);
        (idempotent && self.attempts + 1 < self.max_attempts).then(|| request.clone())
    }
}

/// Whether an error is an infrastructure failure that another attempt may not have.
fn is_retryable(error: &BoxError) -> bool {
    match error.downcast_ref::<ToolError>() {
        Some(error) => matches!(error.kind(), ToolErrorKind::Failed | ToolErrorKind::Timeout),
        None => error.is::<tower::timeout::error::Elapsed>(),
    }
}

impl<B> fmt::Debug for RetryPolicy<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_attempts", &self.max_attempts)
            .field("attempts", &self.attempts)
            .field("backoff", &std::any::type_name::<B>())
            .field("budget", &self.budget.is_some())
            .finish()
    }
}
