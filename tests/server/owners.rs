//! Callers own their threads over HTTP: two clerks of the same role on every route that
//! touches a thread or a checkpoint (the other gets 404 and nothing changes); a manager
//! approving a clerk's payment, after which the run is still the clerk's; and a thousand
//! callers at once, each on their own thread, never seeing each other's.

use futures::StreamExt;
use serde_json::{Value, json};
use tower_adk::auth::{Access, Action};
use tower_adk::checkpoint::{CheckpointStore, MemoryStore};
use tower_adk::server::{BearerTokens, ServedAgent, Server};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, HandlerLayer};

use super::{Counter, SseReader, TestServer, asking_tool};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
enum Role {
    Clerk,
    Manager,
}

fn paying_model() -> ScriptedModel {
    ScriptedModel::per_run([
        Turn::call("c1", "pay", json!({"to": "Bob"})),
        Turn::text("Paid."),
        Turn::text("Anything else?"),
    ])
}

/// A bank whose payments wait for approval, which a clerk gives for their own or a
/// manager for anyone's; only managers see `audit_log`.
fn bank(model: &ScriptedModel, store: &MemoryStore, paid: &Counter) -> Server {
    let agent = Agent::builder(model.clone())
        .name("bank")
        .checkpoints(store.clone())
        .tool(asking_tool(paid))
        .tool(text_tool("audit_log", "the log"))
        .keep_identity::<Role>("role")
        .authorize(|access: &Access<'_>| {
            let manager = access.identity.get::<Role>() == Some(&Role::Manager);
            access.is_owner() || (manager && access.action == Action::Decide)
        })
        .build()
        .unwrap();
    let managers_see_the_log = tower_adk::handlers::filter_tools(|ext, tool| {
        tool.name() != "audit_log" || ext.get::<Role>() == Some(&Role::Manager)
    });
    let served = ServedAgent::new(agent).layer(HandlerLayer::new(managers_see_the_log));
    let tokens = BearerTokens::new()
        .token_of("alice", "alice-token", Role::Clerk)
        .token_of("bob", "bob-token", Role::Clerk)
        .token_of("maria", "maria-token", Role::Manager);
    Server::new().agent("bank", served).identify(tokens)
}

/// A request as `token`'s caller (one client for all: its pool keeps connections).
fn client(token: &str, method: reqwest::Method, url: String) -> reqwest::RequestBuilder {
    static CLIENT: std::sync::LazyLock<reqwest::Client> =
        std::sync::LazyLock::new(reqwest::Client::new);
    CLIENT.request(method, url).bearer_auth(token)
}

async fn status_and_json(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn post(server: &TestServer, token: &str, path: &str, body: Value) -> (u16, Value) {
    let request = client(token, reqwest::Method::POST, server.url(path)).json(&body);
    status_and_json(request).await
}

async fn get(server: &TestServer, token: &str, path: &str) -> (u16, Value) {
    status_and_json(client(token, reqwest::Method::GET, server.url(path))).await
}

/// Alice's payment on `thread`, waiting for approval: its checkpoint and interrupt ids.
async fn alice_pays(server: &TestServer, thread: &str) -> (String, String) {
    let body = json!({"input": "Pay Bob", "thread": thread});
    let (status, answer) = post(server, "alice-token", "/agents/bank/runs", body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["status"], "interrupted", "{answer}");
    let checkpoint = answer["checkpoint"].as_str().unwrap().to_owned();
    let interrupt = answer["interrupts"][0]["id"].as_str().unwrap().to_owned();
    (checkpoint, interrupt)
}

fn approve(checkpoint: &str, interrupt: &str) -> Value {
    json!({"resume": {"checkpoint": checkpoint, "decisions": {interrupt: {"type": "approve"}}}})
}

#[tokio::test]
async fn another_clerk_gets_404_on_every_route_of_a_thread_and_nothing_changes() {
    let (model, store, paid) = (paying_model(), MemoryStore::new(), Counter::default());
    let server = TestServer::start(bank(&model, &store, &paid).into_router()).await;
    let (checkpoint, interrupt) = alice_pays(&server, "alice-1").await;
    let versions = store.list("alice-1").await.unwrap();

    let code = |answer: &Value| answer["error"]["code"].as_str().unwrap_or("").to_owned();
    // Read.
    let (status, answer) = get(&server, "bob-token", "/agents/bank/threads/alice-1").await;
    assert_eq!((status, code(&answer)), (404, "unknown_thread".to_owned()));
    // Continue.
    let body = json!({"input": "hi", "thread": "alice-1"});
    let (status, answer) = post(&server, "bob-token", "/agents/bank/runs", body).await;
    assert_eq!((status, code(&answer)), (404, "unknown_thread".to_owned()));
    // Resume, deciding.
    let body = approve(&checkpoint, &interrupt);
    let (status, answer) = post(&server, "bob-token", "/agents/bank/runs", body).await;
    assert_eq!(
        (status, code(&answer)),
        (404, "checkpoint_unknown".to_owned())
    );
    // The same through AG-UI.
    let agui = json!({
        "threadId": "x", "runId": "y", "messages": [],
        "resume": [{"interruptId": format!("{checkpoint}|{interrupt}"), "status": "resolved"}],
    });
    let response = client(
        "bob-token",
        reqwest::Method::POST,
        server.url("/agents/bank/agui"),
    )
    .json(&agui)
    .send()
    .await
    .unwrap();
    let text = response.text().await.unwrap();
    assert!(text.contains("checkpoint_unknown"), "{text}");
    // Delete.
    let delete = client(
        "bob-token",
        reqwest::Method::DELETE,
        server.url("/agents/bank/threads/alice-1"),
    );
    let (status, answer) = status_and_json(delete).await;
    assert_eq!((status, code(&answer)), (404, "unknown_thread".to_owned()));
    // List: Bob has no threads.
    let (status, listing) = get(&server, "bob-token", "/agents/bank/threads").await;
    assert_eq!(
        (status, listing["threads"].as_array().map(Vec::len)),
        (200, Some(0))
    );

    // Nothing ran, nothing was written.
    assert_eq!(store.list("alice-1").await.unwrap(), versions);
    assert_eq!(paid.get(), 0);
    // Alice sees her thread, in her listing too; the scheme of her header in any case.
    let mine = client(
        "alice-token",
        reqwest::Method::GET,
        server.url("/agents/bank/threads/alice-1"),
    )
    .header("authorization", "bearer alice-token");
    let (status, thread) = status_and_json(mine).await;
    assert_eq!((status, thread["owner"].as_str()), (200, Some("alice")));
    assert_eq!(thread["status"], "interrupted");
    let (_, listing) = get(&server, "alice-token", "/agents/bank/threads").await;
    assert_eq!(listing["threads"][0]["thread"], "alice-1");
}

#[tokio::test]
async fn another_clerk_cannot_replay_a_streamed_run() {
    let (model, store, paid) = (paying_model(), MemoryStore::new(), Counter::default());
    let server = TestServer::start(bank(&model, &store, &paid).into_router()).await;
    let response = client(
        "alice-token",
        reqwest::Method::POST,
        server.url("/agents/bank/runs"),
    )
    .header("accept", "text/event-stream")
    .json(&json!({"input": "Pay Bob", "thread": "alice-2"}))
    .send()
    .await
    .unwrap();
    let run_id = response.headers()["adk-run-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let events = SseReader::new(response).all().await;
    assert_eq!(events.last().unwrap().event, "completed");

    let path = format!("/agents/bank/runs/{run_id}/events");
    let (status, answer) = get(&server, "bob-token", &path).await;
    assert_eq!(
        (status, &answer["error"]["code"]),
        (404, &json!("unknown_run"))
    );
    let replay = client("alice-token", reqwest::Method::GET, server.url(&path))
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 200);
    let replayed = SseReader::new(replay).all().await;
    assert_eq!(replayed.len(), events.len());
}

#[tokio::test]
async fn a_manager_approves_a_clerks_payment_and_the_run_stays_the_clerks() {
    let (model, store, paid) = (paying_model(), MemoryStore::new(), Counter::default());
    let server = TestServer::start(bank(&model, &store, &paid).into_router()).await;
    let (checkpoint, interrupt) = alice_pays(&server, "alice-3").await;

    // The manager decides, though she may not read the thread.
    let (status, _) = get(&server, "maria-token", "/agents/bank/threads/alice-3").await;
    assert_eq!(status, 404);
    let body = approve(&checkpoint, &interrupt);
    let (status, answer) = post(&server, "maria-token", "/agents/bank/runs", body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["final_message"]["content"], "Paid.");
    assert_eq!(paid.get(), 1);

    // Both model calls showed the clerk's tools: no `audit_log` after the approval.
    let shown: Vec<Vec<String>> = (model.requests().iter())
        .map(|r| r.tool_names().map(str::to_owned).collect())
        .collect();
    assert_eq!(shown, [["pay"], ["pay"]]);
    // The thread is still Alice's, and says who approved.
    let (status, thread) = get(&server, "alice-token", "/agents/bank/threads/alice-3").await;
    assert_eq!(status, 200);
    assert_eq!(thread["owner"], "alice");
    assert_eq!(thread["audit"][0]["by"], "maria");
    assert_eq!(thread["audit"][0]["interrupt"], json!(interrupt));
    assert_eq!(thread["audit"][0]["decision"]["type"], "approve");
    // Deciding is all she may do with it.
    let body = json!({"input": "more", "thread": "alice-3"});
    let (status, _) = post(&server, "maria-token", "/agents/bank/runs", body).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_thousand_callers_at_once_on_their_own_threads_never_see_each_others() {
    const CALLERS: usize = 1_000;
    let model = ScriptedModel::per_run([Turn::text("Hello.")]);
    let store = MemoryStore::new();
    let agent = Agent::builder(model)
        .checkpoints(store.clone())
        .build()
        .unwrap();
    let tokens = (0..CALLERS).fold(BearerTokens::new(), |tokens, i| {
        tokens.token_of(format!("user-{i}"), format!("token-{i}"), ())
    });
    let router = Server::new()
        .agent("desk", ServedAgent::new(agent))
        .identify(tokens)
        .into_router();
    let server = TestServer::start(router).await;
    let server = &server;

    let runs = futures::stream::iter(0..CALLERS).map(|i| async move {
        let body = json!({"input": "hi", "thread": format!("thread-{i}")});
        let (status, _) = post(server, &format!("token-{i}"), "/agents/desk/runs", body).await;
        status
    });
    let statuses: Vec<u16> = runs.buffer_unordered(200).collect().await;
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");

    let reads = futures::stream::iter(0..CALLERS).map(|i| async move {
        let token = format!("token-{i}");
        let own = format!("/agents/desk/threads/thread-{i}");
        let other = format!("/agents/desk/threads/thread-{}", (i + 1) % CALLERS);
        let (own, _) = get(server, &token, &own).await;
        let (other, _) = get(server, &token, &other).await;
        let (_, listing) = get(server, &token, "/agents/desk/threads").await;
        let listed: Vec<Value> = listing["threads"].as_array().cloned().unwrap_or_default();
        (own, other, listed.len(), listed.first().cloned())
    });
    let reads: Vec<_> = reads.buffer_unordered(200).collect().await;
    for (own, other, listed, first) in reads {
        assert_eq!((own, other, listed), (200, 404, 1));
        assert!(first.is_some());
    }
}

#[tokio::test]
async fn a_streamed_resume_says_who_decided_and_every_event_says_when_it_was_sent() {
    let (model, store, paid) = (paying_model(), MemoryStore::new(), Counter::default());
    let server = TestServer::start(bank(&model, &store, &paid).into_router()).await;
    let (checkpoint, interrupt) = alice_pays(&server, "alice-5").await;

    let asked = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let asked_ms = asked.unwrap().as_secs_f64() * 1000.0;
    let response = client(
        "maria-token",
        reqwest::Method::POST,
        server.url("/agents/bank/runs"),
    )
    .header("accept", "text/event-stream")
    .json(&approve(&checkpoint, &interrupt))
    .send()
    .await
    .unwrap();
    let events = SseReader::new(response).all().await;

    let kinds: Vec<_> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(kinds[..2], ["run_started", "decided"], "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"completed"));
    let decided = &events[1].data;
    assert_eq!(decided["by"], "maria");
    assert_eq!(decided["interrupt"], json!(interrupt));
    assert_eq!(decided["decision"], json!({"type": "approve"}));
    // Each event's time, in ms since the epoch: from the request on, never going back.
    let times: Vec<f64> = events
        .iter()
        .map(|e| e.data["at_ms"].as_f64().unwrap())
        .collect();
    assert!(
        (times[0] - asked_ms).abs() < 5_000.0,
        "{times:?} vs {asked_ms}"
    );
    assert!(times.windows(2).all(|t| t[0] <= t[1]), "{times:?}");
    assert_eq!(times[0], times[1], "the decision is as old as the request");
    // The thread's audit says the same.
    let (_, thread) = get(&server, "alice-token", "/agents/bank/threads/alice-5").await;
    assert_eq!(thread["audit"][0]["by"], "maria");
}
