//! Retries of idempotent tools on infrastructure errors, with a bounded budget and
//! backoff, driven by a tower retry [`Policy`](tower::retry::Policy).
//!
//! [`ToolRetry`] runs the rest of the handler chain (the inner wrappers, then the tool)
//! inside a [`tower::retry::Retry`] with a [`RetryPolicy`]: a failed attempt is run again
//! from this handler inward, with the same request. The model sees one result per call:
//! the first success, or the last failure when the policy gives up.
//!
//! Only tools marked [idempotent](adk::Tool::idempotent) are retried, and only on
//! [`Failed`](adk::ToolErrorKind::Failed) and [`Timeout`](adk::ToolErrorKind::Timeout)
//! errors; see [`RetryPolicy`] for the rules.
//!
//! # Streamed calls
//!
//! A streamed call is retried only while nothing has been delivered: when opening the
//! stream fails, or when the stream fails before its first chunk. To know that, the
//! handler waits for the first chunk before it hands the stream on. Once a chunk has gone
//! out, it may already have reached the caller and cannot be taken back, so a later
//! failure ends the stream as usual and the call fails.
//!
//! # Order
//!
//! Handlers registered after this one (inside it) run again on each attempt; handlers
//! registered before it see the call once. Put a [`ToolTimeout`](crate::ToolTimeout)
//! after it to bound each attempt (a timed-out attempt is retried), or before it to bound
//! the call with all its retries.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::time::Duration;
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use tower_adk::{Agent, AgentRequest, Tool, ToolInfo, ToolOutput};
//! use tower_adk::handlers::retry::SharedRng;
//! use tower_adk::handlers::{RetryPolicy, ToolRetry};
//! use serde_json::json;
//! use tower::retry::backoff::ExponentialBackoffMaker;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A lookup that fails twice, then answers.
//! let calls = Arc::new(AtomicUsize::new(0));
//! let counter = Arc::clone(&calls);
//! let flaky = Tool::from_fn(ToolInfo::new("lookup", "Looks things up"), move |_| {
//!     let attempt = counter.fetch_add(1, Ordering::SeqCst) + 1;
//!     async move {
//!         if attempt < 3 { Err("connection reset") } else { Ok(ToolOutput::new("found")) }
//!     }
//! })
//! .idempotent(true);
//!
//! let model = ScriptedModel::new([Turn::call("c1", "lookup", json!({})), Turn::text("Found it.")]);
//! let agent = Agent::builder(model).tool(flaky).build()?;
//! let backoff = ExponentialBackoffMaker::new(
//!     Duration::from_millis(1),
//!     Duration::from_millis(10),
//!     0.5,
//!     SharedRng::new(),
//! )?;
//! let retry = ToolRetry::new(RetryPolicy::new(3).backoff(backoff));
//!
//! let result = agent.run(AgentRequest::user("look it up").with_handler(retry)).await?;
//! assert_eq!(result.tool_records[0].content, "found");
//! assert_eq!(calls.load(Ordering::SeqCst), 3);
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod backoff;
mod policy;

use std::borrow::Cow;
use std::future::Future;

use adk::{BoxError, Handler, HandlerError, StreamNext, ToolError, ToolNext};
use adk::{ToolOutput, ToolRequest, ToolStream};
use futures::{StreamExt, stream};
use tower::ServiceExt;
use tower::retry::Retry;
use tower::retry::backoff::{Backoff, ExponentialBackoff};

pub use self::backoff::SharedRng;
pub use self::policy::RetryPolicy;

/// A handler that retries the failed calls of idempotent tools, as its [`RetryPolicy`]
/// allows.
///
/// See the [module docs](self) for what is retried, and how streamed calls are.
///
/// # Example
///
/// ```
/// use tower_adk::AgentRequest;
/// use tower_adk::handlers::{RetryPolicy, ToolRetry};
///
/// // Up to 3 attempts per call, with the default exponential backoff.
/// let request = AgentRequest::user("look it up").with_handler(ToolRetry::new(RetryPolicy::new(3)));
/// # let _ = request;
/// ```
#[derive(Debug, Clone)]
pub struct ToolRetry<B = ExponentialBackoff<SharedRng>> {
    policy: RetryPolicy<B>,
}

impl<B> ToolRetry<B> {
    /// Retries as `policy` says; each call gets its own clone of it.
    pub fn new(policy: RetryPolicy<B>) -> Self {
        ToolRetry { policy }
    }

    /// The policy.
    pub fn policy(&self) -> &RetryPolicy<B> {
        &self.policy
    }
}

impl<B> Handler for ToolRetry<B>
where
    B: Backoff + Clone + Send + Sync + 'static,
    B::Future: Send + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("ToolRetry")
    }

    fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        let attempt = tower::service_fn(move |request| next.clone().run(request));
        Retry::new(self.policy.clone(), attempt).oneshot(request)
    }

    fn wrap_tool_stream(
        &self,
        request: ToolRequest,
        next: StreamNext,
    ) -> impl Future<Output = Result<ToolStream, BoxError>> + Send {
        let attempt =
            tower::service_fn(move |request| open_until_first_chunk(next.clone(), request));
        Retry::new(self.policy.clone(), attempt).oneshot(request)
    }
}

/// One attempt at a streamed call: opens the stream and waits for its first chunk, so a
/// stream that fails before delivering anything is a failed attempt.
async fn open_until_first_chunk(
    next: StreamNext,
    request: ToolRequest,
) -> Result<ToolStream, BoxError> {
    let mut chunks = next.run(request).await?;
    match chunks.next().await {
        Some(Ok(first)) => {
            Ok(chunks
                .wrap(|rest| stream::once(async move { Ok::<_, BoxError>(first) }).chain(rest)))
        }
        // A failed chunk is a tool failure, as the loop would have seen it, unless it is a
        // handler error, which stops the run either way.
        Some(Err(error)) if error.is::<HandlerError>() => Err(error),
        Some(Err(error)) => Err(ToolError::from_boxed(error).into()),
        None => Ok(chunks.wrap(|_| stream::empty::<Result<String, BoxError>>())),
    }
}
