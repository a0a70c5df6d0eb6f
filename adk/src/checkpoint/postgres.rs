//! [`PostgresStore`]: checkpoints in PostgreSQL (feature `postgres`).

use std::time::Duration;

use futures::future::BoxFuture;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{Postgres, Row as _, Transaction};

use super::{CheckpointStore, StoreError, StoredRecord};

/// The tables, created when missing. `adk_threads.last` is the newest version a thread
/// ever had, so that versions keep growing past records that expired.
const SCHEMA: &str = "
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
-- One append, in one round trip: lock the thread's row, check its head, write. Each
-- statement of a (volatile) function reads what was committed when it starts, so the
-- head is read after the lock is held. Returns the new version, or NULL and the head
-- found when it is not the one expected.
CREATE OR REPLACE FUNCTION adk_append(p_thread TEXT, p_expected BIGINT, p_bytes BYTEA, p_ttl BIGINT)
RETURNS TABLE (appended BIGINT, found BIGINT) LANGUAGE plpgsql AS $$
DECLARE
    v_now BIGINT := (extract(epoch from clock_timestamp()) * 1000)::bigint;
    v_last BIGINT;
    v_found BIGINT;
BEGIN
    INSERT INTO adk_threads (thread, last) VALUES (p_thread, 0) ON CONFLICT DO NOTHING;
    SELECT t.last INTO v_last FROM adk_threads t WHERE t.thread = p_thread FOR UPDATE;
    SELECT max(c.version) INTO v_found FROM adk_checkpoints c
        WHERE c.thread = p_thread AND c.written_at > v_now - p_ttl;
    IF v_found IS DISTINCT FROM p_expected THEN
        RETURN QUERY SELECT NULL::BIGINT, v_found;
        RETURN;
    END IF;
    UPDATE adk_threads SET last = v_last + 1 WHERE thread = p_thread;
    INSERT INTO adk_checkpoints (thread, version, bytes, written_at)
        VALUES (p_thread, v_last + 1, p_bytes, v_now);
    DELETE FROM adk_checkpoints c WHERE c.thread = p_thread AND c.written_at <= v_now - p_ttl;
    RETURN QUERY SELECT v_last + 1, v_found;
END
$$;
";

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
/// in unix milliseconds), and `adk_threads(thread, last)` with the newest version each
/// thread ever had. With an [expiry](Self::expire_after) an expired record reads as
/// absent, and an append deletes its thread's expired records.
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
}

/// The time now on the database's clock, in unix ms.
macro_rules! now_ms {
    () => {
        "(extract(epoch from clock_timestamp()) * 1000)::bigint"
    };
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host/database`) with
    /// a pool of connections, and creates the tables when missing.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the database cannot be reached or the tables created.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .connect(url)
            .await
            .map_err(StoreError::backend)?;
        PostgresStore::from_pool(pool).await
    }

    /// A store on a pool you configured, creating the tables when missing.
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
        })
    }

    /// Records expire this long after they were written.
    pub fn expire_after(mut self, ttl: Duration) -> Self {
        self.expire_after = Some(ttl);
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

    async fn append_now(
        &self,
        thread: &str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> Result<u64, StoreError> {
        let expected_db = expected.map(to_db).transpose()?;
        let row = sqlx::query("SELECT appended, found FROM adk_append($1, $2, $3, $4)")
            .bind(thread)
            .bind(expected_db)
            .bind(bytes)
            .bind(self.ttl())
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::backend)?;
        let appended: Option<i64> = row.try_get("appended").map_err(StoreError::backend)?;
        let found: Option<i64> = row.try_get("found").map_err(StoreError::backend)?;
        match appended {
            Some(version) => from_db(version),
            None => Err(StoreError::Conflict {
                thread: thread.to_owned(),
                expected,
                found: found.map(from_db).transpose()?,
            }),
        }
    }

    async fn delete_now(&self, thread: &str) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await.map_err(StoreError::backend)?;
        Self::lock_thread(&mut tx, thread).await?;
        let live = sqlx::query(concat!(
            "DELETE FROM adk_checkpoints WHERE thread = $1 AND written_at > ",
            now_ms!(),
            " - $2"
        ))
        .bind(thread)
        .bind(self.ttl())
        .execute(&mut *tx)
        .await
        .map_err(StoreError::backend)?;
        for statement in [
            "DELETE FROM adk_checkpoints WHERE thread = $1",
            "DELETE FROM adk_threads WHERE thread = $1",
        ] {
            sqlx::query(statement)
                .bind(thread)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::backend)?;
        }
        tx.commit().await.map_err(StoreError::backend)?;
        Ok(live.rows_affected() > 0)
    }
}

impl CheckpointStore for PostgresStore {
    fn head<'a>(
        &'a self,
        thread: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        Box::pin(async move {
            let row = sqlx::query(concat!(
                "SELECT version, bytes FROM adk_checkpoints WHERE thread = $1 AND written_at > ",
                now_ms!(),
                " - $2 ORDER BY version DESC LIMIT 1"
            ))
            .bind(thread)
            .bind(self.ttl())
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            row.map(|row| {
                let version = row.try_get(0).map_err(StoreError::backend)?;
                let bytes = row.try_get(1).map_err(StoreError::backend)?;
                Ok(StoredRecord::new(from_db(version)?, bytes))
            })
            .transpose()
        })
    }

    fn get<'a>(
        &'a self,
        thread: &'a str,
        version: u64,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        Box::pin(async move {
            let Ok(at) = i64::try_from(version) else {
                return Ok(None);
            };
            let bytes: Option<Vec<u8>> = sqlx::query_scalar(concat!(
                "SELECT bytes FROM adk_checkpoints WHERE thread = $1 AND version = $2 AND written_at > ",
                now_ms!(),
                " - $3"
            ))
            .bind(thread)
            .bind(at)
            .bind(self.ttl())
            .fetch_optional(&self.pool)
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
        Box::pin(self.append_now(thread, expected, bytes))
    }

    fn list<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<u64>, StoreError>> {
        Box::pin(async move {
            let versions: Vec<i64> = sqlx::query_scalar(concat!(
                "SELECT version FROM adk_checkpoints WHERE thread = $1 AND written_at > ",
                now_ms!(),
                " - $2 ORDER BY version"
            ))
            .bind(thread)
            .bind(self.ttl())
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            versions.into_iter().map(from_db).collect()
        })
    }

    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.delete_now(thread))
    }
}

/// A version as read from the database.
fn from_db(version: i64) -> Result<u64, StoreError> {
    u64::try_from(version).map_err(StoreError::backend)
}

/// A version as the database keeps it.
fn to_db(version: u64) -> Result<i64, StoreError> {
    i64::try_from(version).map_err(StoreError::backend)
}
