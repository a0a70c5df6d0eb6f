//! How long a store may take: the bound that the stores of this crate put on each
//! operation ([`OPERATION_TIMEOUT`] unless set), and [`TimedOut`], the error of an
//! operation that reached it.

use std::time::Duration;

/// How long an operation of the SQLite, PostgreSQL and Redis stores may take unless their
/// `operation_timeout` says otherwise: 10 seconds, waits for a connection, a lock and
/// the answer included.
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(10);

/// A store operation that did not finish within its store's bound (the store's
/// `operation_timeout`). It is the source of a [`StoreError::Backend`] (a read, or a
/// write that was not sent: not applied) or of a [`StoreError::OutcomeUnknown`] (a
/// write that was sent: maybe applied); [`StoreError::is_timeout`] finds it.
///
/// ```
/// use std::time::Duration;
/// use tower_adk::checkpoint::{StoreError, TimedOut};
///
/// let error = StoreError::outcome_unknown(TimedOut::new(Duration::from_secs(2)));
/// assert!(error.is_timeout() && error.is_outcome_unknown());
/// assert_eq!(
///     error.to_string(),
///     "the checkpoint store may or may not have applied the write: \
///      the checkpoint store did not answer within 2s"
/// );
/// ```
///
/// [`StoreError::Backend`]: super::StoreError::Backend
/// [`StoreError::OutcomeUnknown`]: super::StoreError::OutcomeUnknown
/// [`StoreError::is_timeout`]: super::StoreError::is_timeout
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the checkpoint store did not answer within {limit:?}")]
pub struct TimedOut {
    limit: Duration,
}

impl TimedOut {
    /// The error of an operation that did not finish within `limit`.
    pub fn new(limit: Duration) -> Self {
        TimedOut { limit }
    }

    /// The bound that was reached.
    pub fn limit(&self) -> Duration {
        self.limit
    }
}
