//! The store seam: [`CheckpointStore`], a small async trait over versioned byte records
//! kept per thread, with compare-and-swap on the version.

use std::sync::Arc;

use futures::future::BoxFuture;
use tower::BoxError;

use super::timeout::TimedOut;

/// One stored record: a thread's checkpoint at a version, as bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredRecord {
    /// The version: 1 for a thread's first record, one more for each after it.
    pub version: u64,
    /// The record, as the run wrote it (see [`Checkpoint`](crate::agent::Checkpoint)).
    pub bytes: Vec<u8>,
}

impl StoredRecord {
    /// A record at this version.
    pub fn new(version: u64, bytes: Vec<u8>) -> Self {
        StoredRecord { version, bytes }
    }
}

/// Why a store could not do what it was asked.
///
/// A failed write is one of two things, and a caller who retries must tell them apart:
/// [`Backend`](StoreError::Backend), the write was not applied (the store said so, or
/// the request never left); or [`OutcomeUnknown`](StoreError::OutcomeUnknown), the
/// request left but its answer never came (a timeout, a connection that dropped), so the
/// write may have been applied. Reading the thread's head tells which.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The thread's newest record is not at the version the writer expected: someone
    /// else wrote to the thread first. Nothing was written.
    #[error("the thread `{thread}` is at version {found:?}, not at the expected {expected:?}")]
    Conflict {
        /// The thread.
        thread: String,
        /// The version the writer expected (`None`: no record).
        expected: Option<u64>,
        /// The version found (`None`: no record).
        found: Option<u64>,
    },
    /// The store's backend failed (a connection, a query), or did not answer within the
    /// store's bound ([`TimedOut`]) before a write was sent. A write
    /// that fails so was not applied.
    #[error("the checkpoint store failed: {0}")]
    Backend(#[source] BoxError),
    /// A write was sent but its answer never came: the store's bound passed
    /// ([`TimedOut`]) or the connection dropped while it waited. The
    /// write may have been applied, now or later (a frozen server applies what it
    /// received when it wakes): read the thread's head to know, never retry blindly.
    #[error("the checkpoint store may or may not have applied the write: {0}")]
    OutcomeUnknown(#[source] BoxError),
    /// The store cannot do this (a store of your own that does not list threads).
    #[error("the checkpoint store cannot {0}")]
    Unsupported(&'static str),
}

impl StoreError {
    /// A backend failure: a write that fails so was not applied.
    pub fn backend(error: impl Into<BoxError>) -> Self {
        StoreError::Backend(error.into())
    }

    /// A write whose answer never came: it may have been applied.
    pub fn outcome_unknown(error: impl Into<BoxError>) -> Self {
        StoreError::OutcomeUnknown(error.into())
    }

    /// Whether this is a [`StoreError::Conflict`].
    pub fn is_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict { .. })
    }

    /// Whether this is a [`StoreError::OutcomeUnknown`]: the write may have been
    /// applied.
    pub fn is_outcome_unknown(&self) -> bool {
        matches!(self, StoreError::OutcomeUnknown(_))
    }

    /// Whether the store did not answer within its bound (the error's source is a
    /// [`TimedOut`]), whether or not the write may have been applied.
    pub fn is_timeout(&self) -> bool {
        match self {
            StoreError::Backend(source) | StoreError::OutcomeUnknown(source) => {
                source.is::<TimedOut>()
            }
            _ => false,
        }
    }
}

/// Where checkpoints are kept: versioned byte records, per thread.
///
/// A thread's records have versions 1, 2, 3...; the newest is its *head*. Writing is an
/// append that names the version the writer expects the head to be at
/// (compare-and-swap): when another writer got there first the append fails with
/// [`StoreError::Conflict`] and writes nothing, so two runs on one thread never lose an
/// update. Records expire after the store's configured time: an expired record reads as
/// absent, and versions keep growing past it (a version is never used twice for a
/// thread until the thread is deleted).
///
/// Every store of this crate passes the same conformance suite,
/// [`testing::check_store`](crate::testing::check_store); a store of your own can run it too.
///
/// Implementations return boxed futures so that the trait can be used as
/// `Arc<dyn CheckpointStore>`; write them as `Box::pin(async move { ... })`.
pub trait CheckpointStore: Send + Sync + 'static {
    /// What kind of store this is, in a word: the `store` label of the checkpoint
    /// metrics (feature `metrics`). This crate's stores say `memory`, `sqlite`,
    /// `postgres` and `redis`; the default is `custom`.
    ///
    /// ```
    /// use tower_adk::checkpoint::{CheckpointStore, MemoryStore};
    ///
    /// assert_eq!(MemoryStore::new().kind(), "memory");
    /// ```
    fn kind(&self) -> &'static str {
        "custom"
    }

    /// The thread's newest record, unless it has none (or it expired).
    fn head<'a>(
        &'a self,
        thread: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>>;

    /// The thread's record at `version`, unless there is none (or it expired).
    fn get<'a>(
        &'a self,
        thread: &'a str,
        version: u64,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>>;

    /// Appends `bytes` as the thread's new head, atomically, if the head is at
    /// `expected` (`None`: the thread has no record that has not expired). Returns the
    /// new version: one more than the newest version the thread ever had (1 for a new
    /// thread).
    ///
    /// # Errors
    ///
    /// [`StoreError::Conflict`] when the head is elsewhere; nothing is written then.
    /// [`StoreError::Backend`] when the store failed and wrote nothing,
    /// [`StoreError::OutcomeUnknown`] when the write was sent but its answer never came
    /// (it may have been applied).
    fn append<'a>(
        &'a self,
        thread: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>>;

    /// The versions of the thread's records that have not expired, oldest first.
    fn list<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<u64>, StoreError>>;

    /// Deletes every record of the thread; says whether there was any.
    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// [`append`](CheckpointStore::append)s a record of a thread that belongs to the
    /// principal whose subject is `owner` (the same for every record of a thread). A
    /// store that lists threads by owner ([`threads`](CheckpointStore::threads)) keeps
    /// the owner and the time of the write with the record, in the same atomic step.
    /// The default forgets the owner and appends.
    ///
    /// # Errors
    ///
    /// As [`append`](CheckpointStore::append)'s.
    fn append_owned<'a>(
        &'a self,
        thread: &'a str,
        owner: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let _ = owner;
        self.append(thread, expected, bytes)
    }

    /// The threads of `owner` (as [`append_owned`](CheckpointStore::append_owned) wrote
    /// them) whose head has not expired, the most recently written first (then by
    /// name): up to `limit` of them, those after `after` in that order when it is given
    /// (the last entry of the page before).
    ///
    /// # Errors
    ///
    /// The backend's; [`StoreError::Unsupported`] from a store that does not list
    /// threads (the default).
    fn threads<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a ThreadEntry>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ThreadEntry>, StoreError>> {
        let _ = (owner, after, limit);
        Box::pin(std::future::ready(Err(StoreError::Unsupported(
            "list threads by owner",
        ))))
    }
}

/// A thread as its owner's listing shows it (see [`CheckpointStore::threads`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadEntry {
    /// The thread.
    pub thread: String,
    /// The version of its head.
    pub version: u64,
    /// When its head was written, in milliseconds since the Unix epoch.
    pub written: u64,
}

impl ThreadEntry {
    /// An entry for `thread`, whose head is at `version`, written at `written`
    /// (milliseconds since the Unix epoch).
    pub fn new(thread: impl Into<String>, version: u64, written: u64) -> Self {
        ThreadEntry {
            thread: thread.into(),
            version,
            written,
        }
    }

    /// Whether `self` comes after `other` in a listing: written earlier, or at the same
    /// time with a later name.
    pub fn is_after(&self, other: &ThreadEntry) -> bool {
        (other.written, &self.thread) > (self.written, &other.thread)
    }
}

impl<S: CheckpointStore + ?Sized> CheckpointStore for Arc<S> {
    fn kind(&self) -> &'static str {
        (**self).kind()
    }

    fn head<'a>(
        &'a self,
        thread: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        (**self).head(thread)
    }

    fn get<'a>(
        &'a self,
        thread: &'a str,
        version: u64,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        (**self).get(thread, version)
    }

    fn append<'a>(
        &'a self,
        thread: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        (**self).append(thread, expected, bytes)
    }

    fn list<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<u64>, StoreError>> {
        (**self).list(thread)
    }

    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).delete_thread(thread)
    }

    fn append_owned<'a>(
        &'a self,
        thread: &'a str,
        owner: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        (**self).append_owned(thread, owner, expected, bytes)
    }

    fn threads<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a ThreadEntry>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ThreadEntry>, StoreError>> {
        (**self).threads(owner, after, limit)
    }
}
