//! Threads: a conversation across requests, one run at a time; durable runs that a new
//! loop takes over after a crash.

use std::time::Duration;

use serde_json::json;
use tower_adk::agent::CheckpointStatus;
use tower_adk::checkpoint::{CheckpointError, CheckpointStore, MemoryStore};
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn, sleep_tool};
use tower_adk::{Agent, AgentError, AgentRequest, Message, RunStatus};

use super::{AskBefore, Counter, counted};

#[tokio::test]
async fn a_thread_goes_on_across_three_requests() {
    let model = ScriptedModel::new([Turn::text("one"), Turn::text("two"), Turn::text("three")]);
    let agent = Agent::builder(model.clone())
        .instruction("Count.")
        .build()
        .unwrap();
    for word in ["a", "b", "c"] {
        let result = agent
            .run(AgentRequest::user(word).on_thread("t1"))
            .await
            .unwrap();
        assert!(result.checkpoint.is_some());
    }
    let third = &model.requests()[2].messages;
    let texts: Vec<&str> = third.iter().map(Message::content).collect();
    assert_eq!(texts, ["Count.", "a", "one", "b", "two", "c"]);
    let (_, head) = agent.last_checkpoint("t1").await.unwrap().unwrap();
    assert_eq!(head.status, CheckpointStatus::Completed);
    assert_eq!(head.base.len(), 6, "the thread keeps no instruction");

    // Another thread starts empty.
    model.push(Turn::text("fresh"));
    agent
        .run(AgentRequest::user("z").on_thread("t2"))
        .await
        .unwrap();
    assert_eq!(model.requests()[3].messages.len(), 2);
    assert!(agent.delete_thread("t1").await.unwrap());
    assert!(agent.last_checkpoint("t1").await.unwrap().is_none());
}

#[tokio::test]
async fn a_second_run_on_a_busy_thread_is_refused_and_the_first_is_not_lost() {
    let model =
        ScriptedModel::per_run([Turn::call("s", "slow", json!({})), Turn::text("finished")]);
    let agent = Agent::builder(model)
        .tool(sleep_tool("slow", Duration::from_millis(300), "slept"))
        .build()
        .unwrap();
    let first = tokio::spawn(
        agent
            .run(AgentRequest::user("first").on_thread("busy"))
            .into_future(),
    );
    // The first run has claimed the thread once its head says it runs.
    for _ in 0..200 {
        let head = agent.last_checkpoint("busy").await.unwrap();
        if head.is_some_and(|(_, c)| c.status == CheckpointStatus::Running) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let second = agent
        .run(AgentRequest::user("second").on_thread("busy"))
        .await;
    let Err(AgentError::Checkpoint(refused)) = &second else {
        panic!("{second:?}")
    };
    assert!(matches!(**refused, CheckpointError::ThreadBusy(ref t) if t == "busy"));

    let first = first.await.unwrap().unwrap();
    assert_eq!(first.final_message.content(), "finished");
    let (_, head) = agent.last_checkpoint("busy").await.unwrap().unwrap();
    let texts: Vec<&str> = head.base.iter().map(Message::content).collect();
    assert_eq!(texts.first(), Some(&"first"));
    assert!(!texts.contains(&"second"), "the refused run wrote nothing");
}

#[tokio::test]
async fn a_new_run_on_an_interrupted_thread_is_refused_until_it_is_resumed() {
    let runs = Counter::default();
    let model = ScriptedModel::new([
        Turn::call("c1", "transfer", json!({})),
        Turn::text("sent"),
        Turn::text("anything else?"),
    ]);
    let agent = Agent::builder(model)
        .tool(counted("transfer", &runs))
        .build()
        .unwrap();
    let ask = || AskBefore("transfer");
    let stopped = agent
        .run(
            AgentRequest::user("send")
                .on_thread("u1")
                .with_handler(ask()),
        )
        .await
        .unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    let checkpoint = stopped.checkpoint.clone().unwrap();
    assert_eq!(checkpoint.thread, "u1");

    let refused = agent
        .run(AgentRequest::user("hello?").on_thread("u1"))
        .await;
    let Err(AgentError::Checkpoint(error)) = &refused else {
        panic!("{refused:?}")
    };
    assert!(matches!(**error, CheckpointError::ThreadInterrupted(ref id) if *id == checkpoint));

    let resume = AgentRequest::resume(checkpoint, [("agent:agent/tool:c1", Decision::Approve)])
        .with_handler(ask());
    agent.run(resume).await.unwrap();
    let next = agent
        .run(AgentRequest::user("thanks").on_thread("u1"))
        .await
        .unwrap();
    assert_eq!(next.final_message.content(), "anything else?");
    let texts: Vec<&str> = next.messages.iter().map(Message::content).collect();
    assert_eq!(texts.first(), Some(&"send"));
    assert_eq!(texts.last(), Some(&"anything else?"));
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_durable_run_dropped_mid_turn_is_taken_over_from_its_last_finished_turn() {
    let (first, second) = (Counter::default(), Counter::default());
    let store = MemoryStore::new();
    let model = ScriptedModel::new([
        Turn::call("c1", "first", json!({})),
        // The reply the first process never gets.
        Turn::text("never").delay(Duration::from_secs(600)),
        Turn::call("c2", "second", json!({})),
        Turn::text("both done"),
    ]);
    let agent = Agent::builder(model.clone())
        .checkpoints(store.clone())
        .durable(true)
        .tool(counted("first", &first))
        .tool(counted("second", &second))
        .build()
        .unwrap();

    // The run dies while the model's second reply is awaited: the process "crashes".
    let run = tokio::spawn(
        agent
            .run(AgentRequest::user("go").on_thread("job"))
            .into_future(),
    );
    let (id, head) = loop {
        let head = agent.last_checkpoint("job").await.unwrap();
        if let Some((id, head)) = head.filter(|(_, c)| c.run.records().count() == 1) {
            break (id, head);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    run.abort();
    assert!(run.await.unwrap_err().is_cancelled());
    assert_eq!(head.status, CheckpointStatus::Running);
    assert_eq!(first.get(), 1);
    // Dropped, the run frees its thread: it writes itself as failed (a process that is
    // killed cannot; then the last turn's record above is the one to resume).
    let (id, _) = loop {
        let (latest, record) = agent.last_checkpoint("job").await.unwrap().unwrap();
        if latest != id {
            assert_eq!(record.status, CheckpointStatus::Failed);
            assert_eq!(record.run.records().count(), 1);
            break (latest, record);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let done = agent
        .run(AgentRequest::resume(id, Vec::<(String, Decision)>::new()))
        .await
        .unwrap();
    assert_eq!(done.final_message.content(), "both done");
    assert_eq!((first.get(), second.get()), (1, 1), "no tool ran twice");
    assert_eq!(done.tool_records.len(), 2);
    // The versions: the claim, the first turn, the drop; then the new loop's claim,
    // its turn, and the end.
    assert_eq!(store.list("job").await.unwrap(), [1, 2, 3, 4, 5, 6]);
}

#[tokio::test]
async fn a_run_dropped_on_its_thread_frees_the_thread_for_the_next_one() {
    let model = ScriptedModel::new([
        Turn::text("never").delay(Duration::from_secs(600)),
        Turn::text("hello again"),
    ]);
    let agent = Agent::builder(model).build().unwrap();
    let run = tokio::spawn(
        agent
            .run(AgentRequest::user("first").on_thread("d"))
            .into_future(),
    );
    while agent.last_checkpoint("d").await.unwrap().is_none() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    run.abort();
    assert!(run.await.unwrap_err().is_cancelled());
    // The dropped run writes itself as failed, on a task of its own.
    let failed = loop {
        let (_, head) = agent.last_checkpoint("d").await.unwrap().unwrap();
        if head.status != CheckpointStatus::Running {
            break head;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(failed.status, CheckpointStatus::Failed);
    let next = agent
        .run(AgentRequest::user("second").on_thread("d"))
        .await
        .unwrap();
    assert_eq!(next.final_message.content(), "hello again");
    // The failed run left the thread as it was before it: empty.
    let texts: Vec<&str> = next.messages.iter().map(Message::content).collect();
    assert_eq!(texts, ["second", "hello again"]);
}

/// Counts the runs of its thread in the thread's values, and each run's hooks in the
/// run-local values.
struct CountRuns;

impl tower_adk::Handler for CountRuns {
    async fn before_agent(
        &self,
        cx: &mut tower_adk::RunContext,
        config: tower_adk::AgentConfig,
    ) -> Result<tower_adk::AgentConfig, tower_adk::BoxError> {
        let runs = cx.thread_values().get::<u32>("runs")?.unwrap_or(0) + 1;
        cx.thread_values_mut().insert("runs", &runs)?;
        let starts = cx.locals().get::<u32>("starts")?.unwrap_or(0) + 1;
        cx.locals_mut().insert("starts", &starts)?;
        Ok(config)
    }
}

#[tokio::test]
async fn thread_values_go_on_to_the_next_run_of_the_thread_and_run_locals_do_not() {
    let model = ScriptedModel::new([Turn::text("one"), Turn::text("two"), Turn::text("3")]);
    let agent = Agent::builder(model).build().unwrap();
    let run = |thread: &'static str| {
        let request = AgentRequest::user("hi").on_thread(thread);
        agent.run(request.with_handler(CountRuns))
    };
    run("counted").await.unwrap();
    let second = run("counted").await.unwrap();
    assert_eq!(second.locals.get::<u32>("starts").unwrap(), Some(1));
    let (_, head) = agent.last_checkpoint("counted").await.unwrap().unwrap();
    let values = head.run.context().thread_values();
    assert_eq!(values.get::<u32>("runs").unwrap(), Some(2));

    // Another thread starts with none.
    run("other").await.unwrap();
    let (_, head) = agent.last_checkpoint("other").await.unwrap().unwrap();
    let values = head.run.context().thread_values();
    assert_eq!(values.get::<u32>("runs").unwrap(), Some(1));
}
