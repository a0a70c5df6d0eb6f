//! The store seam: [`CheckpointStore`], a small async trait over versioned byte records
//! kept per thread, with compare-and-swap on the version; and [`MemoryStore`], the store
//! that keeps them in this process.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use tower::BoxError;

/// One stored record: a thread's checkpoint at a version, as bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredRecord {
    /// The version: 1 for a thread's first record, one more for each after it.
    pub version: u64,
    /// The record, as the run wrote it (see [`Checkpoint`](super::Checkpoint)).
    pub bytes: Vec<u8>,
}

impl StoredRecord {
    /// A record at this version.
    pub fn new(version: u64, bytes: Vec<u8>) -> Self {
        StoredRecord { version, bytes }
    }
}

/// Why a store could not do what it was asked.
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
    /// The store's backend failed (a connection, a query).
    #[error("the checkpoint store failed: {0}")]
    Backend(#[source] BoxError),
}

impl StoreError {
    /// A backend failure.
    pub fn backend(error: impl Into<BoxError>) -> Self {
        StoreError::Backend(error.into())
    }

    /// Whether this is a [`StoreError::Conflict`].
    pub fn is_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict { .. })
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
}

impl<S: CheckpointStore + ?Sized> CheckpointStore for Arc<S> {
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
}

/// A store in this process's memory: for tests, and for interrupts that are answered
/// while the process lives. Clones share the records.
///
/// # Example
///
/// ```
/// use tower_adk::checkpoint::{CheckpointStore, MemoryStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryStore::new();
/// let v1 = store.append("t1", None, b"first".to_vec()).await?;
/// let v2 = store.append("t1", Some(v1), b"second".to_vec()).await?;
/// assert_eq!((v1, v2), (1, 2));
/// // A writer that still expects version 1 is refused.
/// assert!(store.append("t1", Some(v1), b"lost".to_vec()).await.unwrap_err().is_conflict());
/// assert_eq!(store.head("t1").await?.map(|r| r.bytes), Some(b"second".to_vec()));
/// # Ok::<_, tower_adk::checkpoint::StoreError>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Default)]
pub struct MemoryStore {
    threads: Arc<Mutex<HashMap<String, Thread>>>,
    expire_after: Option<Duration>,
}

/// A thread's records, oldest first, and the newest version it ever had.
#[derive(Default)]
struct Thread {
    records: Vec<(StoredRecord, SystemTime)>,
    last: u64,
}

impl MemoryStore {
    /// An empty store whose records do not expire.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    /// Records expire this long after they were written.
    pub fn expire_after(mut self, ttl: Duration) -> Self {
        self.expire_after = Some(ttl);
        self
    }

    /// Runs `f` on the thread's records, without those that expired (on an empty
    /// thread when it has none; only `append` keeps a thread that was not there).
    fn with_thread<T>(&self, thread: &str, f: impl FnOnce(&mut Thread) -> T) -> T {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(entry) = threads.get_mut(thread) else {
            return f(&mut Thread::default());
        };
        if let Some(ttl) = self.expire_after {
            let now = SystemTime::now();
            entry
                .records
                .retain(|(_, written)| now.duration_since(*written).unwrap_or_default() < ttl);
        }
        f(entry)
    }
}

impl CheckpointStore for MemoryStore {
    fn head<'a>(
        &'a self,
        thread: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        let head = self.with_thread(thread, |t| t.records.last().map(|(r, _)| r.clone()));
        Box::pin(std::future::ready(Ok(head)))
    }

    fn get<'a>(
        &'a self,
        thread: &'a str,
        version: u64,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        let record = self.with_thread(thread, |t| {
            let found = t.records.iter().find(|(r, _)| r.version == version);
            found.map(|(r, _)| r.clone())
        });
        Box::pin(std::future::ready(Ok(record)))
    }

    fn append<'a>(
        &'a self,
        thread: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.threads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(thread.to_owned())
            .or_default();
        let appended = self.with_thread(thread, |t| {
            let found = t.records.last().map(|(r, _)| r.version);
            if found != expected {
                return Err(StoreError::Conflict {
                    thread: thread.to_owned(),
                    expected,
                    found,
                });
            }
            t.last += 1;
            let record = StoredRecord::new(t.last, bytes);
            t.records.push((record, SystemTime::now()));
            Ok(t.last)
        });
        Box::pin(std::future::ready(appended))
    }

    fn list<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<u64>, StoreError>> {
        let versions = self.with_thread(thread, |t| {
            t.records.iter().map(|(r, _)| r.version).collect()
        });
        Box::pin(std::future::ready(Ok(versions)))
    }

    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let deleted = threads
            .remove(thread)
            .is_some_and(|t| !t.records.is_empty());
        Box::pin(std::future::ready(Ok(deleted)))
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let threads = self.threads.lock().map(|t| t.len()).unwrap_or_default();
        f.debug_struct("MemoryStore")
            .field("threads", &threads)
            .field("expire_after", &self.expire_after)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::MemoryStore;
    use crate::testing::check_store;

    #[tokio::test]
    async fn memory_store_keeps_the_store_contract() {
        check_store(|ttl| async move {
            match ttl {
                Some(ttl) => MemoryStore::new().expire_after(ttl),
                None => MemoryStore::new(),
            }
        })
        .await;
    }
}
