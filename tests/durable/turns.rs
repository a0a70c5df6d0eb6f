//! Per-turn records: after its first record, each turn of a durable run writes only what
//! changed since the record before (format 3), and every reader gets the whole
//! checkpoint back through the store.

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tower_adk::agent::{Checkpoint, CheckpointStatus};
use tower_adk::checkpoint::{
    CheckpointError, CheckpointStore, FORMAT, MemoryStore, StoreError, StoredRecord,
};
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, Message, Messages, handlers};

use super::{Counter, counted};

/// A word in the thread's history before the run, and nowhere else.
const EARLIER: &str = "zanzibar";

/// A thread whose first run left a long history: 20 messages, each with [`EARLIER`].
async fn thread_with_history(store: &MemoryStore, thread: &str) {
    let model = ScriptedModel::new([Turn::text(format!("noted, {EARLIER}"))]);
    let agent = Agent::builder(model)
        .checkpoints(store.clone())
        .build()
        .unwrap();
    let input: Vec<Message> = (0..19)
        .map(|i| Message::user(format!("{EARLIER} fact number {i}")))
        .collect();
    agent
        .run(AgentRequest::new(input).on_thread(thread))
        .await
        .unwrap();
}

/// A durable agent whose model calls `step` three times, one turn each, then answers.
fn three_turns(store: &MemoryStore, steps: &Counter) -> tower_adk::AgentBuilder {
    let model = ScriptedModel::new([
        Turn::call("c1", "step", json!({"amount": 1})),
        Turn::call("c2", "step", json!({"amount": 2})),
        Turn::call("c3", "step", json!({"amount": 3})),
        Turn::text("three steps"),
    ]);
    Agent::builder(model)
        .instruction("Take steps.")
        .checkpoints(store.clone())
        .durable(true)
        .tool(counted("step", steps))
}

/// A store whose thread `t` has the long history, then a run of [`three_turns`] on it
/// with `request`, which ended with its answer.
async fn three_turns_on_history(request: AgentRequest) -> MemoryStore {
    let store = MemoryStore::new();
    thread_with_history(&store, "t").await;
    let agent = three_turns(&store, &Counter::default()).build().unwrap();
    let result = agent.run(request.on_thread("t")).await.unwrap();
    assert_eq!(result.final_message.content(), "three steps");
    store
}

/// The thread's records, oldest first: each as stored, and its JSON.
async fn records(store: &MemoryStore, thread: &str) -> Vec<(StoredRecord, Value)> {
    let mut out = Vec::new();
    for version in store.list(thread).await.unwrap() {
        let record = store.get(thread, version).await.unwrap().unwrap();
        let json = serde_json::from_slice(&record.bytes).unwrap();
        out.push((record, json));
    }
    out
}

/// The format of each record.
fn formats(records: &[(StoredRecord, Value)]) -> Vec<u64> {
    let format = |(_, json): &(StoredRecord, Value)| json["format"].as_u64().unwrap();
    records.iter().map(format).collect()
}

fn contains(record: &StoredRecord, word: &str) -> bool {
    String::from_utf8_lossy(&record.bytes).contains(word)
}

#[tokio::test]
async fn a_turns_record_holds_only_what_the_turn_added() {
    let store = three_turns_on_history(AgentRequest::user("go")).await;

    let records = records(&store, "t").await;
    // The first run's two records, then this run's: its claim, one per turn, its end.
    assert_eq!(formats(&records), [2, 2, 2, 3, 3, 3, 2]);
    let claim = &records[2].0;
    for (at, (record, json)) in records.iter().enumerate().take(6).skip(3) {
        let turns = at - 2;
        // Each continues the one before, and holds nothing of the thread's history.
        assert_eq!(json["continues"]["version"], records[at - 1].0.version);
        assert!(
            !contains(record, EARLIER),
            "record {at} rewrote the history"
        );
        assert!(record.bytes.len() * 2 < claim.bytes.len());
        let messages = json["run"]["state"]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2, "the turn's call and its result");
        // Read back through the store, it is the whole run at that point.
        let checkpoint = Checkpoint::load(&store, "t", record).await.unwrap();
        assert_eq!(checkpoint.status, CheckpointStatus::Running);
        assert_eq!(checkpoint.base.len(), 20);
        assert_eq!(checkpoint.run.records().count(), turns);
        let history = &checkpoint.run.history().messages;
        assert_eq!(history.len(), 1 + 20 + 1 + 2 * turns);
        assert_eq!(history[1].content(), format!("{EARLIER} fact number 0"));
        // Its bytes alone do not make a checkpoint, and say which record they continue.
        match Checkpoint::decode(&record.bytes) {
            Err(CheckpointError::Continues { version }) => {
                assert_eq!(version, records[at - 1].0.version)
            }
            other => panic!("a continuing record decoded alone: {other:?}"),
        }
    }
    // A turn's record does not grow with the run: each holds one turn.
    let sizes: Vec<usize> = records[3..6].iter().map(|(r, _)| r.bytes.len()).collect();
    let spread = sizes.iter().max().unwrap() - sizes.iter().min().unwrap();
    assert!(spread < 64, "{sizes:?}");
    // The run's end is whole again, and the thread goes on from it.
    let end = Checkpoint::decode(&records[6].0.bytes).unwrap();
    assert_eq!(end.status, CheckpointStatus::Completed);
    assert_eq!(end.base.len(), 20 + 1 + 6 + 1);
    assert_eq!(FORMAT, 3);
}

#[tokio::test]
async fn a_run_taken_over_from_a_continuing_record_runs_no_finished_turn_again() {
    let store = MemoryStore::new();
    thread_with_history(&store, "t").await;
    let steps = Counter::default();
    let first = three_turns(&store, &steps).build().unwrap();
    first
        .run(AgentRequest::user("go").on_thread("t"))
        .await
        .unwrap();
    // The record after the second turn, as a crash would have left it: the head.
    let records = records(&store, "t").await;
    let (after_two, json) = &records[4];
    assert_eq!(json["format"], 3);
    let (thread, version) = ("crashed", after_two.version);
    for (record, _) in &records[..5] {
        let expected = (record.version > 1).then(|| record.version - 1);
        store
            .append(thread, expected, record.bytes.clone())
            .await
            .unwrap();
    }
    let (id, head) = first.last_checkpoint(thread).await.unwrap().unwrap();
    assert_eq!((id.version, head.run.records().count()), (version, 2));

    // Resuming it takes the run over: the third turn runs, the first two do not.
    let model = ScriptedModel::new([
        Turn::call("c3", "step", json!({"amount": 3})),
        Turn::text("three steps"),
    ]);
    let later = Agent::builder(model.clone())
        .instruction("Take steps.")
        .checkpoints(store.clone())
        .durable(true)
        .tool(counted("step", &steps))
        .build()
        .unwrap();
    let resume = AgentRequest::resume(id, Vec::<(String, Decision)>::new());
    let result = later.run(resume).await.unwrap();
    assert_eq!(result.final_message.content(), "three steps");
    assert_eq!(steps.get(), 3 + 1);
    let seen = &model.requests()[0].messages;
    assert_eq!(
        seen.len(),
        1 + 20 + 1 + 4,
        "the history up to the second turn"
    );
    assert!(seen[1].content().contains(EARLIER));
}

#[tokio::test]
async fn a_hook_that_rewrites_what_a_record_holds_makes_the_next_record_whole() {
    // Before the third model call, the thread's first message is rewritten.
    let forget = handlers::before_model(|cx, history| {
        if cx.iteration() == 3 {
            history.messages.to_mut()[1] = Message::user("forgotten");
        }
        Ok(())
    });
    let store = three_turns_on_history(AgentRequest::user("go").with_handler(forget)).await;
    let records = records(&store, "t").await;
    // The first run's two, then the claim, turn 1 continues it, turn 2 continues that,
    // turn 3 (after the rewrite) is whole, then the end.
    assert_eq!(formats(&records), [2, 2, 2, 3, 3, 2, 2]);
    let after = Checkpoint::load(&store, "t", &records[5].0).await.unwrap();
    assert_eq!(after.run.history().messages[1].content(), "forgotten");
    let before = Checkpoint::load(&store, "t", &records[4].0).await.unwrap();
    assert!(before.run.history().messages[1].content().contains(EARLIER));
}

/// A store that has lost one version of every thread (it expired, say).
#[derive(Clone)]
struct Lost {
    inner: MemoryStore,
    version: u64,
}

impl CheckpointStore for Lost {
    fn head<'a>(&'a self, t: &'a str) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        self.inner.head(t)
    }
    fn get<'a>(
        &'a self,
        t: &'a str,
        version: u64,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        if version == self.version {
            return Box::pin(async { Ok(None) });
        }
        self.inner.get(t, version)
    }
    fn append<'a>(
        &'a self,
        t: &'a str,
        expected: Option<u64>,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.inner.append(t, expected, bytes)
    }
    fn list<'a>(&'a self, t: &'a str) -> BoxFuture<'a, Result<Vec<u64>, StoreError>> {
        self.inner.list(t)
    }
    fn delete_thread<'a>(&'a self, t: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.delete_thread(t)
    }
}

#[tokio::test]
async fn a_continuing_record_whose_earlier_record_is_gone_or_does_not_fit_is_corrupt() {
    let store = three_turns_on_history(AgentRequest::user("go")).await;
    let records = records(&store, "t").await;
    let (third, _) = &records[5];
    let lost = Lost {
        inner: store.clone(),
        version: records[3].0.version,
    };
    let error = Checkpoint::load(&lost, "t", third).await.unwrap_err();
    assert!(
        matches!(&error, CheckpointError::Corrupt(m) if m.contains("gone")),
        "{error}"
    );

    // Written by hand to break the reader: a record that continues itself, one that
    // continues a later one, one that takes more messages than the earlier one has, and
    // a whole record that says it continues another.
    let mut json: Value = serde_json::from_slice(&third.bytes).unwrap();
    let hostile = [
        (
            "continues",
            json!({"version": third.version, "messages": 0, "records": 0}),
        ),
        (
            "continues",
            json!({"version": third.version + 1, "messages": 0, "records": 0}),
        ),
        (
            "continues",
            json!({"version": third.version - 1, "messages": 999, "records": 0}),
        ),
        ("format", json!(2)),
    ];
    for (field, value) in hostile {
        let original = json[field].clone();
        json[field] = value;
        let bytes = serde_json::to_vec(&json).unwrap();
        let record = StoredRecord::new(third.version, bytes);
        let error = Checkpoint::load(&store, "t", &record).await.unwrap_err();
        assert!(matches!(error, CheckpointError::Corrupt(_)), "{error}");
        json[field] = original;
    }
    let history: Messages = Checkpoint::load(&store, "t", third)
        .await
        .unwrap()
        .run
        .history()
        .messages
        .clone();
    assert_eq!(history.len(), 1 + 20 + 1 + 6);
}
