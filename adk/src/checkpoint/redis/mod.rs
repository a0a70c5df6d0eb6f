//! [`RedisStore`]: checkpoints in Redis (feature `redis`).

use std::sync::Arc;
use std::time::Duration;

use ::redis::aio::ConnectionManager;
use ::redis::{AsyncCommands as _, Client, Script};
use futures::future::BoxFuture;

use super::{CheckpointStore, StoreError, StoredRecord};

/// A store in Redis: checkpoints shared by every host that reaches the server, that
/// expire on their own.
///
/// Pick it when several hosts serve the same agents and you already run Redis, and
/// checkpoints are worth keeping for a while (an approval that waits a day) rather than
/// forever: Redis expires them itself. For records kept for good pick `PostgresStore`;
/// for one host, `SqliteStore` ([which store](super#which-store)).
///
/// Plain keys and Lua scripts, no module (RedisJSON, RediSearch) needed. Each append is
/// one script that finds the head and writes the record atomically, so concurrent
/// appends from any number of processes get [`StoreError::Conflict`], never a lost
/// update. The connection is redis-rs's [`ConnectionManager`]: one multiplexed
/// connection that reconnects by itself; clones share it.
///
/// # Keys
///
/// With the default [prefix](Self::prefix) `adk:`, a thread `T` has
/// - `adk:{T}:v:N`: the record at version `N`, a string, with `PEXPIRE` set to the
///   [expiry](Self::expire_after);
/// - `adk:{T}:versions`: a sorted set of its versions; versions whose record expired
///   are skipped when read and forgotten by the next append;
/// - `adk:{T}:last`: the newest version it ever had, which never expires, so that
///   versions keep growing past expired records (a server that evicts keys under
///   memory pressure must not evict it: use a `volatile-*` policy or none).
///
/// The braces make the thread's keys one hash tag. Stores that share a prefix should
/// share an expiry.
///
/// # Example
///
/// ```no_run
/// use std::time::Duration;
/// use tower_adk::checkpoint::{CheckpointStore, RedisStore};
///
/// # async fn run() -> Result<(), tower_adk::checkpoint::StoreError> {
/// let store = RedisStore::connect("redis://127.0.0.1:6379")
///     .await?
///     .prefix("support-bot:")
///     .expire_after(Duration::from_secs(24 * 3600));
/// let v1 = store.append("thread-1", None, b"state".to_vec()).await?;
/// assert_eq!(store.head("thread-1").await?.map(|r| r.version), Some(v1));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    prefix: String,
    expire_after: Option<Duration>,
    scripts: Arc<Scripts>,
}

/// The Lua scripts, each sent by its hash (and loaded again if the server lost it).
struct Scripts {
    append: Script,
    head: Script,
    list: Script,
    delete: Script,
}

/// The keys of one thread.
struct Keys {
    versions: String,
    last: String,
    /// The record keys, without the version.
    records: String,
}

impl RedisStore {
    /// Connects to the server at `url` (`redis://[user:password@]host[:port][/db]`).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the URL is invalid or the server cannot be reached.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let client = Client::open(url).map_err(StoreError::backend)?;
        let connection = ConnectionManager::new(client)
            .await
            .map_err(StoreError::backend)?;
        Ok(RedisStore::new(connection))
    }

    /// A store on a connection you made (its configuration: timeouts, retries).
    pub fn new(connection: ConnectionManager) -> Self {
        RedisStore {
            connection,
            prefix: "adk:".to_owned(),
            expire_after: None,
            scripts: Arc::new(Scripts {
                append: Script::new(include_str!("append.lua")),
                head: Script::new(include_str!("head.lua")),
                list: Script::new(include_str!("list.lua")),
                delete: Script::new(include_str!("delete.lua")),
            }),
        }
    }

    /// Starts every key with this prefix instead of `adk:`, so that several stores (or
    /// applications) share a server.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Records expire this long after they were written (rounded up to a millisecond).
    pub fn expire_after(mut self, ttl: Duration) -> Self {
        self.expire_after = Some(ttl);
        self
    }

    fn keys(&self, thread: &str) -> Keys {
        let base = format!("{}{{{thread}}}", self.prefix);
        Keys {
            versions: format!("{base}:versions"),
            last: format!("{base}:last"),
            records: format!("{base}:v:"),
        }
    }

    /// The expiry in ms, as the append script takes it (0: none).
    fn ttl_ms(&self) -> u64 {
        self.expire_after.map_or(0, |ttl| {
            let ms = ttl.as_nanos().div_ceil(1_000_000).max(1);
            u64::try_from(ms).unwrap_or(u64::MAX)
        })
    }
}

impl CheckpointStore for RedisStore {
    fn head<'a>(
        &'a self,
        thread: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        Box::pin(async move {
            let keys = self.keys(thread);
            let head: Option<(u64, Vec<u8>)> = self
                .scripts
                .head
                .key(&keys.versions)
                .arg(&keys.records)
                .invoke_async(&mut self.connection.clone())
                .await
                .map_err(StoreError::backend)?;
            Ok(head.map(|(version, bytes)| StoredRecord::new(version, bytes)))
        })
    }

    fn get<'a>(
        &'a self,
        thread: &'a str,
        version: u64,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        Box::pin(async move {
            let key = format!("{}{version}", self.keys(thread).records);
            let bytes: Option<Vec<u8>> = self
                .connection
                .clone()
                .get(key)
                .await
                .map_err(StoreError::backend)?;
            Ok(bytes.map(|bytes| StoredRecord::new(version, bytes)))
        })
    }

    fn append<'a>(
        &'a self,
        thread: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let keys = self.keys(thread);
            let expected_arg = expected.map(|v| v.to_string()).unwrap_or_default();
            let reply: Vec<u64> = self
                .scripts
                .append
                .key(&keys.versions)
                .key(&keys.last)
                .arg(&keys.records)
                .arg(expected_arg)
                .arg(bytes)
                .arg(self.ttl_ms())
                .invoke_async(&mut self.connection.clone())
                .await
                .map_err(StoreError::backend)?;
            match reply[..] {
                [1, version] => Ok(version),
                [0, ..] => Err(StoreError::Conflict {
                    thread: thread.to_owned(),
                    expected,
                    found: reply.get(1).copied(),
                }),
                _ => Err(StoreError::backend(format!(
                    "the append script answered {reply:?}"
                ))),
            }
        })
    }

    fn list<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<u64>, StoreError>> {
        Box::pin(async move {
            let keys = self.keys(thread);
            self.scripts
                .list
                .key(&keys.versions)
                .arg(&keys.records)
                .invoke_async(&mut self.connection.clone())
                .await
                .map_err(StoreError::backend)
        })
    }

    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let keys = self.keys(thread);
            let deleted: u64 = self
                .scripts
                .delete
                .key(&keys.versions)
                .key(&keys.last)
                .arg(&keys.records)
                .invoke_async(&mut self.connection.clone())
                .await
                .map_err(StoreError::backend)?;
            Ok(deleted > 0)
        })
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .field("expire_after", &self.expire_after)
            .finish_non_exhaustive()
    }
}
