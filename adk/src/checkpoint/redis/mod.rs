//! [`RedisStore`]: checkpoints in Redis (feature `redis`).

use std::sync::Arc;
use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{
    AsyncCommands as _, Client, ErrorKind, FromRedisValue, RedisError, Script, ScriptInvocation,
};
use futures::future::BoxFuture;

use super::bound::{self, Sent};
use super::store::{CheckpointStore, StoreError, StoredRecord, ThreadEntry};
use super::timeout::OPERATION_TIMEOUT;

/// A store in Redis: checkpoints shared by every host that reaches the server, that
/// expire on their own.
///
/// Pick it when several hosts serve the same agents and you already run Redis, and
/// checkpoints are worth keeping for a while (an approval that waits a day) rather than
/// forever: Redis expires them itself. For records kept for good pick `PostgresStore`;
/// for one host, `SqliteStore` ([which store](super#which-store)).
///
/// Plain keys and Lua scripts, no module (RedisJSON, RediSearch) needed; Redis 5 or
/// later. Each append is one script that finds the head, writes the record and files the
/// thread under its owner atomically, so concurrent appends from any number of
/// processes get [`StoreError::Conflict`], never a lost update. The connection is
/// redis-rs's [`ConnectionManager`]: one multiplexed connection that reconnects by
/// itself; clones share it.
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
///   memory pressure must not evict it: use a `volatile-*` policy or none);
/// - `adk:{T}:owner`: its owner (see
///   [`append_owned`](CheckpointStore::append_owned)), which never expires either;
///
/// and an owner `O` has `adk:owners:O`, a sorted set of its threads scored by minus the
/// time their head was written (ms, on the server's clock), so that
/// [`threads`](CheckpointStore::threads) reads a page of them newest first; the append
/// script keeps it, and the threads whose head expired leave it.
///
/// The braces make a thread's keys one hash tag; an owner's set is another, so the
/// store runs on one Redis server (with its replicas), not on a Redis Cluster. Stores
/// that share a prefix should share an expiry.
///
/// # Outages
///
/// Each operation ends within the store's [bound](Self::operation_timeout) (10 s unless
/// set). A write that the server refused, or that could not be sent (no connection),
/// was not applied ([`StoreError::Backend`]); one whose answer never came may have been
/// ([`StoreError::OutcomeUnknown`]): a frozen server (`SIGSTOP`, a long fork, a full
/// disk) applies what it received when it wakes. [`connect`](Self::connect) sets no
/// response timeout of redis-rs's own (its default is 500 ms), so that only the bound
/// cuts a write off, and reconnects briefly (three attempts) so that a write to a server
/// that is down fails soon, as not applied.
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
    limit: Duration,
    scripts: Arc<Scripts>,
}

/// The Lua scripts, each sent by its hash (and loaded again if the server lost it).
struct Scripts {
    append: Script,
    head: Script,
    list: Script,
    threads: Script,
    delete: Script,
}

/// The keys of one thread.
struct Keys {
    versions: String,
    last: String,
    owner: String,
    /// The record keys, without the version.
    records: String,
}

impl RedisStore {
    /// Connects to the server at `url` (`redis://[user:password@]host[:port][/db]`),
    /// with a connection that leaves answers to the store's
    /// [bound](Self::operation_timeout) (no response timeout of its own) and reconnects
    /// three times at most (100 ms, then 200 ms apart; 1 s to connect each), so that a
    /// write to a server that is down fails soon, as not applied.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the URL is invalid or the server cannot be reached.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let client = Client::open(url).map_err(StoreError::backend)?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(None)
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(200));
        let connection = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(StoreError::backend)?;
        Ok(RedisStore::new(connection))
    }

    /// A store on a connection you made (its configuration: timeouts, retries). The
    /// store's [bound](Self::operation_timeout) holds over it; a response timeout of
    /// the connection's own (redis-rs's default is 500 ms) ends a write that waits longer
    /// as [`StoreError::OutcomeUnknown`].
    pub fn new(connection: ConnectionManager) -> Self {
        RedisStore {
            connection,
            prefix: "adk:".to_owned(),
            expire_after: None,
            limit: OPERATION_TIMEOUT,
            scripts: Arc::new(Scripts {
                append: Script::new(include_str!("append.lua")),
                head: Script::new(include_str!("head.lua")),
                list: Script::new(include_str!("list.lua")),
                threads: Script::new(include_str!("threads.lua")),
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

    /// How long one operation may take, the wait for a connection included (default
    /// [`OPERATION_TIMEOUT`](super::OPERATION_TIMEOUT), 10 s). An operation that reaches
    /// it fails with a [`TimedOut`](super::TimedOut) error: a read as
    /// [`StoreError::Backend`], a write as [`StoreError::OutcomeUnknown`] (it may have
    /// been sent: a frozen server applies it when it wakes).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use tower_adk::checkpoint::RedisStore;
    ///
    /// # async fn run() -> Result<(), tower_adk::checkpoint::StoreError> {
    /// // A run whose checkpoint gets no answer ends within 2 s.
    /// let store = RedisStore::connect("redis://127.0.0.1:6379")
    ///     .await?
    ///     .operation_timeout(Duration::from_secs(2));
    /// # Ok(())
    /// # }
    /// ```
    pub fn operation_timeout(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    fn keys(&self, thread: &str) -> Keys {
        let base = format!("{}{{{thread}}}", self.prefix);
        Keys {
            versions: format!("{base}:versions"),
            last: format!("{base}:last"),
            owner: format!("{base}:owner"),
            records: format!("{base}:v:"),
        }
    }

    /// The prefix of the owners' sets of threads.
    fn owners(&self) -> String {
        format!("{}owners:", self.prefix)
    }

    /// Runs the script of a write within the store's bound.
    async fn write<T: FromRedisValue>(
        &self,
        invocation: &ScriptInvocation<'_>,
    ) -> Result<T, StoreError> {
        // The script goes out at once: a write cut off waited for its answer, or for a
        // connection, which cannot be told apart from outside.
        let sent = Sent::default();
        sent.now();
        let mut connection = self.connection.clone();
        let reply = async {
            let reply = invocation.invoke_async(&mut connection).await;
            reply.map_err(|e| failed(&sent, e))
        };
        bound::write(self.limit, &sent, reply).await
    }

    /// Appends a record, with its thread's owner if it is given (else the thread keeps
    /// the one it has), within the store's bound.
    async fn append_now(
        &self,
        thread: &str,
        owner: Option<&str>,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> Result<u64, StoreError> {
        let keys = self.keys(thread);
        let expected_arg = expected.map(|v| v.to_string()).unwrap_or_default();
        let mut invocation = self.scripts.append.key(&keys.versions);
        invocation
            .key(&keys.last)
            .key(&keys.owner)
            .arg(&keys.records)
            .arg(expected_arg)
            .arg(bytes)
            .arg(self.ttl_ms())
            .arg(owner.unwrap_or_default())
            .arg(self.owners())
            .arg(thread);
        let reply: Vec<u64> = self.write(&invocation).await?;
        match reply[..] {
            [1, version] => Ok(version),
            [0, ..] => Err(StoreError::Conflict {
                thread: thread.to_owned(),
                expected,
                found: reply.get(1).copied(),
            }),
            _ => Err(StoreError::outcome_unknown(format!(
                "the append script answered {reply:?}"
            ))),
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
    fn kind(&self) -> &'static str {
        "redis"
    }

    fn head<'a>(
        &'a self,
        thread: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        Box::pin(bound::read(self.limit, async move {
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
        }))
    }

    fn get<'a>(
        &'a self,
        thread: &'a str,
        version: u64,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        Box::pin(bound::read(self.limit, async move {
            let key = format!("{}{version}", self.keys(thread).records);
            let bytes: Option<Vec<u8>> = self
                .connection
                .clone()
                .get(key)
                .await
                .map_err(StoreError::backend)?;
            Ok(bytes.map(|bytes| StoredRecord::new(version, bytes)))
        }))
    }

    fn append<'a>(
        &'a self,
        thread: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(self.append_now(thread, None, expected, bytes))
    }

    fn append_owned<'a>(
        &'a self,
        thread: &'a str,
        owner: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(self.append_now(thread, Some(owner), expected, bytes))
    }

    fn threads<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a ThreadEntry>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ThreadEntry>, StoreError>> {
        Box::pin(bound::read(self.limit, async move {
            let (written, name) = after.map_or((String::new(), ""), |after| {
                (after.written.to_string(), after.thread.as_str())
            });
            let listed: Vec<(String, u64, u64)> = self
                .scripts
                .threads
                .key(format!("{}{owner}", self.owners()))
                .arg(&self.prefix)
                .arg(written)
                .arg(name)
                .arg(u64::try_from(limit).unwrap_or(u64::MAX))
                .arg(self.ttl_ms())
                .invoke_async(&mut self.connection.clone())
                .await
                .map_err(StoreError::backend)?;
            let entry = |(thread, version, written)| ThreadEntry::new(thread, version, written);
            Ok(listed.into_iter().map(entry).collect())
        }))
    }

    fn list<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<u64>, StoreError>> {
        Box::pin(bound::read(self.limit, async move {
            let keys = self.keys(thread);
            self.scripts
                .list
                .key(&keys.versions)
                .arg(&keys.records)
                .invoke_async(&mut self.connection.clone())
                .await
                .map_err(StoreError::backend)
        }))
    }

    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let keys = self.keys(thread);
            let mut invocation = self.scripts.delete.key(&keys.versions);
            invocation
                .key(&keys.last)
                .key(&keys.owner)
                .arg(&keys.records)
                .arg(self.owners())
                .arg(thread);
            let deleted: u64 = self.write(&invocation).await?;
            Ok(deleted > 0)
        })
    }
}

/// The error of a write that failed: not applied when the server refused it or no
/// connection could be made; else (the connection broke, the answer could not be read)
/// it may have been.
fn failed(sent: &Sent, error: RedisError) -> StoreError {
    let refused = matches!(
        error.kind(),
        ErrorKind::Server(_)
            | ErrorKind::Extension
            | ErrorKind::Client
            | ErrorKind::AuthenticationFailed
            | ErrorKind::InvalidClientConfig
    );
    if refused || error.is_connection_refusal() {
        StoreError::backend(error)
    } else {
        sent.failed(error)
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
