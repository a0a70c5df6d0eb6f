//! [`PostgresStore`]: checkpoints in PostgreSQL (feature `postgres`).

use std::sync::LazyLock;
use std::time::Duration;

use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{Postgres, Row as _, Transaction};

use super::bound::Sent;
use super::sql::{self, Sql, SqlStore, Statements, failed, from_db, to_db};
use super::store::StoreError;
use super::timeout::OPERATION_TIMEOUT;

/// The tables, created when missing, and what was added to them since; run under
/// [`SCHEMA_LOCK`]. `adk_threads.last` is the newest version a thread ever had, so that
/// versions keep growing past records that expired.
const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS adk_checkpoints (
    thread TEXT NOT NULL,
    version BIGINT NOT NULL,
    bytes BYTEA NOT NULL,
    written_at BIGINT NOT NULL, -- unix time, ms, on the database's clock
    PRIMARY KEY (thread, version)
);
CREATE TABLE IF NOT EXISTS adk_threads (
    thread TEXT PRIMARY KEY,
    last BIGINT NOT NULL
);
-- To list an owner's threads (issue #23): each thread's owner and when its head was
-- written (unix ms), which the append sets; and an index that holds an owner's threads,
-- newest first, as one range. Added to tables of earlier versions (whose threads have no
-- owner, and are listed to no one); the catalog is read first, so that a store that
-- opens a database it already migrated takes no lock on the table.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute
                   WHERE attrelid = 'adk_threads'::regclass AND attname = 'owner'
                     AND NOT attisdropped) THEN
        ALTER TABLE adk_threads ADD COLUMN owner TEXT, ADD COLUMN written_at BIGINT;
    END IF;
    IF to_regclass('adk_threads_owner') IS NULL THEN
        CREATE INDEX adk_threads_owner
            ON adk_threads (owner, written_at DESC, thread COLLATE "C")
            WHERE owner IS NOT NULL;
    END IF;
END
$$;
-- One append, in one round trip: lock the thread's row (made first when missing), check
-- its head, write the record and the thread's row (its newest version, its owner unless
-- none is given, when its head was written), and with an expiry (a time to live short of
-- the largest BIGINT) delete the thread's expired records. Each statement of a (volatile) function reads what was committed
-- when it starts, so the head is read after the lock is held. Returns the new version,
-- or NULL and the head found when it is not the one expected.
CREATE OR REPLACE FUNCTION adk_append(
    p_thread TEXT, p_expected BIGINT, p_bytes BYTEA, p_ttl BIGINT, p_owner TEXT
)
RETURNS TABLE (appended BIGINT, found BIGINT) LANGUAGE plpgsql AS $$
DECLARE
    v_now BIGINT := (extract(epoch from clock_timestamp()) * 1000)::bigint;
    v_last BIGINT;
    v_found BIGINT;
BEGIN
    SELECT t.last INTO v_last FROM adk_threads t WHERE t.thread = p_thread FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO adk_threads (thread, last) VALUES (p_thread, 0) ON CONFLICT DO NOTHING;
        SELECT t.last INTO v_last FROM adk_threads t WHERE t.thread = p_thread FOR UPDATE;
    END IF;
    SELECT max(c.version) INTO v_found FROM adk_checkpoints c
        WHERE c.thread = p_thread AND c.written_at > v_now - p_ttl;
    IF v_found IS DISTINCT FROM p_expected THEN
        RETURN QUERY SELECT NULL::BIGINT, v_found;
        RETURN;
    END IF;
    UPDATE adk_threads t
        SET last = v_last + 1, owner = coalesce(p_owner, t.owner), written_at = v_now
        WHERE t.thread = p_thread;
    INSERT INTO adk_checkpoints (thread, version, bytes, written_at)
        VALUES (p_thread, v_last + 1, p_bytes, v_now);
    IF p_ttl < 9223372036854775807 THEN
        DELETE FROM adk_checkpoints c
            WHERE c.thread = p_thread AND c.written_at <= v_now - p_ttl;
    END IF;
    RETURN QUERY SELECT v_last + 1, v_found;
END
$$;
-- The append of earlier versions (without an owner), which processes of those versions
-- still call during an upgrade: the same append, so that the thread's row stays right.
CREATE OR REPLACE FUNCTION adk_append(p_thread TEXT, p_expected BIGINT, p_bytes BYTEA, p_ttl BIGINT)
RETURNS TABLE (appended BIGINT, found BIGINT) LANGUAGE sql AS $$
    SELECT * FROM adk_append(p_thread, p_expected, p_bytes, p_ttl, NULL::TEXT)
$$;
"#;

/// The advisory lock that makes processes create the tables one at a time
/// (`CREATE TABLE IF NOT EXISTS` alone races with itself).
const SCHEMA_LOCK: i64 = 0x6164_6b5f_6368_6b70; // "adk_chkp"

/// A store in PostgreSQL: checkpoints shared by every process and host that reaches the
/// database.
///
/// Pick it when several hosts serve the same agents and you already run Postgres: any
/// of them can resume any run. For one host `SqliteStore` needs no server; for records
/// that should vanish on their own, `RedisStore` ([which store](super#which-store)).
///
/// Each append is one call of a PL/pgSQL function (`adk_append`, one round trip) that
/// locks the thread's row (`SELECT ... FOR UPDATE`), reads the head and writes the
/// record, in one transaction, so concurrent appends from any number of
/// processes are serialized per thread: one wins, the others get
/// [`StoreError::Conflict`], none is lost. Expiry is measured on the database's clock,
/// not the hosts'. Clones share the connection pool.
///
/// # Tables
///
/// Created when missing (prefixed, to live beside your own tables):
/// `adk_checkpoints(thread, version, bytes, written_at)` with the records (`written_at`
/// in unix milliseconds), and `adk_threads(thread, last, owner, written_at)` with the
/// newest version each thread ever had, its owner (see
/// [`append_owned`](super::CheckpointStore::append_owned)) and when its head was written, which
/// the append sets in its transaction; the index `adk_threads_owner` on `(owner,
/// written_at DESC, thread)` lists an owner's threads (names in byte order, whatever the
/// database's collation). A database of an earlier version gets the two columns and the
/// index when a store connects (its threads have no owner, and are listed to no one).
/// With an [expiry](Self::expire_after) an expired record reads as absent, and an append
/// deletes its thread's expired records.
///
/// # Outages
///
/// Each operation ends within the store's [bound](Self::operation_timeout) (10 s unless
/// set), the wait for a connection of the pool included: a database that is down or
/// unreachable ends a run within it. A write that fails before its statement was sent,
/// or that the database refused, was not applied ([`StoreError::Backend`]); one cut off
/// after it was sent (the bound, a connection that broke) may have been
/// ([`StoreError::OutcomeUnknown`]).
///
/// # Example
///
/// ```no_run
/// use std::time::Duration;
/// use tower_adk::checkpoint::{CheckpointStore, PostgresStore};
///
/// # async fn run() -> Result<(), tower_adk::checkpoint::StoreError> {
/// let store = PostgresStore::connect("postgres://adk@db.internal/agents")
///     .await?
///     .expire_after(Duration::from_secs(7 * 24 * 3600));
/// let v1 = store.append("thread-1", None, b"state".to_vec()).await?;
/// assert_eq!(store.head("thread-1").await?.map(|r| r.version), Some(v1));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    expire_after: Option<Duration>,
    limit: Duration,
}

/// The reads, the listing and the deletes: a record is live when written within the
/// time to live, `$1`, on the database's clock (in unix ms); thread names compare byte
/// by byte (collation `C`), as the index keeps them.
static STATEMENTS: LazyLock<Statements> = LazyLock::new(|| {
    let now = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
    let live = format!("{now} - $1");
    Statements::new("adk_checkpoints", "adk_threads", &live, r#"COLLATE "C""#)
});

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host/database`) with
    /// a pool of connections, and creates the tables when missing.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the database cannot be reached or the tables created.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .acquire_timeout(OPERATION_TIMEOUT)
            .connect(url)
            .await
            .map_err(StoreError::backend)?;
        PostgresStore::from_pool(pool).await
    }

    /// A store on a pool you configured, creating the tables when missing. (The store's
    /// [bound](Self::operation_timeout) holds whatever the pool's own timeouts are.)
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the tables cannot be created.
    pub async fn from_pool(pool: PgPool) -> Result<Self, StoreError> {
        let mut tx = pool.begin().await.map_err(StoreError::backend)?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(SCHEMA_LOCK)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::backend)?;
        sqlx::raw_sql(SCHEMA)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::backend)?;
        tx.commit().await.map_err(StoreError::backend)?;
        Ok(PostgresStore {
            pool,
            expire_after: None,
            limit: OPERATION_TIMEOUT,
        })
    }

    /// Records expire this long after they were written.
    pub fn expire_after(mut self, ttl: Duration) -> Self {
        self.expire_after = Some(ttl);
        self
    }

    /// How long one operation may take, the wait for a connection of the pool included
    /// (default [`OPERATION_TIMEOUT`](super::OPERATION_TIMEOUT), 10 s; sqlx's own wait
    /// for a connection is 30 s). An operation that reaches it fails with a
    /// [`TimedOut`](super::TimedOut) error: a read or a write not yet sent as
    /// [`StoreError::Backend`] (not applied), a write cut off after it was sent as
    /// [`StoreError::OutcomeUnknown`].
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use tower_adk::checkpoint::PostgresStore;
    ///
    /// # async fn run() -> Result<(), tower_adk::checkpoint::StoreError> {
    /// // A run whose checkpoint cannot be written ends within 3 s.
    /// let store = PostgresStore::connect("postgres://adk@db.internal/agents")
    ///     .await?
    ///     .operation_timeout(Duration::from_secs(3));
    /// # Ok(())
    /// # }
    /// ```
    pub fn operation_timeout(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    /// The pool of connections to the database.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// How old a record may be, in ms (no expiry: as old as can be).
    fn ttl(&self) -> i64 {
        self.expire_after.map_or(i64::MAX, |ttl| {
            i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
        })
    }

    /// Locks the thread's row until `tx` ends (creating it if missing) and returns the
    /// newest version the thread ever had.
    async fn lock_thread(
        tx: &mut Transaction<'_, Postgres>,
        thread: &str,
    ) -> Result<i64, StoreError> {
        sqlx::query("INSERT INTO adk_threads (thread, last) VALUES ($1, 0) ON CONFLICT DO NOTHING")
            .bind(thread)
            .execute(&mut **tx)
            .await
            .map_err(StoreError::backend)?;
        sqlx::query_scalar("SELECT last FROM adk_threads WHERE thread = $1 FOR UPDATE")
            .bind(thread)
            .fetch_one(&mut **tx)
            .await
            .map_err(StoreError::backend)
    }
}

impl SqlStore for PostgresStore {
    type Database = Postgres;

    fn sql(&self) -> Sql<'_, Postgres> {
        Sql::new(&self.pool, &STATEMENTS, self.ttl())
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
        let mut connection = self.pool.acquire().await.map_err(StoreError::backend)?;
        sent.now();
        let row = sqlx::query("SELECT appended, found FROM adk_append($1, $2, $3, $4, $5)")
            .bind(thread)
            .bind(expected.map(to_db))
            .bind(bytes)
            .bind(self.ttl())
            .bind(owner)
            .fetch_one(&mut *connection)
            .await
            .map_err(|e| failed(sent, e))?;
        let appended: Option<i64> = row.try_get("appended").map_err(|e| failed(sent, e))?;
        let found: Option<i64> = row.try_get("found").map_err(|e| failed(sent, e))?;
        match appended {
            Some(version) => from_db(version),
            None => Err(StoreError::Conflict {
                thread: thread.to_owned(),
                expected,
                found: found.map(from_db).transpose()?,
            }),
        }
    }

    async fn delete_now(&self, thread: &str, sent: &Sent) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await.map_err(StoreError::backend)?;
        Self::lock_thread(&mut tx, thread).await?;
        self.sql().delete(tx, thread, sent).await
    }
}

sql::checkpoint_store!(PostgresStore, "postgres");
