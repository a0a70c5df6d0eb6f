//! [`MemoryStore`]: the store that keeps a thread's records in this process.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;

use super::store::{CheckpointStore, StoreError, StoredRecord, ThreadEntry};

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

/// A thread's records, oldest first, the newest version it ever had, and its owner.
#[derive(Default)]
struct Thread {
    records: Vec<(StoredRecord, SystemTime)>,
    last: u64,
    owner: Option<String>,
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

    /// Appends a record, keeping the thread's owner when it is given.
    fn append_now(
        &self,
        thread: &str,
        owner: Option<&str>,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> Result<u64, StoreError> {
        self.threads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(thread.to_owned())
            .or_default();
        self.with_thread(thread, |t| {
            let found = t.records.last().map(|(r, _)| r.version);
            if found != expected {
                return Err(StoreError::Conflict {
                    thread: thread.to_owned(),
                    expected,
                    found,
                });
            }
            if let Some(owner) = owner {
                t.owner = Some(owner.to_owned());
            }
            t.last += 1;
            let record = StoredRecord::new(t.last, bytes);
            t.records.push((record, SystemTime::now()));
            Ok(t.last)
        })
    }
}

impl CheckpointStore for MemoryStore {
    fn kind(&self) -> &'static str {
        "memory"
    }

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
        Box::pin(std::future::ready(
            self.append_now(thread, None, expected, bytes),
        ))
    }

    fn append_owned<'a>(
        &'a self,
        thread: &'a str,
        owner: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let appended = self.append_now(thread, Some(owner), expected, bytes);
        Box::pin(std::future::ready(appended))
    }

    fn threads<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a ThreadEntry>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ThreadEntry>, StoreError>> {
        let names: Vec<String> = {
            let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
            let owned = threads
                .iter()
                .filter(|(_, t)| t.owner.as_deref() == Some(owner));
            owned.map(|(name, _)| name.clone()).collect()
        };
        let mut entries: Vec<ThreadEntry> = (names.into_iter())
            .filter_map(|name| {
                let (head, written) = self.with_thread(&name, |t| t.records.last().cloned())?;
                Some(ThreadEntry::new(name, head.version, millis(written)))
            })
            .filter(|entry| after.is_none_or(|after| entry.is_after(after)))
            .collect();
        entries.sort_by(|a, b| (b.written, &a.thread).cmp(&(a.written, &b.thread)));
        entries.truncate(limit);
        Box::pin(std::future::ready(Ok(entries)))
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

/// Milliseconds since the Unix epoch.
fn millis(at: SystemTime) -> u64 {
    let since = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
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
