//! [`SqliteStore`]: checkpoints in one SQLite file (feature `sqlite`).

use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Row as _, Sqlite, Transaction};

mod direct;

use self::direct::{Append, Appended, Direct};
use super::bound::Sent;
use super::sql::{self, Sql, SqlStore, Statements, failed, from_db};
use super::store::StoreError;
use super::timeout::OPERATION_TIMEOUT;

/// The tables, created when missing. `threads.last` is the newest version a thread ever
/// had, so that versions keep growing past records that expired.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS checkpoints (
    thread TEXT NOT NULL,
    version INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    written_at INTEGER NOT NULL, -- unix time, ms
    PRIMARY KEY (thread, version)
);
CREATE TABLE IF NOT EXISTS threads (
    thread TEXT PRIMARY KEY NOT NULL,
    last INTEGER NOT NULL
);
";

/// The columns that list an owner's threads (issue #23), added to the threads of files
/// that earlier versions made: its owner, and when its head was written (unix ms).
/// Threads written before have none, and are listed to no one.
const OWNERS: &str = "
ALTER TABLE threads ADD COLUMN owner TEXT;
ALTER TABLE threads ADD COLUMN written_at INTEGER;
";

/// An owner's threads, newest first, as one range.
const OWNERS_INDEX: &str = "
CREATE INDEX IF NOT EXISTS threads_owner ON threads (owner, written_at DESC, thread)
    WHERE owner IS NOT NULL;
";

/// The reads, the listing and the deletes: a record is live when written after the
/// cutoff, `$1`; SQLite compares text byte by byte already.
static STATEMENTS: LazyLock<Statements> =
    LazyLock::new(|| Statements::new("checkpoints", "threads", "$1", ""));

/// A store in one SQLite file: checkpoints survive restarts, with no server to run.
///
/// Pick it when the runs live on one host (one process, or several sharing the file):
/// a CLI, a desktop app, a single server. For several hosts pick `PostgresStore` or
/// `RedisStore` ([which store](super#which-store)).
///
/// The file is opened in WAL mode (readers do not wait for the writer) with full
/// synchronous commits: an append that returned is on disk. Each append is one
/// `BEGIN IMMEDIATE` transaction that checks the head and writes the record, sent to
/// SQLite as one script (one trip to the connection's thread), so writers in other
/// processes are refused with a conflict, never overwritten; the appends of one store
/// take turns before they reach the file. Clones share the connection pool.
///
/// Opened at `synchronous=NORMAL` or `OFF` ([`open_with`](Self::open_with)), where a
/// commit waits for no disk, the store makes its appends on the caller's thread instead,
/// on a connection of its own: the same transaction, in tens of microseconds, with no trip
/// to sqlx's thread. It never waits there: an append that finds another writer holding
/// the file goes through the pool (which waits, as above), and so does one append in 64,
/// whose connection checkpoints the write-ahead log once it has grown (a checkpoint syncs
/// the disk).
///
/// # Tables
///
/// Created when missing: `checkpoints(thread, version, bytes, written_at)` with the
/// records (`written_at` in unix milliseconds), and `threads(thread, last, owner,
/// written_at)` with the newest version each thread ever had, its owner (see
/// [`append_owned`](super::CheckpointStore::append_owned)) and when its head was written, which
/// the append sets in its transaction; an index on `(owner, written_at, thread)` lists an
/// owner's threads. A file of an earlier version gets the two columns and the index when
/// it is opened (its threads have no owner, and are listed to no one). With an
/// [expiry](Self::expire_after) an expired record reads as absent, and an append deletes
/// its thread's expired records.
///
/// # Outages
///
/// Each operation ends within the store's [bound](Self::operation_timeout) (10 s unless
/// set), its waits included: for its turn among the store's appends, for a connection,
/// and for the lock of another process that writes to the file (SQLite's busy timeout
/// is three quarters of the bound, so that a locked file fails an append with SQLite's
/// error before the bound cuts it off). A write that fails before its script was sent,
/// or with SQLite's error, was not applied ([`StoreError::Backend`]); one cut off by the
/// bound once sent may have been ([`StoreError::OutcomeUnknown`]).
///
/// # Example
///
/// ```no_run
/// use std::time::Duration;
/// use tower_adk::checkpoint::{CheckpointStore, SqliteStore};
///
/// # async fn run() -> Result<(), tower_adk::checkpoint::StoreError> {
/// let store = SqliteStore::open("checkpoints.db")
///     .await?
///     .expire_after(Duration::from_secs(7 * 24 * 3600));
/// let v1 = store.append("thread-1", None, b"state".to_vec()).await?;
/// assert_eq!(store.head("thread-1").await?.map(|r| r.version), Some(v1));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    expire_after: Option<Duration>,
    limit: Duration,
    /// `PRAGMA busy_timeout` for the bound, which each write sets on its connection.
    busy_timeout: String,
    /// The append's script ([`append_script`]), for the bound and the expiry.
    append: String,
    /// The store's appends take turns here, on the connections they keep between them.
    writer: Arc<tokio::sync::Mutex<Writer>>,
}

/// The connections a store's appends are made on, kept from one append to the next, so
/// that their page cache stays valid (another connection's write voids it).
#[derive(Debug)]
struct Writer {
    /// A connection taken out of the pool (so that dropping it needs no runtime), made
    /// when the first append needs it.
    pooled: Option<SqliteConnection>,
    /// The connection of the appends made on the caller's thread, when the file's commits
    /// wait for no disk ([`Direct`]).
    direct: Option<Direct>,
}

impl SqliteStore {
    /// Opens the file at `path` (creating it and the tables when missing), in WAL mode.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the file cannot be opened or the tables created.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .synchronous(SqliteSynchronous::Full);
        SqliteStore::open_with(options).await
    }

    /// Opens a file with connection options of your own; WAL mode and a busy timeout (the
    /// store's [bound](Self::operation_timeout)) are set over them.
    ///
    /// [`open`](Self::open) waits for the disk at every commit (`synchronous=FULL`):
    /// a checkpoint survives a power cut. With `synchronous=NORMAL` a commit survives a
    /// crash of the process (in WAL mode), not of the machine, and waits for no disk
    /// sync (see BENCHMARKS.md, "Durable runs", for what each costs).
    ///
    /// ```no_run
    /// use tower_adk::checkpoint::SqliteStore;
    /// use tower_adk::checkpoint::sqlx::sqlite::{SqliteConnectOptions, SqliteSynchronous};
    ///
    /// # async fn run() -> Result<(), tower_adk::checkpoint::StoreError> {
    /// let options = SqliteConnectOptions::new()
    ///     .filename("checkpoints.db")
    ///     .create_if_missing(true)
    ///     .synchronous(SqliteSynchronous::Normal);
    /// let store = SqliteStore::open_with(options).await?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the file cannot be opened or the tables created.
    pub async fn open_with(options: SqliteConnectOptions) -> Result<Self, StoreError> {
        let options = options
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(OPERATION_TIMEOUT);
        // Another process (or store) opening the same file at the same moment may hold it
        // while it turns the file to WAL or migrates it, which SQLite can answer with
        // "database is locked" without waiting: try again, within the operation bound.
        let started = std::time::Instant::now();
        let pool = loop {
            match prepare(options.clone()).await {
                Err(error) if busy(&error) && started.elapsed() < OPERATION_TIMEOUT => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                prepared => break prepared.map_err(StoreError::backend)?,
            }
        };
        let direct = Direct::open(&pool).await.map_err(StoreError::backend)?;
        Ok(SqliteStore {
            pool,
            expire_after: None,
            limit: OPERATION_TIMEOUT,
            busy_timeout: busy_timeout(OPERATION_TIMEOUT),
            append: append_script(OPERATION_TIMEOUT, false),
            writer: Arc::new(tokio::sync::Mutex::new(Writer {
                pooled: None,
                direct,
            })),
        })
    }

    /// Records expire this long after they were written.
    pub fn expire_after(mut self, ttl: Duration) -> Self {
        self.expire_after = Some(ttl);
        self.append = append_script(self.limit, true);
        self
    }

    /// How long one operation may take, waits included (default
    /// [`OPERATION_TIMEOUT`](super::OPERATION_TIMEOUT), 10 s): for its turn among the
    /// store's appends, for a connection, and for another process's lock on the file.
    /// An operation that reaches it fails with a [`TimedOut`](super::TimedOut) error: a
    /// read or a write not yet committing as [`StoreError::Backend`] (not applied), a
    /// write cut off while it commits as [`StoreError::OutcomeUnknown`].
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use tower_adk::checkpoint::SqliteStore;
    ///
    /// # async fn run() -> Result<(), tower_adk::checkpoint::StoreError> {
    /// // A run whose checkpoint cannot be written ends within 2 s, not 10.
    /// let store = SqliteStore::open("checkpoints.db")
    ///     .await?
    ///     .operation_timeout(Duration::from_secs(2));
    /// # Ok(())
    /// # }
    /// ```
    pub fn operation_timeout(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self.busy_timeout = busy_timeout(limit);
        self.append = append_script(limit, self.expire_after.is_some());
        self
    }

    /// The pool of connections to the file.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// A write transaction, on a connection that waits for another process's lock as
    /// long as the store's bound.
    async fn begin(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        let mut connection = self.pool.acquire().await.map_err(StoreError::backend)?;
        sqlx::query(&self.busy_timeout)
            .execute(&mut *connection)
            .await
            .map_err(StoreError::backend)?;
        let tx = Transaction::begin(connection, Some("BEGIN IMMEDIATE".into()));
        tx.await.map_err(StoreError::backend)
    }

    /// The error of an append that found the thread's head was not the one expected,
    /// with the version of the thread's newest live record.
    async fn conflict(&self, thread: &str, expected: Option<u64>, cutoff: i64) -> StoreError {
        let found: Result<Option<i64>, _> = sqlx::query_scalar(
            "SELECT max(version) FROM checkpoints WHERE thread = ? AND written_at > ?",
        )
        .bind(thread)
        .bind(cutoff)
        .fetch_one(&self.pool)
        .await;
        match found
            .map_err(StoreError::backend)
            .and_then(|found| found.map(from_db).transpose())
        {
            Ok(found) => StoreError::Conflict {
                thread: thread.to_owned(),
                expected,
                found,
            },
            Err(error) => error,
        }
    }

    /// The time now and the time before which records have expired, in unix ms.
    fn clock(&self) -> (i64, i64) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis();
        let now = i64::try_from(now).unwrap_or(i64::MAX);
        let cutoff = match self.expire_after {
            Some(ttl) => now.saturating_sub(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)),
            None => i64::MIN,
        };
        (now, cutoff)
    }
}

impl SqlStore for SqliteStore {
    type Database = Sqlite;

    fn sql(&self) -> Sql<'_, Sqlite> {
        Sql::new(&self.pool, &STATEMENTS, self.clock().1)
    }

    fn limit(&self) -> Duration {
        self.limit
    }

    async fn append_now(
        &self,
        thread: &str,
        owner: Option<&str>,
        expected: Option<u64>,
        bytes: Vec<u8>,
        sent: &Sent,
    ) -> Result<u64, StoreError> {
        let mut writer = self.writer.lock().await;
        let (now, cutoff) = self.clock();
        // Made here, an append cannot be cut off midway (nothing in it waits), so it is
        // never "sent" with its outcome unknown: it lands, or fails with nothing written.
        if let Some(direct) = &mut writer.direct {
            let append = Append {
                thread,
                owner,
                now,
                cutoff,
                expected: expected.map(sql::to_db),
                bytes: &bytes,
                expires: self.expire_after.is_some(),
            };
            match direct.append(&append).map_err(StoreError::backend)? {
                Appended::Version(version) => return from_db(version),
                Appended::Conflict => return Err(self.conflict(thread, expected, cutoff).await),
                Appended::Pooled => {}
            }
        }
        let kept = match writer.pooled.take() {
            Some(kept) => kept,
            None => {
                let connection = self.pool.acquire().await;
                connection.map_err(StoreError::backend)?.detach()
            }
        };
        let mut closing = Closing {
            slot: &mut writer.pooled,
            finished: false,
        };
        let connection = closing.slot.insert(kept);
        sent.now();
        let rows = sqlx::query(&self.append)
            .bind(thread)
            .bind(owner)
            .bind(now)
            .bind(cutoff)
            .bind(expected.map(sql::to_db))
            .bind(bytes)
            .fetch_all(&mut *connection)
            .await
            .map_err(|e| failed(sent, e))?;
        closing.finished = true;
        let appended = rows
            .iter()
            .find_map(|row| row.try_get::<i64, _>("version").ok());
        match appended {
            Some(version) => from_db(version),
            None => Err(self.conflict(thread, expected, cutoff).await),
        }
    }

    async fn delete_now(&self, thread: &str, sent: &Sent) -> Result<bool, StoreError> {
        let _turn = self.writer.lock().await;
        let tx = self.begin().await?;
        self.sql().delete(tx, thread, sent).await
    }
}

/// The append's first statement: bumps the thread's `last` only when its newest live
/// record is at the expected version (`$5`; compare-and-swap), creating the thread's row
/// when missing. `$1` the thread, `$2` its owner (or null: it keeps the one it has), `$3`
/// now, `$4` the cutoff of a live record, `$5` the expected version (or null).
const BUMP: &str = "INSERT INTO threads (thread, last, owner, written_at)
    SELECT $1, 1, $2, $3
    WHERE (SELECT max(version) FROM checkpoints WHERE thread = $1 AND written_at > $4) IS $5
ON CONFLICT (thread) DO UPDATE SET last = last + 1,
    owner = coalesce(excluded.owner, owner), written_at = excluded.written_at";

/// The append's second statement: writes the record (`$6`, the bytes) at the thread's new
/// `last` only when [`BUMP`] changed a row, returning its version.
const WRITE: &str = "INSERT INTO checkpoints (thread, version, bytes, written_at)
    SELECT $1, last, $6, $3 FROM threads WHERE thread = $1 AND changes() = 1
    RETURNING version";

/// With an expiry, the append's last statement: deletes the thread's expired records.
const EXPIRE: &str = "DELETE FROM checkpoints WHERE thread = $1 AND written_at <= $4";

/// The append through the pool, as one script sent in one trip to the connection's
/// thread: a `BEGIN IMMEDIATE` transaction of [`BUMP`], [`WRITE`] and, with an expiry,
/// [`EXPIRE`]. No row back: a conflict, and nothing was written.
fn append_script(limit: Duration, expires: bool) -> String {
    let pragma = busy_timeout(limit);
    if expires {
        format!("{pragma}; BEGIN IMMEDIATE; {BUMP}; {WRITE}; {EXPIRE}; COMMIT;")
    } else {
        format!("{pragma}; BEGIN IMMEDIATE; {BUMP}; {WRITE}; COMMIT;")
    }
}

/// The appends' connection, kept for the next append only once the script it runs has
/// finished: dropped before (the append cancelled or cut off by its bound, or failed
/// midway), it is taken out of its slot and dropped, which closes it and rolls back the
/// transaction the script may have left open, so no other operation runs inside it.
struct Closing<'a> {
    slot: &'a mut Option<SqliteConnection>,
    /// The script ran to its end: the connection is fit for the next append.
    finished: bool,
}

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.slot.take();
        }
    }
}

/// `PRAGMA busy_timeout` at three quarters of `limit`: SQLite gives up waiting for another
/// writer's lock (an error: nothing written) before the store's bound cuts the append off
/// (after which the outcome is unknown).
fn busy_timeout(limit: Duration) -> String {
    format!(
        "PRAGMA busy_timeout = {}",
        (limit.as_millis() * 3 / 4).min(i32::MAX as u128)
    )
}

/// A pool on the file, with its tables made and migrated.
async fn prepare(options: SqliteConnectOptions) -> Result<SqlitePool, sqlx::Error> {
    // A connection to a local file does not go stale: no round trip to test it before
    // each operation.
    let pool = SqlitePoolOptions::new()
        .acquire_timeout(OPERATION_TIMEOUT)
        .test_before_acquire(false)
        .connect_with(options)
        .await?;
    sqlx::raw_sql(SCHEMA).execute(&pool).await?;
    migrate(&pool).await?;
    Ok(pool)
}

/// Whether SQLite said the file is busy (`SQLITE_BUSY`, or one of its extended codes).
fn busy(error: &sqlx::Error) -> bool {
    let sqlx::Error::Database(error) = error else {
        return false;
    };
    let code = error.code().and_then(|code| code.parse::<i32>().ok());
    code.is_some_and(|code| code & 0xff == 5)
}

/// Adds the owner columns and their index to a file of an earlier version, in one
/// transaction (so that two processes opening it at once do it once).
async fn migrate(pool: &SqlitePool) -> Result<(), sqlx::Error> {
    const HAS_OWNERS: &str =
        "SELECT count(*) FROM pragma_table_info('threads') WHERE name = 'owner'";
    let owners: i64 = sqlx::query_scalar(HAS_OWNERS).fetch_one(pool).await?;
    if owners == 0 {
        let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
        let owners: i64 = sqlx::query_scalar(HAS_OWNERS).fetch_one(&mut *tx).await?;
        if owners == 0 {
            sqlx::raw_sql(OWNERS).execute(&mut *tx).await?;
        }
        tx.commit().await?;
    }
    sqlx::raw_sql(OWNERS_INDEX).execute(pool).await?;
    Ok(())
}

sql::checkpoint_store!(SqliteStore, "sqlite");
