//! Timeouts on tool calls: a deadline for every call, and an idle timeout between the
//! chunks of streamed calls, with a default and per-tool values.
//!
//! A call that runs out of time is cancelled (its future or stream is dropped) and the
//! model gets a [`ToolErrorKind::Timeout`](adk::ToolErrorKind::Timeout) result that says
//! which limit fired and its duration, e.g. `error (timeout): idle timeout: no output for
//! 5s; the call was cancelled`. The run goes on.
//!
//! | call | [`total`](Timeouts::total) | [`idle`](Timeouts::idle) |
//! |------|---------|--------|
//! | invoked (whole result) | from the call's start to its result | not used |
//! | streamed | from the call's start to the stream's last chunk | while waiting for the stream to open, then for each next chunk |
//!
//! The idle timer runs only while the stream is being waited on, so a slow consumer does
//! not make a tool look idle; the total deadline runs whatever the consumer does.
//!
//! A stream that times out after some chunks has already delivered them to the caller as
//! events. The timeout error is the stream's last item: the call's record is a failure,
//! and the model sees the timeout error.
//!
//! # Differences from `tower::timeout`
//!
//! tower's [`Timeout`](tower::timeout::Timeout), given as a [`tool_layer`](crate::tool_layer),
//! bounds each call whole (a streamed one up to its last chunk), with one limit for every
//! tool. [`ToolTimeout`] also watches the gaps between chunks, like tower-http's
//! `TimeoutBody`, so it tells a stalled stream (idle) from a slow one (total), and it takes
//! a limit per tool.
//!
//! # Order
//!
//! A timeout bounds everything inside it. Registered before (outside) a
//! [`ToolRetry`](crate::ToolRetry), it bounds the call with all its attempts and backoffs;
//! registered after (inside) it, it bounds each attempt, and a timed-out attempt can be
//! retried.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use tower_adk::testing::{sleep_tool, ScriptedModel, Turn};
//! use tower_adk::{Agent, AgentRequest, ToolErrorKind};
//! use tower_adk::handlers::{Timeouts, ToolTimeout};
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new([Turn::call("c1", "lookup", json!({})), Turn::text("Sorry.")]);
//! let agent = Agent::builder(model)
//!     .tool(sleep_tool("lookup", Duration::from_secs(60), "found"))
//!     .build()?;
//!
//! // Every call gets 30s, streams may stall for 5s; `lookup` gets 20ms.
//! let timeouts = ToolTimeout::new(Duration::from_secs(30))
//!     .idle(Duration::from_secs(5))
//!     .tool("lookup", Timeouts::new().with_total(Duration::from_millis(20)));
//! let result = agent.run(AgentRequest::user("find it").with_handler(timeouts)).await?;
//!
//! let error = result.tool_records[0].error.as_ref().unwrap();
//! assert_eq!(error.kind(), ToolErrorKind::Timeout);
//! assert_eq!(error.message(), "total deadline of 20ms exceeded; the call was cancelled");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod error;
mod future;
mod stream;

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use adk::{BoxError, Handler, StreamNext, ToolNext, ToolOutput, ToolRequest, ToolStream};
use tokio::time::Instant;

use self::error::Limit;
use self::future::{Deadline, ResponseFuture};
use self::stream::TimeoutStream;

/// The time limits of one tool call; `None` is no limit, and so is a duration too long to
/// be added to the clock (such as `Duration::MAX`).
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower_adk::handlers::Timeouts;
///
/// let crawl = Timeouts::new()
///     .with_total(Duration::from_secs(300))
///     .with_idle(Duration::from_secs(20));
/// assert_eq!(crawl.idle, Some(Duration::from_secs(20)));
/// assert_eq!(Timeouts::new(), Timeouts { total: None, idle: None });
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Timeouts {
    /// The deadline of the whole call, from its start to its result or its stream's last
    /// chunk.
    pub total: Option<Duration>,
    /// For streamed calls, the longest wait for the stream to open and then for each next
    /// chunk. Invoked calls ignore it.
    pub idle: Option<Duration>,
}

impl Timeouts {
    /// No limits.
    pub const fn new() -> Self {
        Timeouts {
            total: None,
            idle: None,
        }
    }

    /// Sets the deadline of the whole call.
    pub const fn with_total(mut self, total: Duration) -> Self {
        self.total = Some(total);
        self
    }

    /// Sets the idle timeout of streamed calls.
    pub const fn with_idle(mut self, idle: Duration) -> Self {
        self.idle = Some(idle);
        self
    }

    /// The deadline of the first phase of a call (until an invoked call's result or a
    /// streamed call's opening), and the limit it enforces: the earlier of the two.
    fn first_deadline(self, started: Instant, streamed: bool) -> Option<Deadline> {
        let total = self
            .total
            .and_then(|d| Some((started.checked_add(d)?, Limit::Total(d))));
        let idle = self
            .idle
            .filter(|_| streamed)
            .and_then(|d| Some((started.checked_add(d)?, Limit::Idle(d))));
        let (at, limit) = match (total, idle) {
            (Some(total), Some(idle)) => std::cmp::min_by_key(total, idle, |(at, _)| *at),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => return None,
        };
        Some(Deadline::new(at, limit))
    }
}

/// A handler that puts time limits on every tool call of a run: a default, and
/// per-tool values that replace it.
///
/// See the [module docs](self) for what the limits bound and what the model sees.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower_adk::AgentRequest;
/// use tower_adk::handlers::{Timeouts, ToolTimeout};
///
/// let timeouts = ToolTimeout::new(Duration::from_secs(30))
///     .idle(Duration::from_secs(5))
///     // `crawl` has its own limits: 5 minutes in all, 20s between chunks.
///     .tool("crawl", Timeouts::new().with_total(Duration::from_secs(300)).with_idle(Duration::from_secs(20)))
///     // `export` has no limit at all.
///     .tool("export", Timeouts::new());
/// assert_eq!(timeouts.timeouts_for("search").total, Some(Duration::from_secs(30)));
/// assert_eq!(timeouts.timeouts_for("export").total, None);
///
/// let request = AgentRequest::user("crawl the docs").with_handler(timeouts);
/// # let _ = request;
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolTimeout {
    default: Timeouts,
    per_tool: HashMap<String, Timeouts>,
}

impl ToolTimeout {
    /// Every call must finish within `total` (streamed calls: deliver their last chunk).
    pub fn new(total: Duration) -> Self {
        ToolTimeout::with_default(Timeouts::new().with_total(total))
    }

    /// Every call gets `timeouts`, unless its tool has its own.
    pub fn with_default(timeouts: Timeouts) -> Self {
        ToolTimeout {
            default: timeouts,
            per_tool: HashMap::new(),
        }
    }

    /// Sets the default idle timeout of streamed calls.
    pub fn idle(mut self, idle: Duration) -> Self {
        self.default.idle = Some(idle);
        self
    }

    /// Gives the tool named `name` its own limits, which replace the default ones as a
    /// whole: a limit left `None` here is no limit for that tool.
    pub fn tool(mut self, name: impl Into<String>, timeouts: Timeouts) -> Self {
        self.per_tool.insert(name.into(), timeouts);
        self
    }

    /// The limits that calls of the tool named `name` get.
    pub fn timeouts_for(&self, name: &str) -> Timeouts {
        self.per_tool.get(name).copied().unwrap_or(self.default)
    }
}

impl Handler for ToolTimeout {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("ToolTimeout")
    }

    fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        let deadline = self
            .timeouts_for(&request.name)
            .first_deadline(Instant::now(), false);
        ResponseFuture::new(next.run(request), deadline)
    }

    fn wrap_tool_stream(
        &self,
        request: ToolRequest,
        next: StreamNext,
    ) -> impl Future<Output = Result<ToolStream, BoxError>> + Send {
        let timeouts = self.timeouts_for(&request.name);
        let started = Instant::now();
        let opening =
            ResponseFuture::new(next.run(request), timeouts.first_deadline(started, true));
        async move {
            let stream = opening.await?;
            if timeouts == Timeouts::new() {
                return Ok(stream);
            }
            let total = timeouts
                .total
                .and_then(|d| Some(Deadline::new(started.checked_add(d)?, Limit::Total(d))));
            Ok(stream.wrap(|inner| TimeoutStream::new(inner, total, timeouts.idle)))
        }
    }
}
