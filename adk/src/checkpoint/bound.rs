//! Running one operation of a store within the store's bound: a read that reaches it
//! failed; a write that reaches it was not applied if it had not been sent yet, and has
//! an unknown outcome if it had ([`Sent`] tells which).

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::store::StoreError;
use super::timeout::TimedOut;

/// Whether a write has sent what applies it: from then on, a write that fails without
/// the store's word may have been applied.
#[derive(Debug, Default)]
pub(super) struct Sent(AtomicBool);

impl Sent {
    /// The write is about to send what applies it (the statement, the commit, the
    /// script).
    pub(super) fn now(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the write has sent what applies it.
    pub(super) fn yet(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// A failure of the write with no word from the store on what it did: not applied
    /// before the write was sent, unknown after.
    pub(super) fn failed(&self, error: impl Into<tower::BoxError>) -> StoreError {
        if self.yet() {
            StoreError::outcome_unknown(error)
        } else {
            StoreError::backend(error)
        }
    }
}

/// Runs a read, failing with [`TimedOut`] after `limit`.
pub(super) async fn read<T>(
    limit: Duration,
    read: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(limit, read).await {
        Ok(read) => read,
        Err(_) => Err(StoreError::backend(TimedOut::new(limit))),
    }
}

/// Runs a write that marks in `sent` when it sends what applies it, failing with
/// [`TimedOut`] after `limit`: not applied before it was sent, unknown after.
pub(super) async fn write<T>(
    limit: Duration,
    sent: &Sent,
    write: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(limit, write).await {
        Ok(write) => write,
        Err(_) => Err(sent.failed(TimedOut::new(limit))),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Sent, read, write};
    use crate::checkpoint::StoreError;

    const LIMIT: Duration = Duration::from_millis(20);

    #[tokio::test]
    async fn a_write_cut_off_before_it_was_sent_was_not_applied() {
        let sent = Sent::default();
        let never = std::future::pending::<Result<(), StoreError>>();
        let Err(error) = write(LIMIT, &sent, never).await else {
            panic!("a write that never ends ended");
        };
        assert!(
            matches!(error, StoreError::Backend(_)) && error.is_timeout(),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn a_write_cut_off_after_it_was_sent_has_an_unknown_outcome() {
        let sent = Sent::default();
        let waits = async {
            sent.now();
            std::future::pending::<Result<(), StoreError>>().await
        };
        let Err(error) = write(LIMIT, &sent, waits).await else {
            panic!("a write that never ends ended");
        };
        assert!(
            error.is_outcome_unknown() && error.is_timeout(),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn a_read_cut_off_failed() {
        let never = std::future::pending::<Result<(), StoreError>>();
        let Err(error) = read(LIMIT, never).await else {
            panic!("a read that never ends ended");
        };
        assert!(
            matches!(error, StoreError::Backend(_)) && error.is_timeout(),
            "{error:?}"
        );
    }
}
