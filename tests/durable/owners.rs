//! Owned threads in the core, without the server: two principals of the same role touch
//! each other's threads and checkpoints, a manager decides on a clerk's call, a format-1
//! record belongs to the anonymous principal, and a caller lists their own threads.

use serde_json::json;
use tower_adk::agent::ResumeError;
use tower_adk::auth::{Access, Action, Identity, Principal};
use tower_adk::checkpoint::{CheckpointError, CheckpointStore, MemoryStore};
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentError, AgentRequest, AgentResult, RunContext, RunStatus, handlers};

use super::{AskBefore, Counter, counted};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
enum Role {
    Clerk,
    Manager,
}

fn alice() -> Identity {
    Identity::new(Principal::new("alice")).with(Role::Clerk)
}

fn bob() -> Identity {
    Identity::new(Principal::new("bob")).with(Role::Clerk)
}

fn manager() -> Identity {
    Identity::new(Principal::new("maria")).with(Role::Manager)
}

/// A bank agent that asks before `transfer`; only managers see `audit_log`.
fn bank(store: &MemoryStore, runs: &Counter) -> Agent {
    let model = ScriptedModel::per_run([
        Turn::call("c1", "transfer", json!({"amount": 5})),
        Turn::text("Sent."),
    ]);
    Agent::builder(model)
        .name("bank")
        .checkpoints(store.clone())
        .tool(counted("transfer", runs))
        .tool(text_tool("audit_log", "the log"))
        .keep_identity::<Role>("role")
        .authorize(|access: &Access<'_>| {
            let manager = access.identity.get::<Role>() == Some(&Role::Manager);
            access.is_owner() || (manager && access.action == Action::Decide)
        })
        .build()
        .unwrap()
}

/// The request of `who`, on `thread`, that asks before every transfer and shows
/// `audit_log` to managers only.
fn request(who: Identity, thread: &str) -> AgentRequest {
    AgentRequest::user("send 5")
        .with_identity(who)
        .on_thread(thread)
        .with_handler(AskBefore("transfer"))
        .with_handler(managers_see_the_log())
}

fn managers_see_the_log() -> tower_adk::BoxHandler {
    handlers::filter_tools(|ext, tool| {
        tool.name() != "audit_log" || ext.get::<Role>() == Some(&Role::Manager)
    })
    .into()
}

fn approve(stopped: &AgentResult, who: Identity) -> AgentRequest {
    let checkpoint = stopped.checkpoint.clone().unwrap();
    let id = stopped.interrupts[0].id.clone();
    AgentRequest::resume(checkpoint, [(id, Decision::Approve)])
        .with_identity(who)
        .with_handler(AskBefore("transfer"))
        .with_handler(managers_see_the_log())
}

#[tokio::test]
async fn another_principal_of_the_same_role_cannot_touch_a_thread_and_nothing_changes() {
    let (store, runs) = (MemoryStore::new(), Counter::default());
    let agent = bank(&store, &runs);
    let stopped = agent.run(request(alice(), "alice-1")).await.unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    let versions = store.list("alice-1").await.unwrap();

    // Bob continues Alice's thread: for him it does not exist.
    let run = agent.run(request(bob(), "alice-1")).await.unwrap_err();
    assert!(
        matches!(&run, AgentError::Checkpoint(e) if matches!(**e, CheckpointError::UnknownThread(_))),
        "{run}"
    );
    assert_eq!(run.code(), "unknown_thread");
    // Bob approves Alice's transfer with her checkpoint id: unknown to him.
    let resume = agent.run(approve(&stopped, bob())).await.unwrap_err();
    assert!(
        matches!(&resume, AgentError::Resume(e) if matches!(**e, ResumeError::Unknown(_))),
        "{resume}"
    );
    // He cannot read or delete it either.
    assert!(agent.thread_for(&bob(), "alice-1").await.unwrap().is_none());
    assert!(!agent.delete_thread_for(&bob(), "alice-1").await.unwrap());

    assert_eq!(store.list("alice-1").await.unwrap(), versions);
    assert_eq!(runs.get(), 0);
    // Alice can: her thread is as she left it.
    let (_, head) = agent
        .thread_for(&alice(), "alice-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(head.owner, Principal::new("alice"));
    assert_eq!(head.status, tower_adk::agent::CheckpointStatus::Interrupted);
    let done = agent.run(approve(&stopped, alice())).await.unwrap();
    assert_eq!(done.final_message.content(), "Sent.");
    assert_eq!(runs.get(), 1);
    assert!(agent.delete_thread_for(&alice(), "alice-1").await.unwrap());
}

/// Records, for every model call, the tools the model was shown and who the run was
/// for and who decided, as its hooks see them.
#[derive(Clone, Default)]
struct Seen(std::sync::Arc<std::sync::Mutex<Vec<ForAndBy>>>);

/// Who a run was for, and who decided, at one model call.
type ForAndBy = (String, Option<String>);

impl tower_adk::Handler for Seen {
    async fn before_model(
        &self,
        cx: &mut RunContext,
        _: &mut tower_adk::History,
    ) -> Result<(), tower_adk::BoxError> {
        let decider = cx.decider().map(|d| d.principal().subject().to_owned());
        let seen = (cx.principal().subject().to_owned(), decider);
        self.0.lock().unwrap().push(seen);
        Ok(())
    }
}

#[tokio::test]
async fn a_manager_decides_on_a_clerks_call_and_the_run_stays_the_clerks() {
    let (store, runs) = (MemoryStore::new(), Counter::default());
    let model = ScriptedModel::per_run([
        Turn::call("c1", "transfer", json!({"amount": 5})),
        Turn::text("Sent."),
    ]);
    let agent = Agent::builder(model.clone())
        .name("bank")
        .checkpoints(store.clone())
        .tool(counted("transfer", &runs))
        .tool(text_tool("audit_log", "the log"))
        .keep_identity::<Role>("role")
        .authorize(|access: &Access<'_>| {
            let manager = access.identity.get::<Role>() == Some(&Role::Manager);
            access.is_owner() || (manager && access.action == Action::Decide)
        })
        .build()
        .unwrap();
    let seen = Seen::default();
    let stopped = agent
        .run(request(alice(), "alice-2").with_handler(seen.clone()))
        .await
        .unwrap();

    // The manager may decide, but not read the clerk's thread.
    assert!(
        agent
            .thread_for(&manager(), "alice-2")
            .await
            .unwrap()
            .is_none()
    );
    let done = agent
        .run(approve(&stopped, manager()).with_handler(seen.clone()))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 1);

    // Both model calls showed the clerk's tools: the manager's approval gave the run
    // no `audit_log`.
    let shown: Vec<Vec<String>> = model
        .requests()
        .iter()
        .map(|r| r.tool_names().map(str::to_owned).collect())
        .collect();
    assert_eq!(shown, [["transfer"], ["transfer"]]);
    // The run is Alice's; the manager is who decided.
    let seen = seen.0.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("alice".to_owned(), None),
            ("alice".to_owned(), Some("maria".to_owned()))
        ]
    );
    // The thread's record keeps who decided what, and stays Alice's.
    let (_, head) = agent
        .thread_for(&alice(), "alice-2")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(head.owner, Principal::new("alice"));
    assert_eq!(head.audit.len(), 1);
    let decided = &head.audit[0];
    assert_eq!(decided.interrupt, stopped.interrupts[0].id);
    assert_eq!(decided.decision, Decision::Approve);
    assert_eq!(decided.by, Principal::new("maria"));
    // A manager may not continue the clerk's thread with a new run.
    let run = agent.run(request(manager(), "alice-2")).await.unwrap_err();
    assert_eq!(run.code(), "unknown_thread");
}

#[tokio::test]
async fn a_record_of_format_1_is_the_anonymous_principals() {
    let (store, runs) = (MemoryStore::new(), Counter::default());
    let agent = bank(&store, &runs);
    let stopped = agent
        .run(AgentRequest::user("send").with_handler(AskBefore("transfer")))
        .await
        .unwrap();
    let checkpoint = stopped.checkpoint.clone().unwrap();
    // The same record as this version's predecessor wrote it: format 1, no owner.
    let head = store.head(&checkpoint.thread).await.unwrap().unwrap();
    let mut record: serde_json::Value = serde_json::from_slice(&head.bytes).unwrap();
    assert_eq!(record["format"], 2);
    assert_eq!(record["owner"], "anonymous");
    record["format"] = json!(1);
    record.as_object_mut().unwrap().remove("owner");
    let bytes = serde_json::to_vec(&record).unwrap();
    let version = store
        .append(&checkpoint.thread, Some(head.version), bytes)
        .await
        .unwrap();
    let old = tower_adk::checkpoint::CheckpointId {
        version,
        ..checkpoint
    };
    let decisions = [(stopped.interrupts[0].id.clone(), Decision::Approve)];

    let alices = AgentRequest::resume(old.clone(), decisions.clone()).with_identity(alice());
    let refused = agent.run(alices.with_handler(AskBefore("transfer"))).await;
    assert_eq!(refused.unwrap_err().code(), "checkpoint_unknown");
    let anonymous = AgentRequest::resume(old, decisions).with_handler(AskBefore("transfer"));
    let done = agent.run(anonymous).await.unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_caller_lists_their_own_threads_newest_first_a_page_at_a_time() {
    let store = MemoryStore::new();
    // A thread's second run plays the second turn: the model counts the replies so far.
    let model = ScriptedModel::per_run([Turn::text("Hi."), Turn::text("Hi again.")]);
    let agent = Agent::builder(model)
        .checkpoints(store.clone())
        .build()
        .unwrap();
    for (who, thread) in [
        (alice(), "a1"),
        (bob(), "b1"),
        (alice(), "a2"),
        (alice(), "a3"),
    ] {
        let request = AgentRequest::user("hi")
            .with_identity(who)
            .on_thread(thread);
        agent.run(request).await.unwrap();
        // Writes in the same millisecond are ordered by name: keep the times apart.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    // Alice writes to her first thread again: it comes first now.
    let again = AgentRequest::user("again")
        .with_identity(alice())
        .on_thread("a1");
    agent.run(again).await.unwrap();

    let first = agent.threads_for(&alice(), None, 2).await.unwrap();
    let names: Vec<&str> = first.iter().map(|t| t.thread.as_str()).collect();
    assert_eq!(names, ["a1", "a3"]);
    let rest = agent.threads_for(&alice(), first.last(), 2).await.unwrap();
    let names: Vec<&str> = rest.iter().map(|t| t.thread.as_str()).collect();
    assert_eq!(names, ["a2"]);
    let bobs = agent.threads_for(&bob(), None, 10).await.unwrap();
    assert_eq!(bobs.len(), 1);
    assert_eq!(bobs[0].thread, "b1");
}
