//! What the SQLite and PostgreSQL stores share: one implementation of
//! [`CheckpointStore`](super::CheckpointStore) over sqlx. Their reads, their listing of
//! an owner's threads and their deletes are the same statements ([`Statements`]), run
//! the same way ([`Sql`]); each store gives ([`SqlStore`]) its pool, its tables, how a
//! live record is told, its bound, its append and the start of its delete, where the
//! dialects differ.
//!
//! The statements number their parameters (`$1`, `$2`), which sqlx's SQLite driver
//! reads as PostgreSQL does, and `$1` is always the value that a live record's
//! `written_at` exceeds: on SQLite a cutoff that the store computes on the host's clock,
//! on PostgreSQL the database's own clock less the time to live.
//!
//! A thread's row (`threads`) keeps, besides the newest version it ever had, its owner
//! and when its head was written, set by the append in the same transaction: an owner's
//! threads are one range of an index on `(owner, written_at DESC, thread)`.

use std::future::Future;
use std::time::Duration;

use sqlx::{
    ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Row as _, Transaction,
    Type,
};

use super::bound::{self, Sent};
use super::store::{StoreError, StoredRecord, ThreadEntry};

/// The statements both SQL stores run, on one store's tables; `$1` is the value that a
/// live record's `written_at` exceeds.
pub(super) struct Statements {
    head: String,
    get: String,
    list: String,
    threads: String,
    delete_live: String,
    delete_all: [String; 2],
}

impl Statements {
    /// The statements on the tables `checkpoints` and `threads`, where a record is live
    /// when `written_at > live` (an expression of `$1`), and thread names are ordered
    /// byte by byte with `bytewise` (a `COLLATE` clause, or nothing).
    pub(super) fn new(checkpoints: &str, threads: &str, live: &str, bytewise: &str) -> Self {
        let live = format!("written_at > {live}");
        Statements {
            // After the entry ($3, $4): written earlier, or at once with a later name.
            threads: format!(
                "SELECT thread, last, written_at FROM {threads}
                 WHERE owner = $2 AND {live}
                   AND (written_at < $3 OR (written_at = $3 AND thread {bytewise} > $4))
                 ORDER BY written_at DESC, thread {bytewise} LIMIT $5"
            ),
            head: format!(
                "SELECT version, bytes FROM {checkpoints} WHERE {live} AND thread = $2
                 ORDER BY version DESC LIMIT 1"
            ),
            get: format!(
                "SELECT bytes FROM {checkpoints} WHERE {live} AND thread = $2 AND version = $3"
            ),
            list: format!(
                "SELECT version FROM {checkpoints} WHERE {live} AND thread = $2
                 ORDER BY version"
            ),
            delete_live: format!(
                "DELETE FROM {checkpoints} WHERE {live} AND thread = $2 RETURNING version"
            ),
            delete_all: [
                format!("DELETE FROM {checkpoints} WHERE thread = $1"),
                format!("DELETE FROM {threads} WHERE thread = $1"),
            ],
        }
    }
}

/// A checkpoint store on an SQL database through sqlx: what the SQLite and the
/// PostgreSQL store each give to the implementation they share, which
/// [`checkpoint_store!`] makes their [`CheckpointStore`](super::CheckpointStore).
pub(super) trait SqlStore: Send + Sync {
    /// The database.
    type Database: Database;

    /// The store's statements on its pool, with the value of `$1` now.
    fn sql(&self) -> Sql<'_, Self::Database>;

    /// How long one operation may take.
    fn limit(&self) -> Duration;

    /// Appends a record, as
    /// [`CheckpointStore::append_owned`](super::CheckpointStore::append_owned) (with an
    /// owner) or [`append`](super::CheckpointStore::append) (without: the thread keeps
    /// the owner it has); marks in `sent` when it sends what applies it.
    fn append_now(
        &self,
        thread: &str,
        owner: Option<&str>,
        expected: Option<u64>,
        bytes: Vec<u8>,
        sent: &Sent,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Deletes the thread, as
    /// [`CheckpointStore::delete_thread`](super::CheckpointStore::delete_thread): keeps
    /// its other writers out, then [`Sql::delete`].
    fn delete_now(
        &self,
        thread: &str,
        sent: &Sent,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// A store's statements on its pool, with the value of `$1` (what a live record's
/// `written_at` exceeds) taken when it was made: the reads and the delete of both SQL
/// stores.
pub(super) struct Sql<'a, DB: Database> {
    pool: &'a Pool<DB>,
    statements: &'a Statements,
    live: i64,
}

impl<'a, DB> Sql<'a, DB>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'r> String: Decode<'r, DB> + Type<DB>,
    for<'r> Vec<u8>: Decode<'r, DB> + Type<DB>,
    usize: ColumnIndex<DB::Row>,
{
    pub(super) fn new(pool: &'a Pool<DB>, statements: &'a Statements, live: i64) -> Self {
        Sql {
            pool,
            statements,
            live,
        }
    }

    /// The thread's newest live record.
    pub(super) async fn head(self, thread: &str) -> Result<Option<StoredRecord>, StoreError> {
        let row = sqlx::query(&self.statements.head)
            .bind(self.live)
            .bind(thread)
            .fetch_optional(self.pool)
            .await
            .map_err(StoreError::backend)?;
        row.map(|row| {
            let version = row.try_get(0).map_err(StoreError::backend)?;
            let bytes = row.try_get(1).map_err(StoreError::backend)?;
            Ok(StoredRecord::new(from_db(version)?, bytes))
        })
        .transpose()
    }

    /// The thread's live record at `version`.
    pub(super) async fn get(
        self,
        thread: &str,
        version: u64,
    ) -> Result<Option<StoredRecord>, StoreError> {
        let Ok(at) = i64::try_from(version) else {
            return Ok(None);
        };
        let bytes: Option<Vec<u8>> = sqlx::query_scalar(&self.statements.get)
            .bind(self.live)
            .bind(thread)
            .bind(at)
            .fetch_optional(self.pool)
            .await
            .map_err(StoreError::backend)?;
        Ok(bytes.map(|bytes| StoredRecord::new(version, bytes)))
    }

    /// The versions of the thread's live records, oldest first.
    pub(super) async fn list(self, thread: &str) -> Result<Vec<u64>, StoreError> {
        let versions: Vec<i64> = sqlx::query_scalar(&self.statements.list)
            .bind(self.live)
            .bind(thread)
            .fetch_all(self.pool)
            .await
            .map_err(StoreError::backend)?;
        versions.into_iter().map(from_db).collect()
    }

    /// The live threads of `owner`, newest first, then by name: up to `limit`, after
    /// `after` when it is given.
    pub(super) async fn threads(
        self,
        owner: &str,
        after: Option<&ThreadEntry>,
        limit: usize,
    ) -> Result<Vec<ThreadEntry>, StoreError> {
        // With no entry before: after one written at the end of time, with no name.
        let (written, name) = after.map_or((i64::MAX, ""), |after| {
            (to_db(after.written), after.thread.as_str())
        });
        let rows = sqlx::query(&self.statements.threads)
            .bind(self.live)
            .bind(owner)
            .bind(written)
            .bind(name)
            .bind(to_db(u64::try_from(limit).unwrap_or(u64::MAX)))
            .fetch_all(self.pool)
            .await
            .map_err(StoreError::backend)?;
        let entry = |row: DB::Row| {
            let thread: String = row.try_get(0).map_err(StoreError::backend)?;
            let version = from_db(row.try_get(1).map_err(StoreError::backend)?)?;
            let written = from_db(row.try_get(2).map_err(StoreError::backend)?)?;
            Ok(ThreadEntry::new(thread, version, written))
        };
        rows.into_iter().map(entry).collect()
    }

    /// Deletes the thread's records and the thread in `tx`, and commits (marking in
    /// `sent` that it does); says whether it had a live record.
    pub(super) async fn delete(
        self,
        mut tx: Transaction<'static, DB>,
        thread: &str,
        sent: &Sent,
    ) -> Result<bool, StoreError> {
        let live: Vec<i64> = sqlx::query_scalar(&self.statements.delete_live)
            .bind(self.live)
            .bind(thread)
            .fetch_all(&mut *tx)
            .await
            .map_err(StoreError::backend)?;
        for statement in &self.statements.delete_all {
            sqlx::query(statement)
                .bind(thread)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::backend)?;
        }
        sent.now();
        tx.commit().await.map_err(|e| failed(sent, e))?;
        Ok(!live.is_empty())
    }
}

/// A version or a time as the database gives it back.
pub(super) fn from_db(value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(StoreError::backend)
}

/// A version or a time as the database keeps it (past the largest it keeps: that).
pub(super) fn to_db(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The error of a write that failed: an error the database answered with (it rolled
/// the write back) says nothing was applied; any other (a connection that broke, an
/// answer that could not be read) says so only if the write was not sent yet.
pub(super) fn failed(sent: &Sent, error: sqlx::Error) -> StoreError {
    match error {
        sqlx::Error::Database(_) => StoreError::backend(error),
        error => sent.failed(error),
    }
}

/// Runs a read of the store within its bound.
pub(super) fn read<S: SqlStore, T>(
    store: &S,
    read: impl Future<Output = Result<T, StoreError>>,
) -> impl Future<Output = Result<T, StoreError>> {
    bound::read(store.limit(), read)
}

/// Appends a record, as [`SqlStore::append_now`] does, within the store's bound.
pub(super) async fn append<S: SqlStore>(
    store: &S,
    thread: &str,
    owner: Option<&str>,
    expected: Option<u64>,
    bytes: Vec<u8>,
) -> Result<u64, StoreError> {
    let sent = Sent::default();
    let append = store.append_now(thread, owner, expected, bytes, &sent);
    bound::write(store.limit(), &sent, append).await
}

/// Deletes a thread, as [`SqlStore::delete_now`] does, within the store's bound.
pub(super) async fn delete<S: SqlStore>(store: &S, thread: &str) -> Result<bool, StoreError> {
    let sent = Sent::default();
    bound::write(store.limit(), &sent, store.delete_now(thread, &sent)).await
}

/// Makes a [`SqlStore`] a [`CheckpointStore`](super::CheckpointStore): its methods are
/// the store's, each within the store's bound, boxed.
macro_rules! checkpoint_store {
    ($store:ty, $kind:literal) => {
        impl $crate::checkpoint::CheckpointStore for $store {
            fn kind(&self) -> &'static str {
                $kind
            }

            fn head<'a>(
                &'a self,
                thread: &'a str,
            ) -> ::futures::future::BoxFuture<
                'a,
                Result<Option<$crate::checkpoint::StoredRecord>, $crate::checkpoint::StoreError>,
            > {
                let head = $crate::checkpoint::sql::SqlStore::sql(self).head(thread);
                Box::pin($crate::checkpoint::sql::read(self, head))
            }

            fn get<'a>(
                &'a self,
                thread: &'a str,
                version: u64,
            ) -> ::futures::future::BoxFuture<
                'a,
                Result<Option<$crate::checkpoint::StoredRecord>, $crate::checkpoint::StoreError>,
            > {
                let get = $crate::checkpoint::sql::SqlStore::sql(self).get(thread, version);
                Box::pin($crate::checkpoint::sql::read(self, get))
            }

            fn append<'a>(
                &'a self,
                thread: &'a str,
                expected: Option<u64>,
                bytes: Vec<u8>,
            ) -> ::futures::future::BoxFuture<'a, Result<u64, $crate::checkpoint::StoreError>> {
                Box::pin($crate::checkpoint::sql::append(
                    self, thread, None, expected, bytes,
                ))
            }

            fn append_owned<'a>(
                &'a self,
                thread: &'a str,
                owner: &'a str,
                expected: Option<u64>,
                bytes: Vec<u8>,
            ) -> ::futures::future::BoxFuture<'a, Result<u64, $crate::checkpoint::StoreError>> {
                let owner = Some(owner);
                Box::pin($crate::checkpoint::sql::append(
                    self, thread, owner, expected, bytes,
                ))
            }

            fn threads<'a>(
                &'a self,
                owner: &'a str,
                after: Option<&'a $crate::checkpoint::ThreadEntry>,
                limit: usize,
            ) -> ::futures::future::BoxFuture<
                'a,
                Result<Vec<$crate::checkpoint::ThreadEntry>, $crate::checkpoint::StoreError>,
            > {
                let sql = $crate::checkpoint::sql::SqlStore::sql(self);
                let threads = sql.threads(owner, after, limit);
                Box::pin($crate::checkpoint::sql::read(self, threads))
            }

            fn list<'a>(
                &'a self,
                thread: &'a str,
            ) -> ::futures::future::BoxFuture<'a, Result<Vec<u64>, $crate::checkpoint::StoreError>>
            {
                let list = $crate::checkpoint::sql::SqlStore::sql(self).list(thread);
                Box::pin($crate::checkpoint::sql::read(self, list))
            }

            fn delete_thread<'a>(
                &'a self,
                thread: &'a str,
            ) -> ::futures::future::BoxFuture<'a, Result<bool, $crate::checkpoint::StoreError>>
            {
                Box::pin($crate::checkpoint::sql::delete(self, thread))
            }
        }
    };
}
pub(super) use checkpoint_store;
