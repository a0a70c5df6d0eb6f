//! The official A2A SDK's client against the A2A face.

use serde_json::Value;

use super::{ALICE, BOB, MARIA, TestServer, agents, python};

/// The states of a stream's status updates, in order.
fn states(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| e["statusUpdate"]["status"]["state"].as_str())
        .collect()
}

fn events(value: &Value, key: &str) -> Vec<Value> {
    value[key].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sdks_resolver_reads_the_card_with_the_tools_an_anonymous_caller_sees() {
    let server = TestServer::start(agents().server).await;
    let base = server.url("/agents/weather");
    let card = python(&["card", &base]).await;
    assert_eq!(card["name"], "weather");
    assert_eq!(card["description"], "Forecasts the weather");
    assert_eq!(card["version"], "2.0.0");
    let interface = &card["supportedInterfaces"][0];
    assert_eq!(interface["url"], server.url("/agents/weather/a2a"));
    assert_eq!(interface["protocolBinding"], "JSONRPC");
    assert_eq!(interface["protocolVersion"], "1.0");
    assert_eq!(card["skills"][0]["id"], "weather");
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], false);
    let scheme = &card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"];
    assert_eq!(scheme["scheme"], "Bearer");
    assert!(
        card["securityRequirements"][0]["schemes"]
            .get("bearer")
            .is_some()
    );

    // The root agent's card, at the root.
    let root = python(&["card", &server.base]).await;
    assert_eq!(root["name"], "weather");
    assert_eq!(root["supportedInterfaces"][0]["url"], server.url("/a2a"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_blocking_message_returns_the_completed_task_and_get_task_cuts_its_history() {
    let agents = agents();
    let weather = agents.weather.clone();
    let server = TestServer::start(agents.server).await;
    let sent = python(&["send", &server.url("/agents/weather"), ALICE]).await;
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"],
        "It is sunny."
    );
    assert_eq!(task["artifacts"][0]["artifactId"], "answer");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "It is sunny.");
    let history = task["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(history[0]["role"], "ROLE_USER");
    assert_eq!(history[1]["role"], "ROLE_AGENT");
    // The context is our thread: the run left it a checkpoint.
    let context = task["contextId"].as_str().unwrap();
    assert!(weather.last_checkpoint(context).await.unwrap().is_some());
    let got = &sent["got"];
    assert_eq!(got["id"], task["id"]);
    assert_eq!(got["history"].as_array().unwrap().len(), 1);
    assert_eq!(got["history"][0]["role"], "ROLE_AGENT");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_message_sends_the_task_working_the_answers_chunks_and_completed() {
    let server = TestServer::start(agents().server).await;
    let streamed = python(&["stream", &server.url("/agents/weather"), ALICE]).await;
    let events = events(&streamed, "events");
    assert!(events[0].get("task").is_some(), "{events:?}");
    assert_eq!(
        states(&events),
        ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    );
    let chunks: Vec<&Value> = events
        .iter()
        .filter_map(|e| e.get("artifactUpdate"))
        .collect();
    let texts: Vec<&str> = chunks
        .iter()
        .filter_map(|c| c["artifact"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(texts, ["It is ", "sunny."]);
    assert_eq!(
        chunks[0].get("append"),
        None,
        "the first chunk starts the artifact"
    );
    assert_eq!(chunks[1]["append"], true);
    let last = chunks.last().unwrap();
    assert_eq!(last["lastChunk"], true);
    assert!(events.last().unwrap().get("statusUpdate").is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_crosses_the_boundary_and_the_tool_runs_once_after_it() {
    let agents = agents();
    let paid = agents.paid.clone();
    let server = TestServer::start(agents.server).await;
    let approved = python(&["approve", &server.url("/agents/bank"), ALICE]).await;
    let first = events(&approved, "first");
    assert_eq!(
        states(&first),
        ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"]
    );
    let asked = &first.last().unwrap()["statusUpdate"]["status"]["message"];
    assert_eq!(asked["parts"][0]["text"], "Pay Bob 5?");
    let interrupt = &asked["parts"][1]["data"]["interrupts"][0];
    assert_eq!(interrupt["id"], "agent:bank/tool:c1");
    assert_eq!(interrupt["call"]["name"], "pay");
    assert_eq!(interrupt["payload"]["allowed"][0], "approve");
    let second = events(&approved, "second");
    assert_eq!(
        states(&second),
        ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    );
    assert_eq!(
        paid.get(),
        1,
        "the tool ran exactly once, after the approval"
    );
    let task = &approved["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        task["id"], first[0]["task"]["id"],
        "the resume is the same task"
    );
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "Done.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejection_keeps_the_tool_from_running_and_decisions_that_do_not_read_change_nothing() {
    let agents = agents();
    let paid = agents.paid.clone();
    let server = TestServer::start(agents.server).await;
    let rejected = python(&["reject", &server.url("/agents/bank"), ALICE]).await;
    assert!(rejected["refused"].as_str().unwrap().contains("decisions"));
    let second = events(&rejected, "second");
    assert_eq!(
        states(&second),
        ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    );
    assert_eq!(paid.get(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_task_cancels_a_slow_run_which_leaves_its_checkpoint() {
    let agents = agents();
    let slow = agents.slow.clone();
    let server = TestServer::start(agents.server).await;
    let canceled = python(&["cancel", &server.url("/agents/slow"), ALICE]).await;
    let events = events(&canceled, "events");
    assert_eq!(
        states(&events),
        ["TASK_STATE_WORKING", "TASK_STATE_CANCELED"]
    );
    let task = &canceled["canceled"];
    assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED");
    assert_eq!(canceled["again"], "TaskNotCancelable");
    let context = task["contextId"].as_str().unwrap();
    let (_, checkpoint) = slow.last_checkpoint(context).await.unwrap().unwrap();
    assert_eq!(
        checkpoint.status.as_str(),
        "failed",
        "the cancelled run left its checkpoint"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn another_principals_task_and_context_are_not_found_and_nothing_runs() {
    let agents = agents();
    let paid = agents.paid.clone();
    let server = TestServer::start(agents.server).await;
    let outcomes = python(&["other", &server.url("/agents/bank"), ALICE, BOB]).await;
    assert_eq!(outcomes["get"], "TaskNotFound");
    assert_eq!(outcomes["resume"], "TaskNotFound");
    assert_eq!(outcomes["cancel"], "TaskNotFound");
    assert_eq!(outcomes["context"], "TaskNotFound");
    assert_eq!(outcomes["owner_sees"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(paid.get(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_principal_the_agent_lets_decide_resumes_anothers_task_as_on_our_resume_route() {
    let agents = agents();
    let paid = agents.paid.clone();
    let server = TestServer::start(agents.server).await;
    let decided = python(&["decide", &server.url("/agents/vault"), ALICE, MARIA]).await;
    let second = events(&decided, "second");
    assert_eq!(
        states(&second),
        ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    );
    assert_eq!(paid.get(), 1);
    assert_eq!(decided["owner_sees"], "TASK_STATE_COMPLETED");
}
