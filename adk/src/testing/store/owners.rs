//! The cases of [`check_store`](super::check_store) on an owner's threads
//! ([`CheckpointStore::append_owned`] and [`CheckpointStore::threads`]).

use std::time::Duration;

use futures::future::join_all;

use super::{On, Run};
use crate::checkpoint::{CheckpointStore, StoreError, ThreadEntry};

/// How many threads of one owner [`ties_by_name_and_pages`] writes at once.
pub(super) const TIES: usize = 12;

/// How long the suite waits between two writes that must be listed in their order: more
/// than the millisecond the stores keep times in.
const APART: Duration = Duration::from_millis(15);

/// Whether the store lists threads; if it does, that it lists an owner's own, newest
/// first, as `append_owned` wrote them.
pub(super) async fn owners_listed_apart_newest_first<S: CheckpointStore>(
    store: &S,
    run: &Run,
) -> bool {
    let (alice, bob) = (run.owner("alice"), run.owner("bob"));
    match store.threads(&alice, None, 10).await {
        Err(StoreError::Unsupported(_)) => return false,
        listed => {
            let listed = listed.unwrap_or_else(|e| panic!("threads of a new owner: {e}"));
            assert!(listed.is_empty(), "a new owner has threads: {listed:?}");
        }
    }
    let names = ["own-1", "own-2", "own-3"].map(|n| run.thread(n));
    let [one, two, three] = names.each_ref().map(|thread| On { store, thread });
    for t in [&one, &two, &three] {
        t.append_owned(&alice, None, b"first").await;
        tokio::time::sleep(APART).await;
    }
    let other = run.thread("own-other");
    On {
        store,
        thread: &other,
    }
    .append_owned(&bob, None, b"bob's")
    .await;
    let plain = run.thread("own-plain");
    On {
        store,
        thread: &plain,
    }
    .append(None, b"no owner")
    .await;

    let newest_first = [(&names[2], 1), (&names[1], 1), (&names[0], 1)];
    let what = "alice's threads, the most recently written first";
    threads_are(store, &alice, &newest_first, what).await;
    threads_are(store, &bob, &[(&other, 1)], "bob's threads").await;
    let nobody = run.owner("nobody");
    threads_are(
        store,
        &nobody,
        &[],
        "the threads of an owner who wrote none",
    )
    .await;

    tokio::time::sleep(APART).await;
    one.append_owned(&alice, Some(1), b"second").await;
    let again = [(&names[0], 2), (&names[2], 1), (&names[1], 1)];
    let what = "alice's threads after the oldest was written again (it comes first)";
    let listed = threads_are(store, &alice, &again, what).await;

    let first = listed_by(store, &alice, None, 2).await;
    assert_eq!(first, listed[..2], "the first page of 2 of alice's threads");
    let rest = listed_by(store, &alice, first.last(), 2).await;
    assert_eq!(rest, listed[2..], "the page after {:?}", first.last());
    let none = listed_by(store, &alice, rest.last(), 2).await;
    assert_eq!(none, [], "the page after the last thread");
    assert_eq!(listed_by(store, &alice, None, 0).await, [], "a page of 0");

    assert!(three.delete().await, "delete_thread of an owned thread");
    let deleted = [(&names[0], 2), (&names[1], 1)];
    threads_are(
        store,
        &alice,
        &deleted,
        "alice's threads after one was deleted",
    )
    .await;
    true
}

/// Threads written at once are listed by name, and the pages of a listing make it whole.
pub(super) async fn ties_by_name_and_pages<S: CheckpointStore>(store: &S, run: &Run) {
    let carol = run.owner("carol");
    let names: Vec<String> = (0..TIES).map(|i| run.thread(&format!("tie-{i}"))).collect();
    let writes = names
        .iter()
        .map(|thread| On { store, thread }.append_owned_once(&carol));
    join_all(writes).await;
    let listed = listed_by(store, &carol, None, TIES + 5).await;
    let mut found: Vec<&str> = listed.iter().map(|e| e.thread.as_str()).collect();
    found.sort_unstable();
    let mut written: Vec<&str> = names.iter().map(String::as_str).collect();
    written.sort_unstable();
    assert_eq!(found, written, "the {TIES} threads carol wrote at once");
    for pair in listed.windows(2) {
        assert!(
            pair[1].is_after(&pair[0]),
            "{:?} is listed after {:?}: not newest first, then by name",
            pair[1],
            pair[0]
        );
    }
    let mut pages = Vec::new();
    loop {
        let page = listed_by(store, &carol, pages.last(), 5).await;
        assert!(page.len() <= 5, "a page of 5 has {}", page.len());
        if page.is_empty() {
            break;
        }
        pages.extend(page);
    }
    assert_eq!(
        pages, listed,
        "pages of 5 of carol's threads, one after another"
    );
    // An entry names the point to list after, whether or not it is a listed thread.
    let newest = &listed[0];
    let before_names = ThreadEntry::new("", 0, newest.written);
    let page = listed_by(store, &carol, Some(&before_names), TIES).await;
    assert_eq!(
        page.first(),
        Some(newest),
        "after a nameless entry of the same time, the thread written then comes"
    );
    let past_names = ThreadEntry::new(format!("{}~", newest.thread), 0, newest.written);
    let page = listed_by(store, &carol, Some(&past_names), TIES).await;
    assert!(
        page.iter()
            .all(|e| e.written < newest.written || e.thread > past_names.thread),
        "after an entry whose name comes after every name of its time: {page:?}"
    );
}

/// Asserts the threads listed for `owner` (name, version; times newest first) and gives
/// them.
pub(super) async fn threads_are<S: CheckpointStore>(
    store: &S,
    owner: &str,
    expected: &[(&String, u64)],
    what: &str,
) -> Vec<ThreadEntry> {
    let listed = listed_by(store, owner, None, 100).await;
    let found: Vec<(&str, u64)> = listed.iter().map(|e| (&*e.thread, e.version)).collect();
    let expected: Vec<(&str, u64)> = expected.iter().map(|(t, v)| (t.as_str(), *v)).collect();
    assert_eq!(found, expected, "{what} (thread, version)");
    for pair in listed.windows(2) {
        assert!(
            pair[1].is_after(&pair[0]),
            "{what}: {:?} is listed after {:?}",
            pair[1],
            pair[0]
        );
    }
    listed
}

async fn listed_by<S: CheckpointStore>(
    store: &S,
    owner: &str,
    after: Option<&ThreadEntry>,
    limit: usize,
) -> Vec<ThreadEntry> {
    let listed = store.threads(owner, after, limit).await;
    listed.unwrap_or_else(|e| panic!("threads of `{owner}` after {after:?}: {e} ({e:?})"))
}
