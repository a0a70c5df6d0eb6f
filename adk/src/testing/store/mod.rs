//! [`check_store`]: the conformance suite that every [`CheckpointStore`] passes; the
//! cases of an owner's threads in [`owners`].

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use futures::future::join_all;

use self::owners::{TIES, owners_listed_apart_newest_first, threads_are, ties_by_name_and_pages};
use crate::checkpoint::{CheckpointStore, StoreError, StoredRecord};

mod owners;

/// How long records live in the expiring store that [`check_store`] asks for.
///
/// Long enough that a record read back right after it was written has not expired on a
/// busy machine; the suite sleeps past it twice.
pub const CHECK_STORE_EXPIRY: Duration = Duration::from_secs(1);

/// Checks that a [`CheckpointStore`] keeps its contract; panics, with a message naming
/// the broken rule, at the first point where it does not.
///
/// `make(None)` must build a store whose records do not expire, and `make(Some(ttl))`
/// one whose records expire `ttl` after they were written (the suite passes
/// [`CHECK_STORE_EXPIRY`]). The stores may share their backend with other tests: the
/// suite writes only to threads of its own, named `check-store-` plus a random id,
/// and deletes them when it passes. It takes a few seconds, most of them waiting for
/// records to expire.
///
/// What it checks:
/// - versions: an append to a new thread gives 1, an append at the head gives the next
///   version; an append with a stale version, with `Some` on an empty thread, or with
///   `None` on a thread that has a head is a [`StoreError::Conflict`] (naming the thread,
///   the expected and the found version) and writes nothing;
/// - bytes: `head`, `get` and `list` read back exactly what was written, including empty,
///   non-UTF-8 and large (100 KB) records;
/// - threads are isolated, also threads whose names are prefixes of each other or hold
///   characters that mean something to SQL or to Redis keys;
/// - `delete_thread` removes every record, says whether there was any, and the thread
///   can start again;
/// - expiry: an expired record reads as absent from `head`, `get` and `list`, an append
///   with `None` to a thread whose records all expired succeeds with a version greater
///   than every earlier one, and records of the store without expiry stay;
/// - concurrency: of 20 appends racing on one head exactly one wins and the others are
///   conflicts; 50 threads written at once each end with their own bytes;
/// - owners: `threads` lists the threads that `append_owned` wrote for an owner, only
///   theirs, each at its head's version, the most recently written first and those
///   written at once by name (also past an entry that names no thread), page after page
///   with `after`; a thread written again comes first; a thread whose head expired, a
///   deleted thread and a thread written with plain `append` are not listed. A store
///   whose `threads` is [`StoreError::Unsupported`] (the trait's default) skips these
///   cases.
///
/// # Example
///
/// ```
/// use tower_adk::checkpoint::MemoryStore;
/// use tower_adk::testing::check_store;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// check_store(|ttl| async move {
///     match ttl {
///         Some(ttl) => MemoryStore::new().expire_after(ttl),
///         None => MemoryStore::new(),
///     }
/// })
/// .await;
/// # });
/// ```
pub async fn check_store<S, F, Fut>(make: F)
where
    S: CheckpointStore,
    F: Fn(Option<Duration>) -> Fut,
    Fut: Future<Output = S>,
{
    let store = make(None).await;
    let run = Run::new();
    versions_and_conflicts(&store, &run.thread("versions")).await;
    bytes_read_back(&store, &run.thread("bytes")).await;
    threads_are_isolated(&store, &run).await;
    delete_thread(&store, &run.thread("delete")).await;
    racing_appends(&store, &run.thread("race")).await;
    many_threads(&store, &run).await;
    let lists = owners_listed_apart_newest_first(&store, &run).await;
    if lists {
        ties_by_name_and_pages(&store, &run).await;
    }

    let expiring = make(Some(CHECK_STORE_EXPIRY)).await;
    expiry(&store, &expiring, &run, lists).await;
    run.clean(&store).await;
    run.clean(&expiring).await;
}

/// The thread names of one run of the suite: `check-store-{id}-{name}`.
struct Run {
    id: String,
}

impl Run {
    fn new() -> Self {
        let id = uuid::Uuid::new_v4().simple().to_string();
        Run { id }
    }

    fn thread(&self, name: &str) -> String {
        format!("check-store-{}-{name}", self.id)
    }

    /// An owner of this run's threads: `check-store-{id}-owner-{name}`.
    fn owner(&self, name: &str) -> String {
        format!("check-store-{}-owner-{name}", self.id)
    }

    /// Deletes every thread that the suite wrote to.
    async fn clean<S: CheckpointStore>(&self, store: &S) {
        let many = (0..MANY).map(|i| format!("many-{i}"));
        let ties = (0..TIES).map(|i| format!("tie-{i}"));
        for name in WRITTEN
            .iter()
            .map(|n| n.to_string())
            .chain(many)
            .chain(ties)
        {
            let thread = self.thread(&name);
            On {
                store,
                thread: &thread,
            }
            .delete()
            .await;
        }
    }
}

/// The names of the threads the suite writes to (besides `many-{i}`).
const WRITTEN: &[&str] = &[
    "versions",
    "bytes",
    "iso",
    "iso-2",
    "iso:v:1",
    "iso %_'\"{}\\ ü",
    "delete",
    "race",
    "kept",
    "expiry",
    "partly",
    "own-1",
    "own-2",
    "own-3",
    "own-other",
    "own-plain",
];

/// How many threads [`many_threads`] writes at once.
const MANY: usize = 50;

/// How many appends [`racing_appends`] races on one head.
const RACERS: usize = 20;

async fn versions_and_conflicts<S: CheckpointStore>(store: &S, t: &str) {
    let t = On { store, thread: t };
    t.reads(None, &[], "a new thread").await;
    assert_eq!(t.get(1).await, None, "a new thread has version 1");
    t.refused(Some(1), None, "an append with Some(1) to a new thread")
        .await;
    t.reads(None, &[], "after a refused append").await;

    assert_eq!(
        t.append(None, b"one").await,
        1,
        "a new thread's first version"
    );
    t.refused(None, Some(1), "an append with None to a thread at 1")
        .await;
    assert_eq!(t.append(Some(1), b"two").await, 2, "the version after 1");
    t.refused(Some(1), Some(2), "an append at a stale version")
        .await;
    t.refused(Some(3), Some(2), "an append past the head").await;
    t.reads(Some((2, b"two")), &[1, 2], "after refused appends")
        .await;
    assert_eq!(t.get(1).await.as_deref(), Some(&b"one"[..]), "get(1)");
    assert_eq!(t.get(2).await.as_deref(), Some(&b"two"[..]), "get(2)");
    assert_eq!(t.get(3).await, None, "get of a version never written");
    assert_eq!(t.append(Some(2), b"three").await, 3, "the version after 2");
}

async fn bytes_read_back<S: CheckpointStore>(store: &S, t: &str) {
    let t = On { store, thread: t };
    let records = [
        Vec::new(),
        vec![
            0, 159, 146, 150, 0xff, 0xc3, 0x28, 0, b'\n', b'\'', b'"', b'\\',
        ],
        "ü {\"json\": true} 🦀".as_bytes().to_vec(),
        large(100_000),
    ];
    let mut versions = Vec::new();
    for (i, bytes) in records.iter().enumerate() {
        let version = t.append(versions.last().copied(), bytes).await;
        versions.push(version);
        let what = format!("record {i} ({} bytes)", bytes.len());
        t.reads(Some((version, bytes)), &versions, &what).await;
    }
    for (version, bytes) in versions.iter().zip(&records) {
        let read = t.get(*version).await;
        assert!(
            read.as_ref() == Some(bytes),
            "get did not read back the {} bytes of version {version}: read {:?} bytes",
            bytes.len(),
            read.map(|b| b.len()),
        );
    }
}

/// `len` bytes that take every value, in no simple order.
fn large(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_u32;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state.to_le_bytes()[0]
        })
        .collect()
}

async fn threads_are_isolated<S: CheckpointStore>(store: &S, run: &Run) {
    let names = ["iso", "iso-2", "iso:v:1", "iso %_'\"{}\\ ü"].map(|n| run.thread(n));
    let threads = names.each_ref().map(|thread| On { store, thread });
    // Thread i gets i + 1 records.
    for (i, t) in threads.iter().enumerate() {
        for version in 1..=i as u64 + 1 {
            let bytes = format!("{} {version}", t.thread);
            let expected = (version > 1).then(|| version - 1);
            t.append(expected, bytes.as_bytes()).await;
        }
    }
    for (i, t) in threads.iter().enumerate() {
        let versions: Vec<u64> = (1..=i as u64 + 1).collect();
        let bytes = format!("{} {}", t.thread, i + 1);
        let what = "threads whose names share a prefix must not share records";
        t.reads(Some((i as u64 + 1, bytes.as_bytes())), &versions, what)
            .await;
    }
    assert!(
        threads[0].delete().await,
        "delete_thread of a thread with records"
    );
    for t in &threads[1..] {
        let what = format!("after deleting `{}`", names[0]);
        assert!(
            t.head().await.is_some(),
            "{what}, `{}` has no head",
            t.thread
        );
    }
}

async fn delete_thread<S: CheckpointStore>(store: &S, t: &str) {
    let t = On { store, thread: t };
    assert!(
        !t.delete().await,
        "delete_thread of a new thread says it had records"
    );
    t.append(None, b"one").await;
    t.append(Some(1), b"two").await;
    assert!(
        t.delete().await,
        "delete_thread of a thread with records says it had none"
    );
    t.reads(None, &[], "a deleted thread").await;
    assert_eq!(t.get(1).await, None, "a deleted thread has version 1");
    assert!(
        !t.delete().await,
        "a second delete_thread says there were records"
    );
    let version = t.append(None, b"again").await;
    t.reads(
        Some((version, b"again")),
        &[version],
        "a deleted thread written again",
    )
    .await;
}

async fn racing_appends<S: CheckpointStore>(store: &S, t: &str) {
    let t = On { store, thread: t };
    let v1 = t.append(None, b"start").await;
    let racers = (0..RACERS).map(|i| store.append(t.thread, Some(v1), racer(i)));
    let mut winners = Vec::new();
    for (i, result) in join_all(racers).await.into_iter().enumerate() {
        match result {
            Ok(version) => winners.push((i, version)),
            lost => t.is_conflict(lost, Some(v1), Some(v1 + 1), "a losing racer"),
        }
    }
    let [(winner, version)] = winners[..] else {
        panic!(
            "{RACERS} appends raced on version {v1}: {} won ({winners:?}), exactly one must",
            winners.len()
        );
    };
    assert_eq!(version, v1 + 1, "the winning racer's version");
    let what = "after a race (the head must be the winner's; losers write nothing)";
    t.reads(Some((version, &racer(winner))), &[v1, version], what)
        .await;
}

fn racer(i: usize) -> Vec<u8> {
    format!("racer {i}").into_bytes()
}

async fn many_threads<S: CheckpointStore>(store: &S, run: &Run) {
    let names: Vec<String> = (0..MANY)
        .map(|i| run.thread(&format!("many-{i}")))
        .collect();
    let threads: Vec<On<'_, S>> = names.iter().map(|thread| On { store, thread }).collect();
    let writers = threads.iter().map(|t| async move {
        let mut expected = None;
        for step in 1..=3 {
            let bytes = format!("{} step {step}", t.thread);
            expected = Some(t.append(expected, bytes.as_bytes()).await);
        }
    });
    join_all(writers).await;
    for t in &threads {
        let bytes = format!("{} step 3", t.thread);
        let what = format!("one of {MANY} threads written at once");
        t.reads(Some((3, bytes.as_bytes())), &[1, 2, 3], &what)
            .await;
    }
}

async fn expiry<S: CheckpointStore, E: CheckpointStore>(
    store: &S,
    expiring: &E,
    run: &Run,
    lists: bool,
) {
    let names = ["kept", "expiry", "partly"].map(|n| run.thread(n));
    let kept = On {
        store,
        thread: &names[0],
    };
    let t = On {
        store: expiring,
        thread: &names[1],
    };
    let partly = On {
        store: expiring,
        thread: &names[2],
    };

    let dave = run.owner("dave");
    kept.append(None, b"kept").await;
    let v1 = t.append_owned(&dave, None, b"one").await;
    let v2 = t.append_owned(&dave, Some(v1), b"two").await;
    t.reads(
        Some((v2, b"two")),
        &[v1, v2],
        "records read back at once (they expired)",
    )
    .await;
    let p1 = partly.append_owned(&dave, None, b"old").await;
    tokio::time::sleep(CHECK_STORE_EXPIRY * 6 / 10).await;
    let p2 = partly.append_owned(&dave, Some(p1), b"new").await;
    tokio::time::sleep(CHECK_STORE_EXPIRY * 6 / 10).await;

    let expired = format!(
        "records written {:?} ago, with an expiry of {CHECK_STORE_EXPIRY:?}",
        CHECK_STORE_EXPIRY * 12 / 10
    );
    t.reads(None, &[], &expired).await;
    assert_eq!(t.get(v1).await, None, "get returned {expired}");
    if lists {
        let what = "dave's threads once the head of one expired";
        threads_are(expiring, &dave, &[(&names[2], p2)], what).await;
    }
    let what = "an append at the version of an expired head";
    t.refused(Some(v2), None, what).await;
    let v3 = t.append(None, b"three").await;
    assert!(
        v3 > v2,
        "the version after expired records ({v3}) must be greater than theirs ({v2})"
    );
    t.reads(Some((v3, b"three")), &[v3], "after expired records")
        .await;

    let what = "a thread whose older record expired";
    partly.reads(Some((p2, b"new")), &[p2], what).await;
    assert_eq!(partly.get(p1).await, None, "get returned {expired}");
    kept.reads(
        Some((1, b"kept")),
        &[1],
        "a store without expiry (it lost a record)",
    )
    .await;
}

/// One thread of a store, with calls that panic naming what failed.
struct On<'a, S> {
    store: &'a S,
    thread: &'a str,
}

impl<S: CheckpointStore> On<'_, S> {
    async fn append(&self, expected: Option<u64>, bytes: &[u8]) -> u64 {
        let appended = self
            .store
            .append(self.thread, expected, bytes.to_vec())
            .await;
        self.ok(appended, &format!("append at {expected:?}"))
    }

    async fn append_owned(&self, owner: &str, expected: Option<u64>, bytes: &[u8]) -> u64 {
        let appended = (self.store)
            .append_owned(self.thread, owner, expected, bytes.to_vec())
            .await;
        self.ok(
            appended,
            &format!("append_owned by `{owner}` at {expected:?}"),
        )
    }

    /// Writes the thread's first record, for `owner`.
    async fn append_owned_once(self, owner: &str) {
        self.append_owned(owner, None, self.thread.as_bytes()).await;
    }

    async fn head(&self) -> Option<(u64, Vec<u8>)> {
        let head = self.ok(self.store.head(self.thread).await, "head");
        head.map(|StoredRecord { version, bytes, .. }| (version, bytes))
    }

    /// The bytes at `version`, checking that the record says it is at that version.
    async fn get(&self, version: u64) -> Option<Vec<u8>> {
        let record = self.ok(self.store.get(self.thread, version).await, "get")?;
        assert_eq!(
            record.version, version,
            "get({version}) returned another version"
        );
        Some(record.bytes)
    }

    async fn delete(&self) -> bool {
        self.ok(self.store.delete_thread(self.thread).await, "delete_thread")
    }

    /// Asserts the head (version and bytes) and the list of versions.
    async fn reads(&self, head: Option<(u64, &[u8])>, list: &[u64], what: &str) {
        let read = self.head().await;
        let read = read.as_ref().map(|(v, b)| (*v, &b[..]));
        if read != head {
            let len = |h: Option<(u64, &[u8])>| h.map(|(v, b)| (v, b.len()));
            panic!(
                "{what}: the head of `{}` is {:?}, not {:?} (version, length)",
                self.thread,
                len(read),
                len(head)
            );
        }
        let versions = self.ok(self.store.list(self.thread).await, "list");
        assert_eq!(versions, list, "{what}: the versions of `{}`", self.thread);
    }

    /// Asserts that an append at `expected` is a conflict that found `found`.
    async fn refused(&self, expected: Option<u64>, found: Option<u64>, what: &str) {
        let appended = self
            .store
            .append(self.thread, expected, b"refused".to_vec());
        self.is_conflict(appended.await, expected, found, what);
    }

    fn is_conflict<T: Debug>(
        &self,
        result: Result<T, StoreError>,
        expected: Option<u64>,
        found: Option<u64>,
        what: &str,
    ) {
        match result {
            Err(StoreError::Conflict {
                thread: t,
                expected: e,
                found: f,
            }) => {
                assert_eq!(t, self.thread, "{what}: the conflict names another thread");
                assert_eq!(e, expected, "{what}: the conflict's expected version");
                assert_eq!(f, found, "{what}: the conflict's found version");
            }
            Err(error) => panic!("{what}: expected a conflict, got the error {error} ({error:?})"),
            Ok(value) => panic!("{what}: expected a conflict, but it succeeded with {value:?}"),
        }
    }

    fn ok<T>(&self, result: Result<T, StoreError>, what: &str) -> T {
        result.unwrap_or_else(|e| panic!("{what} on `{}` failed: {e} ({e:?})", self.thread))
    }
}
