//! The appends a [`SqliteStore`](super::SqliteStore) makes on the caller's thread, when
//! a commit waits for no disk (issue #27, point 2).
//!
//! sqlx runs each SQLite connection on a thread of its own: an append is a trip there and
//! back, two wake-ups that cost more than the append itself once a commit does not wait
//! for the disk (WAL at `synchronous=NORMAL` or `OFF`). There, the store makes its appends
//! here instead, on a connection of its own (rusqlite, on the SQLite that sqlx links), in
//! the caller's task, where each takes tens of microseconds and never waits:
//! - for another writer: its busy timeout is zero, and an append that finds the file
//!   locked goes through the pool instead, which waits within the store's bound;
//! - for the disk: its commits do not sync, and it never checkpoints the write-ahead log
//!   (`wal_autocheckpoint=0`, which would sync): one append in [`POOLED_EVERY`] goes
//!   through the pool, whose connection checkpoints the log when it has grown, on sqlx's
//!   thread.

use std::path::PathBuf;

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior, named_params};
use sqlx::SqlitePool;

use super::{BUMP, EXPIRE, WRITE};

/// One append in this many goes through the pool, whose connection checkpoints the
/// write-ahead log once it holds 1,000 pages (SQLite's default), so that the log stays
/// about that size.
pub(super) const POOLED_EVERY: u32 = 64;

/// The connection the store's appends are made on in the caller's thread.
#[derive(Debug)]
pub(super) struct Direct {
    connection: Connection,
    /// Appends made here since the last one that went through the pool.
    appends: u32,
}

/// One append's values, bound by name as the pool's script binds them by number.
pub(super) struct Append<'a> {
    pub(super) thread: &'a str,
    pub(super) owner: Option<&'a str>,
    pub(super) now: i64,
    pub(super) cutoff: i64,
    pub(super) expected: Option<i64>,
    pub(super) bytes: &'a [u8],
    /// Whether the thread's expired records are deleted with it.
    pub(super) expires: bool,
}

/// What an append made here came to.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Appended {
    /// Written, at this version.
    Version(i64),
    /// The thread's head was not the one expected: nothing written.
    Conflict,
    /// Not made here: another writer holds the file, or it is the pool's turn.
    Pooled,
}

impl Direct {
    /// A connection of its own to the file `pool` is on, when its commits wait for no
    /// disk: the file in WAL mode, at `synchronous` `NORMAL` or `OFF`, which the pool can
    /// write to. `None` otherwise (a file that syncs, a database in memory, a file opened
    /// read-only, or one this connection could not open as the same file): the store's
    /// appends then all go through the pool.
    pub(super) async fn open(pool: &SqlitePool) -> Result<Option<Direct>, sqlx::Error> {
        let mut connection = pool.acquire().await?;
        let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&mut *connection)
            .await?;
        let journal: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&mut *connection)
            .await?;
        let file: String =
            sqlx::query_scalar("SELECT file FROM pragma_database_list WHERE name = 'main'")
                .fetch_one(&mut *connection)
                .await?;
        // 0 is OFF, 1 NORMAL; FULL (2) and EXTRA (3) sync at each commit. A database in
        // memory or a temporary one has no file.
        if !journal.eq_ignore_ascii_case("wal")
            || !(0..=1).contains(&synchronous)
            || file.is_empty()
        {
            return Ok(None);
        }
        // A pool that cannot write (the file opened read-only, or immutable) gets no
        // connection that can. (A write that changes nothing; `BEGIN IMMEDIATE` alone
        // succeeds on a read-only connection in WAL mode.)
        let writes = sqlx::query("DELETE FROM threads WHERE 0")
            .execute(&mut *connection)
            .await;
        if writes.is_err() {
            return Ok(None);
        }
        let file = PathBuf::from(file);
        let opened = tokio::task::spawn_blocking(move || connect(file, synchronous)).await;
        Ok(opened.ok().and_then(Result::ok).flatten())
    }

    /// Appends the record here, unless it is the pool's turn or another writer holds the
    /// file ([`Appended::Pooled`]: nothing written). An error is SQLite's, and nothing was
    /// written: the transaction is rolled back when it is dropped.
    pub(super) fn append(&mut self, append: &Append<'_>) -> rusqlite::Result<Appended> {
        self.appends += 1;
        if self.appends == POOLED_EVERY {
            self.appends = 0;
            return Ok(Appended::Pooled);
        }
        let begun = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate);
        let tx = match begun {
            Err(error) if error.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) => {
                return Ok(Appended::Pooled);
            }
            begun => begun?,
        };
        let bumped = tx.prepare_cached(BUMP)?.execute(named_params! {
            "$1": append.thread,
            "$2": append.owner,
            "$3": append.now,
            "$4": append.cutoff,
            "$5": append.expected,
        })?;
        if bumped != 1 {
            return Ok(Appended::Conflict);
        }
        let version = tx.prepare_cached(WRITE)?.query_row(
            named_params! { "$1": append.thread, "$3": append.now, "$6": append.bytes },
            |row| row.get(0),
        )?;
        if append.expires {
            tx.prepare_cached(EXPIRE)?
                .execute(named_params! { "$1": append.thread, "$4": append.cutoff })?;
        }
        tx.commit()?;
        Ok(Appended::Version(version))
    }
}

/// Opens `file` (it must exist) at `synchronous`, with no busy timeout and no automatic
/// checkpoint; `None` when it is not the file in WAL mode that the pool has.
fn connect(file: PathBuf, synchronous: i64) -> rusqlite::Result<Option<Direct>> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(&file, flags)?;
    connection.pragma_update(None, "synchronous", synchronous)?;
    connection.pragma_update(None, "wal_autocheckpoint", 0)?;
    connection.busy_timeout(std::time::Duration::ZERO)?;
    let journal: String = connection.pragma_query_value(None, "journal_mode", |row| row.get(0))?;
    let same: String = connection.query_row(
        "SELECT file FROM pragma_database_list WHERE name = 'main'",
        [],
        |row| row.get(0),
    )?;
    let same = journal.eq_ignore_ascii_case("wal") && file == std::path::Path::new(&same);
    Ok(same.then_some(Direct {
        connection,
        appends: 0,
    }))
}
