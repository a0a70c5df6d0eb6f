//! The checkpoint stores against the conformance suite, `testing::check_store`: the
//! memory store always, and with their features the SQLite store (a file under
//! `target/`), and the PostgreSQL and Redis stores on real servers that each test starts
//! for itself (`servers`; install them with `scripts/setup-stores`). A server that cannot
//! start fails the test; nothing is skipped.
//!
//! Beyond the suite: appends racing from two stores on one backend (two pools, two
//! connections: what two processes do); a SQLite file and a PostgreSQL database of the
//! earlier version (`earlier`), migrated when a store opens them; and the store types
//! are `Send + Sync`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(any(feature = "postgres", feature = "sqlite"))]
mod earlier;
#[cfg(any(feature = "postgres", feature = "redis", feature = "sqlite"))]
mod servers;

use std::time::Duration;

use futures::future::join_all;
use tower_adk::checkpoint::{CheckpointStore, MemoryStore};
use tower_adk::testing::check_store;

#[tokio::test]
async fn memory_store_keeps_the_contract() {
    check_store(|ttl| async move {
        let store = MemoryStore::new();
        with_expiry(store, ttl, MemoryStore::expire_after)
    })
    .await;
}

#[tokio::test]
async fn memory_appends_racing_from_two_clones_one_wins() {
    let a = MemoryStore::new();
    race_from_two_stores(&a, &a.clone()).await;
}

#[test]
fn memory_store_is_send_sync_clone_debug() {
    assert_store_type::<MemoryStore>();
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use tower_adk::checkpoint::SqliteStore;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_store_keeps_the_contract() {
        let file = servers::scratch("sqlite").join("checkpoints.db");
        // Both stores of the suite on one file: two pools, as two processes would be.
        check_store(|ttl| {
            let file = file.clone();
            async move {
                let store = SqliteStore::open(file).await.unwrap();
                with_expiry(store, ttl, SqliteStore::expire_after)
            }
        })
        .await;
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_appends_racing_from_two_stores_one_wins() {
        let file = servers::scratch("sqlite").join("checkpoints.db");
        let a = SqliteStore::open(&file).await.unwrap();
        let b = SqliteStore::open(&file).await.unwrap();
        race_from_two_stores(&a, &b).await;
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_file_of_the_earlier_version_is_migrated_when_opened_and_keeps_its_threads() {
        use tower_adk::checkpoint::sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
        use tower_adk::checkpoint::sqlx::{self, Connection as _};

        let file = servers::scratch("sqlite").join("earlier.db");
        let options = SqliteConnectOptions::new()
            .filename(&file)
            .create_if_missing(true);
        let mut earlier = SqliteConnection::connect_with(&options).await.unwrap();
        sqlx::raw_sql(super::earlier::SQLITE)
            .execute(&mut earlier)
            .await
            .unwrap();
        earlier.close().await.unwrap();
        // Two stores at once migrate it once; a third finds it migrated.
        let (a, b) = tokio::join!(SqliteStore::open(&file), SqliteStore::open(&file));
        let (a, _b) = (a.unwrap(), b.unwrap());
        earlier_thread_kept(&a).await;
        let again = SqliteStore::open(&file).await.unwrap();
        assert_eq!(again.list("earlier").await.unwrap(), [1, 2]);
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    /// An append is one script sent to SQLite at once (`BEGIN IMMEDIATE` ... `COMMIT`):
    /// cut off anywhere in it, it must leave no transaction open on a connection of the
    /// pool (which would hold the file's write lock, or run the next operation inside
    /// it), and the thread's versions must stay whole: each append applied or not (one
    /// cut off once sent may land after the next head was read: the next append is then
    /// a conflict, as for any write whose outcome was unknown).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_appends_cut_off_midway_leave_no_transaction_open() {
        let file = servers::scratch("sqlite").join("checkpoints.db");
        let store = SqliteStore::open(&file).await.unwrap();
        let record = vec![7u8; 6_000];
        let mut cut = 0;
        for i in 0..200u64 {
            let head = store.head("cut").await.unwrap().map(|r| r.version);
            let append = store.append("cut", head, record.clone());
            // From at once to well past an append's time, in 5 µs steps.
            let bound = Duration::from_micros(i % 100 * 5);
            match tokio::time::timeout(bound, append).await {
                Ok(Ok(appended)) => assert_eq!(appended, head.unwrap_or(0) + 1),
                Ok(Err(error)) => assert!(error.is_conflict(), "{error:?}"),
                Err(_) => cut += 1,
            }
        }
        println!("{cut} of 200 appends cut off");
        assert!(cut > 0, "no append was cut off: the test proves nothing");
        // Every version from 1 to the head, each once.
        let versions = store.list("cut").await.unwrap();
        let expected: Vec<u64> = (1..=versions.len() as u64).collect();
        assert_eq!(versions, expected);
        // Another store (another process) can write: no connection holds the lock.
        let other = SqliteStore::open(&file)
            .await
            .unwrap()
            .operation_timeout(Duration::from_secs(5));
        let head = other.head("cut").await.unwrap().map(|r| r.version);
        let appended = other.append("cut", head, record.clone()).await.unwrap();
        assert_eq!(Some(appended - 1), head);
        // And the first store goes on from there, on any of its connections.
        for _ in 0..8 {
            let head = store.head("cut").await.unwrap().map(|r| r.version);
            store.append("cut", head, record.clone()).await.unwrap();
        }
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    /// The store keeps its appends' connections between them: dropping the store after
    /// its runtime is gone closes it, with no runtime to ask (no panic), and the file
    /// keeps every append.
    #[test]
    fn a_sqlite_store_that_appended_drops_outside_any_runtime() {
        let file = servers::scratch("sqlite").join("checkpoints.db");
        let runtime = tokio::runtime::Runtime::new().unwrap();
        // One store that syncs, and one that appends on the caller's thread.
        let stores = runtime.block_on(async {
            let store = SqliteStore::open(&file).await.unwrap();
            let first = store.append("t", None, b"one".to_vec()).await.unwrap();
            let normal = normal(&file).await;
            normal
                .append("t", Some(first), b"two".to_vec())
                .await
                .unwrap();
            (store, normal)
        });
        drop(runtime);
        drop(stores);
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let versions = runtime.block_on(async {
            let store = SqliteStore::open(&file).await.unwrap();
            store.list("t").await.unwrap()
        });
        assert_eq!(versions, [1, 2]);
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    /// A store at `synchronous=NORMAL` on `file`: its appends are made on the caller's
    /// thread, on a connection of its own.
    async fn normal(file: &std::path::Path) -> SqliteStore {
        use tower_adk::checkpoint::sqlx::sqlite::{SqliteConnectOptions, SqliteSynchronous};
        let options = SqliteConnectOptions::new()
            .filename(file)
            .create_if_missing(true)
            .synchronous(SqliteSynchronous::Normal);
        SqliteStore::open_with(options).await.unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_store_at_synchronous_normal_keeps_the_contract() {
        let file = servers::scratch("sqlite").join("checkpoints.db");
        check_store(|ttl| {
            let file = file.clone();
            async move { with_expiry(normal(&file).await, ttl, SqliteStore::expire_after) }
        })
        .await;
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_normal_appends_racing_from_two_stores_one_wins() {
        let file = servers::scratch("sqlite").join("checkpoints.db");
        let (a, b) = (normal(&file).await, normal(&file).await);
        race_from_two_stores(&a, &b).await;
        // And against a store that syncs, on the same file.
        let full = SqliteStore::open(&file).await.unwrap();
        race_from_two_stores(&a, &full).await;
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    /// An append made on the caller's thread never waits there for another writer's lock:
    /// it goes through the pool, which waits for it (within the bound), and lands once
    /// the lock is let go.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_normal_append_waits_for_another_writer_off_the_callers_thread() {
        use tower_adk::checkpoint::sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
        use tower_adk::checkpoint::sqlx::{self, Connection as _};

        let file = servers::scratch("sqlite").join("checkpoints.db");
        let store = normal(&file).await;
        let first = store.append("held", None, b"one".to_vec()).await.unwrap();
        let mut other =
            SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(&file))
                .await
                .unwrap();
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut other)
            .await
            .unwrap();
        let append = tokio::spawn({
            let store = store.clone();
            async move { store.append("held", Some(first), b"two".to_vec()).await }
        });
        // The runtime's threads stay free meanwhile: a timer of this task fires.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            !append.is_finished(),
            "the append did not wait for the lock"
        );
        sqlx::query("COMMIT").execute(&mut other).await.unwrap();
        assert_eq!(append.await.unwrap().unwrap(), first + 1);
        let head = store.head("held").await.unwrap().unwrap();
        assert_eq!((head.version, head.bytes), (first + 1, b"two".to_vec()));
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    /// The appends made on the caller's thread never checkpoint the write-ahead log (that
    /// syncs the disk): the ones that go through the pool do, so the log stays near
    /// SQLite's 1,000 pages (4 MiB) however many appends were made, here about 20 MiB of
    /// them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_normal_stores_write_ahead_log_stays_bounded() {
        let file = servers::scratch("sqlite").join("checkpoints.db");
        let store = normal(&file).await;
        let record = vec![5u8; 8_000];
        let mut head = None;
        for _ in 0..1_000 {
            head = Some(store.append("log", head, record.clone()).await.unwrap());
        }
        assert_eq!(store.list("log").await.unwrap().len(), 1_000);
        let log = std::fs::metadata(file.with_extension("db-wal"))
            .unwrap()
            .len();
        assert!(log < 8 << 20, "the write-ahead log grew to {log} bytes");
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    /// A store on a file opened read-only gets no connection that writes: its appends
    /// fail, with nothing written, as the pool's would.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_normal_store_opened_read_only_writes_nothing() {
        use tower_adk::checkpoint::StoreError;
        use tower_adk::checkpoint::sqlx::sqlite::{SqliteConnectOptions, SqliteSynchronous};

        let file = servers::scratch("sqlite").join("checkpoints.db");
        let first = normal(&file)
            .await
            .append("t", None, b"one".to_vec())
            .await
            .unwrap();
        let options = SqliteConnectOptions::new()
            .filename(&file)
            .read_only(true)
            .synchronous(SqliteSynchronous::Normal);
        let store = SqliteStore::open_with(options).await.unwrap();
        let refused = store.append("t", Some(first), b"two".to_vec()).await;
        assert!(
            matches!(refused, Err(StoreError::Backend(_))),
            "{refused:?}"
        );
        assert_eq!(store.list("t").await.unwrap(), [first]);
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }

    /// A database in memory has no file for a connection of its own: its appends all go
    /// through the pool, and no file is made for it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_normal_store_in_memory_appends_through_its_pool() {
        use std::str::FromStr as _;
        use tower_adk::checkpoint::sqlx::sqlite::{SqliteConnectOptions, SqliteSynchronous};

        let options = SqliteConnectOptions::from_str("sqlite::memory:")
            .unwrap()
            .synchronous(SqliteSynchronous::Normal);
        let store = SqliteStore::open_with(options).await.unwrap();
        let first = store.append("t", None, b"one".to_vec()).await.unwrap();
        let second = store
            .append("t", Some(first), b"two".to_vec())
            .await
            .unwrap();
        assert!(
            store
                .append("t", Some(first), b"late".to_vec())
                .await
                .unwrap_err()
                .is_conflict()
        );
        assert_eq!(store.list("t").await.unwrap(), [first, second]);
        let strays = std::fs::read_dir(".")
            .unwrap()
            .filter_map(Result::ok)
            .filter(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.starts_with("file:") || name.starts_with(":memory:")
            })
            .count();
        assert_eq!(strays, 0, "a file was made for a database in memory");
    }

    #[test]
    fn sqlite_store_is_send_sync_clone_debug() {
        assert_store_type::<SqliteStore>();
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use tower_adk::checkpoint::PostgresStore;

    use super::servers::Postgres;
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_store_keeps_the_contract() {
        let server = Postgres::start();
        let url = server.url();
        check_store(|ttl| {
            let url = url.clone();
            async move {
                let store = PostgresStore::connect(&url).await.unwrap();
                with_expiry(store, ttl, PostgresStore::expire_after)
            }
        })
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_appends_racing_from_two_stores_one_wins() {
        let server = Postgres::start();
        let url = server.url();
        let (a, b) = tokio::join!(PostgresStore::connect(&url), PostgresStore::connect(&url));
        race_from_two_stores(&a.unwrap(), &b.unwrap()).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_database_of_the_earlier_version_is_migrated_when_connected_and_keeps_its_threads() {
        use tower_adk::checkpoint::sqlx::{self, postgres::PgPool};

        let server = Postgres::start();
        let url = server.url();
        let earlier = PgPool::connect(&url).await.unwrap();
        sqlx::raw_sql(super::earlier::POSTGRES)
            .execute(&earlier)
            .await
            .unwrap();
        // Two stores at once migrate it once; a third finds it migrated.
        let (a, b) = tokio::join!(PostgresStore::connect(&url), PostgresStore::connect(&url));
        let (a, _b) = (a.unwrap(), b.unwrap());
        earlier_thread_kept(&a).await;
        // A process of the earlier version appends as it did, and the thread's row
        // stays right: still alice's, newest.
        let (appended, found): (Option<i64>, Option<i64>) = sqlx::query_as(
            "SELECT appended, found FROM adk_append('earlier', 2, 'old'::bytea, 9223372036854775807)",
        )
        .fetch_one(&earlier)
        .await
        .unwrap();
        assert_eq!((appended, found), (Some(3), Some(2)));
        let again = PostgresStore::connect(&url).await.unwrap();
        let listed = again.threads("alice", None, 10).await.unwrap();
        assert_eq!(
            listed
                .iter()
                .map(|e| (&*e.thread, e.version))
                .collect::<Vec<_>>(),
            [("earlier", 3)]
        );
    }

    #[test]
    fn postgres_store_is_send_sync_clone_debug() {
        assert_store_type::<PostgresStore>();
    }
}

#[cfg(feature = "redis")]
mod redis {
    use tower_adk::checkpoint::RedisStore;

    use super::servers::Redis;
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_store_keeps_the_contract() {
        let server = Redis::start();
        let url = server.url();
        check_store(|ttl| {
            let url = url.clone();
            async move {
                let store = RedisStore::connect(&url).await.unwrap();
                with_expiry(store, ttl, RedisStore::expire_after)
            }
        })
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_store_with_a_prefix_keeps_the_contract_and_its_keys() {
        let server = Redis::start();
        let url = server.url();
        check_store(|ttl| {
            let url = url.clone();
            async move {
                let store = RedisStore::connect(&url).await.unwrap().prefix("other:");
                with_expiry(store, ttl, RedisStore::expire_after)
            }
        })
        .await;
        // A thread of one prefix is not a thread of the other.
        let a = RedisStore::connect(&url).await.unwrap();
        let b = RedisStore::connect(&url).await.unwrap().prefix("b:");
        a.append("t", None, b"a".to_vec()).await.unwrap();
        assert_eq!(b.head("t").await.unwrap(), None);
        assert_eq!(b.append("t", None, b"b".to_vec()).await.unwrap(), 1);
        assert_eq!(a.head("t").await.unwrap().unwrap().bytes, b"a");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_appends_racing_from_two_stores_one_wins() {
        let server = Redis::start();
        let url = server.url();
        let (a, b) = tokio::join!(RedisStore::connect(&url), RedisStore::connect(&url));
        race_from_two_stores(&a.unwrap(), &b.unwrap()).await;
    }

    #[test]
    fn redis_store_is_send_sync_clone_debug() {
        assert_store_type::<RedisStore>();
    }
}

/// The store, with this expiry if there is one.
fn with_expiry<S>(store: S, ttl: Option<Duration>, expire_after: fn(S, Duration) -> S) -> S {
    match ttl {
        Some(ttl) => expire_after(store, ttl),
        None => store,
    }
}

/// Ten appends from each store race on the same head, round after round: each round
/// exactly one wins, and every store then reads the winner's record.
async fn race_from_two_stores<S: CheckpointStore>(a: &S, b: &S) {
    let thread = format!("race-two-{}", std::process::id());
    let mut head = a.append(&thread, None, b"start".to_vec()).await.unwrap();
    for round in 0..5 {
        let racers = (0..20).map(|i| {
            let store = if i % 2 == 0 { a } else { b };
            let bytes = format!("round {round} racer {i}").into_bytes();
            let thread = &thread;
            async move { (i, store.append(thread, Some(head), bytes).await) }
        });
        let results = join_all(racers).await;
        let mut winners = Vec::new();
        for (i, result) in results {
            match result {
                Ok(version) => winners.push((i, version)),
                Err(error) => assert!(error.is_conflict(), "racer {i}: {error}"),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        let (winner, version) = winners[0];
        assert_eq!(version, head + 1);
        let bytes = format!("round {round} racer {winner}").into_bytes();
        for store in [a, b] {
            let record = store.head(&thread).await.unwrap().unwrap();
            assert_eq!((record.version, record.bytes), (version, bytes.clone()));
        }
        head = version;
    }
    assert_eq!(a.list(&thread).await.unwrap(), (1..=6).collect::<Vec<_>>());
    assert!(a.delete_thread(&thread).await.unwrap());
}

/// A store opened on the tables of the earlier version (`earlier`): their thread reads
/// as it was, has no owner (listed to no one), and goes on; written for an owner, it is
/// theirs.
#[cfg(any(feature = "postgres", feature = "sqlite"))]
async fn earlier_thread_kept<S: CheckpointStore>(store: &S) {
    let head = store.head("earlier").await.unwrap().unwrap();
    assert_eq!((head.version, &head.bytes[..]), (1, &b"earlier"[..]));
    for owner in ["", "alice"] {
        assert_eq!(store.threads(owner, None, 10).await.unwrap(), []);
    }
    let next = store.append_owned("earlier", "alice", Some(1), b"next".to_vec());
    assert_eq!(next.await.unwrap(), 2);
    let listed = store.threads("alice", None, 10).await.unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|e| (&*e.thread, e.version))
            .collect::<Vec<_>>(),
        [("earlier", 2)]
    );
}

fn assert_store_type<S: CheckpointStore + Clone + std::fmt::Debug>() {}
