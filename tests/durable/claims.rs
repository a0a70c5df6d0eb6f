//! A run's claim on its thread: it runs out when the run's process is gone (the lease),
//! a live run renews it, a takeover goes on over the failed mark its run left however
//! late it lands; and a run whose store fails ends at once, saying whether its write
//! was applied.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::json;
use tokio::sync::{Notify, Semaphore};
use tower_adk::agent::{Checkpoint, CheckpointStatus};
use tower_adk::checkpoint::{
    CheckpointError, CheckpointStore, MemoryStore, StoreError, StoredRecord, ThreadEntry,
};
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn, sleep_tool};
use tower_adk::{Agent, AgentError, AgentEvent, AgentRequest, AgentRun, Message, Tool, ToolInfo};
use tower_adk::{ToolOutput, ToolRequest};

/// A tool that waits for a permit of `gate` each time it runs.
fn gate_tool(name: &'static str, gate: &Arc<Semaphore>) -> Tool {
    let gate = Arc::clone(gate);
    Tool::from_fn(ToolInfo::new(name, "Waits"), move |_: ToolRequest| {
        let gate = Arc::clone(&gate);
        async move {
            gate.acquire().await?.forget();
            Ok::<_, tokio::sync::AcquireError>(ToolOutput::new("passed"))
        }
    })
}

/// Reads the run's events until a tool call starts.
async fn until_a_tool_starts(run: &mut AgentRun) {
    loop {
        match run.next().await {
            Some(Ok(AgentEvent::ToolCallStarted { .. })) => return,
            Some(Ok(_)) => {}
            other => panic!("the run ended before a tool started: {other:?}"),
        }
    }
}

async fn head_of(agent: &Agent, thread: &str) -> (u64, Checkpoint) {
    let (id, checkpoint) = agent.last_checkpoint(thread).await.unwrap().unwrap();
    (id.version, checkpoint)
}

fn busy(result: Result<tower_adk::AgentResult, AgentError>) -> bool {
    matches!(
        &result,
        Err(AgentError::Checkpoint(e)) if matches!(**e, CheckpointError::ThreadBusy(_))
    )
}

#[tokio::test]
async fn a_claim_left_by_a_run_that_vanished_holds_the_thread_until_its_lease_runs_out() {
    let lease = Duration::from_millis(300);
    let model = ScriptedModel::new([Turn::call("s", "slow", json!({})), Turn::text("again")]);
    let agent = Agent::builder(model)
        .claim_lease(lease)
        .tool(sleep_tool("slow", Duration::from_secs(3600), "slept"))
        .build()
        .unwrap();
    let mut run = agent.run(AgentRequest::user("first").on_thread("leased"));
    until_a_tool_starts(&mut run).await;
    // Its process dies: nothing of the run runs again, nothing frees the thread.
    std::mem::forget(run);
    let (_, held) = head_of(&agent, "leased").await;
    assert_eq!(held.status, CheckpointStatus::Running);
    let until = held
        .claimed_until
        .expect("a claim says until when it holds");
    let just_before = until.checked_sub(Duration::from_millis(1)).unwrap();
    assert!(held.holds_thread(just_before));
    assert!(!held.holds_thread(until));

    let refused = agent
        .run(AgentRequest::user("now?").on_thread("leased"))
        .await;
    assert!(busy(refused), "a new run is refused while the claim holds");

    tokio::time::sleep(lease * 3).await;
    let next = agent
        .run(AgentRequest::user("second").on_thread("leased"))
        .await
        .unwrap();
    assert_eq!(next.final_message.content(), "again");
    // It went on from the history before the vanished run, as after a failed one.
    let texts: Vec<&str> = next.messages.iter().map(Message::content).collect();
    assert_eq!(texts, ["second", "again"]);
}

#[tokio::test]
async fn a_run_renews_its_claim_at_the_end_of_a_turn_once_half_its_lease_is_gone() {
    let lease = Duration::from_millis(400);
    let gate = Arc::new(Semaphore::new(0));
    let model = ScriptedModel::new([
        Turn::call("a", "gate", json!({})),
        Turn::call("b", "gate", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .claim_lease(lease)
        .tool(gate_tool("gate", &gate))
        .build()
        .unwrap();
    let mut run = agent.run(AgentRequest::user("go").on_thread("renewed"));
    until_a_tool_starts(&mut run).await;
    let (claim, first) = head_of(&agent, "renewed").await;
    // The first turn takes more than half the lease.
    tokio::time::sleep(lease * 6 / 10).await;
    gate.add_permits(1);
    until_a_tool_starts(&mut run).await;
    let (renewal, second) = head_of(&agent, "renewed").await;
    assert_eq!(
        renewal,
        claim + 1,
        "the run wrote its claim again after the turn"
    );
    assert_eq!(second.status, CheckpointStatus::Running);
    assert!(second.claimed_until > first.claimed_until);
    assert_eq!(second.run.records().count(), 1, "with the turn that ended");

    gate.add_permits(1);
    let done = run.result().await.unwrap();
    assert_eq!(done.final_message.content(), "done");
}

/// A memory store that holds back the failed marks of dropped runs until the next write
/// comes, and lets them land just before it: the slow store on which a dropped run's
/// mark lands after a takeover read the thread.
#[derive(Clone, Default)]
struct LateMarks {
    inner: MemoryStore,
    held: Arc<AtomicUsize>,
    go: Arc<Notify>,
    landed: Arc<Notify>,
}

fn status_of(bytes: &[u8]) -> Option<CheckpointStatus> {
    Checkpoint::decode(bytes).ok().map(|c| c.status)
}

impl CheckpointStore for LateMarks {
    fn head<'a>(&'a self, t: &'a str) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        self.inner.head(t)
    }

    fn get<'a>(
        &'a self,
        t: &'a str,
        v: u64,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        self.inner.get(t, v)
    }

    fn append<'a>(
        &'a self,
        t: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.inner.append(t, expected, bytes)
    }

    fn append_owned<'a>(
        &'a self,
        t: &'a str,
        owner: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            if status_of(&bytes) == Some(CheckpointStatus::Failed) {
                self.held.fetch_add(1, Ordering::SeqCst);
                self.go.notified().await;
                let landed = self.inner.append_owned(t, owner, expected, bytes).await;
                self.held.fetch_sub(1, Ordering::SeqCst);
                self.landed.notify_one();
                return landed;
            }
            if self.held.load(Ordering::SeqCst) > 0 {
                self.go.notify_one();
                self.landed.notified().await;
            }
            self.inner.append_owned(t, owner, expected, bytes).await
        })
    }

    fn list<'a>(&'a self, t: &'a str) -> BoxFuture<'a, Result<Vec<u64>, StoreError>> {
        self.inner.list(t)
    }

    fn delete_thread<'a>(&'a self, t: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.delete_thread(t)
    }

    fn threads<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a ThreadEntry>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ThreadEntry>, StoreError>> {
        self.inner.threads(owner, after, limit)
    }
}

/// A durable agent whose first run waits in its tool for good, on `store`.
fn stuck_then_done(store: impl CheckpointStore) -> Agent {
    let model = ScriptedModel::new([Turn::call("c1", "slow", json!({})), Turn::text("done")]);
    let first = Arc::new(AtomicUsize::new(0));
    let slow = Tool::from_fn(ToolInfo::new("slow", "Slow once"), move |_: ToolRequest| {
        let first = first.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            if first {
                std::future::pending::<()>().await;
            }
            Ok::<_, std::convert::Infallible>(ToolOutput::new("slept"))
        }
    });
    Agent::builder(model)
        .checkpoints(store)
        .durable(true)
        .tool(slow)
        .build()
        .unwrap()
}

fn take_over(id: tower_adk::checkpoint::CheckpointId) -> AgentRequest {
    AgentRequest::resume(id, Vec::<(String, Decision)>::new())
}

#[tokio::test]
async fn a_dropped_runs_failed_mark_landing_after_a_takeover_read_it_is_gone_over() {
    let store = LateMarks::default();
    let agent = stuck_then_done(store.clone());
    let mut run = agent.run(AgentRequest::user("go").on_thread("late"));
    until_a_tool_starts(&mut run).await;
    let (running, _) = agent.last_checkpoint("late").await.unwrap().unwrap();
    // Dropped, the run writes its failed mark on a task of its own; the store holds it.
    drop(run);
    while store.held.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    // The takeover reads the running record; the mark lands right before its claim.
    let done = agent.run(take_over(running.clone())).await;
    let done = done.unwrap_or_else(|e| panic!("the takeover went on over the mark: {e}"));
    assert_eq!(done.final_message.content(), "done");
    let versions = store.list("late").await.unwrap();
    assert_eq!(
        versions,
        [1, 2, 3, 4],
        "the claim, the mark, the takeover, the end"
    );
    let mark = store.get("late", 2).await.unwrap().unwrap();
    assert_eq!(status_of(&mark.bytes), Some(CheckpointStatus::Failed));
}

#[tokio::test]
async fn a_takeover_of_a_running_checkpoint_goes_on_over_the_failed_mark_its_run_left() {
    let store = MemoryStore::new();
    let agent = stuck_then_done(store.clone());
    let mut run = agent.run(AgentRequest::user("go").on_thread("marked"));
    until_a_tool_starts(&mut run).await;
    let (running, _) = agent.last_checkpoint("marked").await.unwrap().unwrap();
    run.cancel().await.expect("the run held its thread");
    let (_, mark) = head_of(&agent, "marked").await;
    assert_eq!(mark.status, CheckpointStatus::Failed);

    // The checkpoint read before the mark landed still takes the run over.
    let done = agent.run(take_over(running)).await.unwrap();
    assert_eq!(done.final_message.content(), "done");
    // But not a second time: the thread went on from it.
    let (_, head) = head_of(&agent, "marked").await;
    assert_eq!(head.status, CheckpointStatus::Completed);
}

/// What a [`Steered`] store does with an append.
#[derive(Clone)]
enum Plan {
    /// Refuses it: nothing written.
    Refuse,
    /// Writes it, and answers that the answer never came.
    Lose,
    /// Waits for the notice, then writes it.
    Hold(Arc<Notify>),
}

/// A memory store whose appends, one after another, follow a plan (and are written
/// past its end), as a store that fails, loses answers or stalls.
#[derive(Clone)]
struct Steered {
    inner: MemoryStore,
    plan: Arc<[Option<Plan>]>,
    appends: Arc<AtomicUsize>,
}

impl Steered {
    fn new(plan: impl IntoIterator<Item = Option<Plan>>) -> Self {
        Steered {
            inner: MemoryStore::new(),
            plan: plan.into_iter().collect(),
            appends: Arc::default(),
        }
    }

    fn appends(&self) -> usize {
        self.appends.load(Ordering::SeqCst)
    }

    /// Yields until the store has seen `n` appends.
    async fn until_appended(&self, n: usize) {
        while self.appends() < n {
            tokio::task::yield_now().await;
        }
    }
}

impl CheckpointStore for Steered {
    fn head<'a>(&'a self, t: &'a str) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        self.inner.head(t)
    }

    fn get<'a>(
        &'a self,
        t: &'a str,
        v: u64,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        self.inner.get(t, v)
    }

    fn append<'a>(
        &'a self,
        t: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.append_owned(t, "", expected, bytes)
    }

    fn append_owned<'a>(
        &'a self,
        t: &'a str,
        owner: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let n = self.appends.fetch_add(1, Ordering::SeqCst);
            // (The memory store writes when called, not when awaited.)
            let append = || self.inner.append_owned(t, owner, expected, bytes);
            match self.plan.get(n).cloned().flatten() {
                None => append().await,
                Some(Plan::Refuse) => Err(StoreError::backend("the store is down")),
                Some(Plan::Lose) => {
                    append().await?;
                    Err(StoreError::outcome_unknown("the answer never came"))
                }
                Some(Plan::Hold(go)) => {
                    go.notified().await;
                    append().await
                }
            }
        })
    }

    fn list<'a>(&'a self, t: &'a str) -> BoxFuture<'a, Result<Vec<u64>, StoreError>> {
        self.inner.list(t)
    }

    fn delete_thread<'a>(&'a self, t: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.delete_thread(t)
    }
}

#[tokio::test]
async fn a_run_whose_checkpoint_the_store_refuses_ends_at_once_and_frees_its_thread_later() {
    // The claim is written; the run's last record is refused; the failed mark that
    // frees the thread waits until the store is back.
    let back = Arc::new(Notify::new());
    let store = Steered::new([None, Some(Plan::Refuse), Some(Plan::Hold(back.clone()))]);
    let model = ScriptedModel::new([Turn::text("answer"), Turn::text("again")]);
    let agent = Agent::builder(model)
        .checkpoints(store.clone())
        .build()
        .unwrap();
    let run = agent.run(AgentRequest::user("hi").on_thread("down"));
    // Guarded: a run that waited for its failed mark would wait for good here.
    let failed = tokio::time::timeout(Duration::from_secs(30), run).await;
    let failed = failed.expect("the run ended without waiting for a second write");
    let Err(AgentError::Checkpoint(error)) = &failed else {
        panic!("{failed:?}")
    };
    assert_eq!(error.code(), "store_failed");
    assert!(!error.is_outcome_unknown());
    // Not written: the thread holds the run's claim; the mark comes in the background.
    let (claim, head) = agent.last_checkpoint("down").await.unwrap().unwrap();
    assert_eq!((claim.version, head.status), (1, CheckpointStatus::Running));
    store.until_appended(3).await;

    back.notify_one();
    loop {
        let (_, head) = head_of(&agent, "down").await;
        if head.status == CheckpointStatus::Failed {
            break;
        }
        tokio::task::yield_now().await;
    }
    let next = agent
        .run(AgentRequest::user("hi again").on_thread("down"))
        .await
        .unwrap();
    let texts: Vec<&str> = next.messages.iter().map(Message::content).collect();
    assert_eq!(
        texts,
        ["hi again", "again"],
        "the thread as it was before the run"
    );
}

#[tokio::test]
async fn a_checkpoint_whose_answer_never_came_is_outcome_unknown_and_the_head_tells() {
    // The claim is written; the run's last record is written, but its answer is lost.
    let store = Steered::new([None, Some(Plan::Lose)]);
    let model = ScriptedModel::new([Turn::text("the answer")]);
    let agent = Agent::builder(model)
        .checkpoints(store.clone())
        .build()
        .unwrap();
    let failed = agent.run(AgentRequest::user("hi").on_thread("lost")).await;
    let Err(AgentError::Checkpoint(error)) = &failed else {
        panic!("{failed:?}")
    };
    assert_eq!(
        failed.as_ref().unwrap_err().code(),
        "checkpoint_outcome_unknown"
    );
    assert!(error.is_outcome_unknown());
    let CheckpointError::OutcomeUnknown { thread, run, .. } = &**error else {
        panic!("{error:?}")
    };
    // The failed mark, in the background, finds the thread moved on: it writes nothing.
    store.until_appended(3).await;
    tokio::task::yield_now().await;

    // Reconciling: the thread's head is the run's completed record, so the run succeeded.
    let (id, head) = agent.last_checkpoint(thread).await.unwrap().unwrap();
    assert_eq!((&id.run, head.status), (run, CheckpointStatus::Completed));
    assert_eq!(head.base.last().map(Message::content), Some("the answer"));
    assert_eq!(store.list(thread).await.unwrap(), [1, 2]);
}
