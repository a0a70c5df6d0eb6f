//! Limits per principal: runs in flight and requests per period, each caller its own,
//! answered 429 with a JSON code and `Retry-After` (the OpenAI routes in their shape).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tower_adk::server::{BearerTokens, Limits, Server};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, BoxError, Tool, ToolInfo, ToolOutput};

use super::{Counter, SseReader, TestServer};

/// Agent `a`: each run calls `wait`, which counts itself in `entered` and answers once
/// `gate` lets it, then says done. Agent `b` answers at once.
fn gated(gate: &Arc<Semaphore>, entered: &Counter, limits: Limits) -> Server {
    let (gate, entered) = (Arc::clone(gate), entered.clone());
    let wait = Tool::from_fn(ToolInfo::new("wait", "Waits"), move |_| {
        let gate = Arc::clone(&gate);
        entered.bump();
        async move {
            gate.acquire().await?.forget();
            Ok::<_, BoxError>(ToolOutput::new("opened"))
        }
    });
    let model = ScriptedModel::per_run([Turn::call("c1", "wait", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model).tool(wait).build().unwrap();
    let at_once = ScriptedModel::per_run([Turn::text("at once")]);
    let at_once = Agent::builder(at_once).build().unwrap();
    let tokens = BearerTokens::new()
        .token_of("alice", "alice-token", ())
        .token_of("bob", "bob-token", ());
    Server::new()
        .agent("a", agent)
        .agent("b", at_once)
        .identify(tokens)
        .limits(limits)
}

async fn post(server: &TestServer, token: &str, sse: bool) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(server.url("/agents/a/runs"))
        .bearer_auth(token)
        .json(&json!({"input": "go"}));
    if sse {
        request = request.header("accept", "text/event-stream");
    }
    request.send().await.unwrap()
}

/// A streamed run of `token`'s, read until its tool waits at the gate.
async fn waiting(server: &TestServer, token: &str) -> SseReader {
    let response = post(server, token, true).await;
    assert_eq!(response.status(), 200);
    let mut events = SseReader::new(response);
    while events.next().await.unwrap().event != "tool_call_started" {}
    events
}

/// The status, `Retry-After` and JSON code of a refusal.
async fn refusal(response: reqwest::Response) -> (u16, Option<String>, String) {
    let status = response.status().as_u16();
    let retry = response.headers().get("retry-after");
    let retry = retry.map(|v| v.to_str().unwrap().to_owned());
    let body: Value = response.json().await.unwrap();
    let code = body["error"]["code"].as_str().unwrap_or("none").to_owned();
    (status, retry, code)
}

/// Runs agent `b` (which needs no gate) as `token` until it is answered 200, for at most
/// 5 s.
async fn eventually_runs(server: &TestServer, token: &str) {
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let response = reqwest::Client::new()
                .post(server.url("/agents/b/runs"))
                .bearer_auth(token)
                .json(&json!({"input": "go"}))
                .send()
                .await
                .unwrap();
            if response.status() == 200 {
                return;
            }
            assert_eq!(response.status(), 429);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the slot is given back");
}

#[tokio::test]
async fn a_caller_at_its_most_runs_gets_429_while_another_caller_still_runs() {
    let gate = Arc::new(Semaphore::new(0));
    let server = gated(
        &gate,
        &Counter::default(),
        Limits::default().runs_per_principal(1),
    );
    let server = TestServer::start(server.into_router()).await;

    let alices = waiting(&server, "alice-token").await;
    let second = post(&server, "alice-token", false).await;
    let streamed = post(&server, "alice-token", true).await;
    let client = reqwest::Client::new();
    let send = |path: &str, body: Value| {
        let request = client.post(server.url(path)).bearer_auth("alice-token");
        request.json(&body).send()
    };
    let chat = json!({"model": "a", "messages": [{"role": "user", "content": "go"}]});
    let chat = send("/v1/chat/completions", chat).await.unwrap();
    let input = json!({"id": "m", "role": "user", "content": "go"});
    let agui = json!({"threadId": "t", "runId": "r", "messages": [input]});
    let agui = send("/agents/a/agui", agui).await.unwrap();
    let bobs = waiting(&server, "bob-token").await;

    assert_eq!(
        refusal(second).await,
        (429, Some("1".to_owned()), "too_many_runs".to_owned())
    );
    assert_eq!(refusal(streamed).await.2, "too_many_runs");
    assert_eq!(refusal(agui).await.2, "too_many_runs");
    assert_eq!(chat.status(), 429);
    assert!(chat.headers().contains_key("retry-after"));
    let chat: Value = chat.json().await.unwrap();
    assert_eq!(chat["error"]["type"], "rate_limit_error");
    assert_eq!(chat["error"]["code"], "too_many_runs");
    gate.add_permits(2);
    let (alices, bobs) = (alices.all().await, bobs.all().await);
    assert_eq!(alices.last().unwrap().event, "completed");
    assert_eq!(bobs.last().unwrap().event, "completed");
    // Alice's stream ended: her slot is free again.
    gate.add_permits(1);
    assert_eq!(post(&server, "alice-token", false).await.status(), 200);
}

#[tokio::test]
async fn a_streamed_run_whose_client_goes_away_gives_its_slot_back() {
    let gate = Arc::new(Semaphore::new(0));
    let server = gated(
        &gate,
        &Counter::default(),
        Limits::default().runs_per_principal(1),
    );
    let server = TestServer::start(server.into_router()).await;

    let alices = waiting(&server, "alice-token").await;
    assert_eq!(post(&server, "alice-token", true).await.status(), 429);
    drop(alices);

    // The gate stays shut: only the disconnect can end the run.
    eventually_runs(&server, "alice-token").await;
}

#[tokio::test]
async fn a_run_answered_as_json_holds_its_slot_until_it_completes() {
    let (gate, entered) = (Arc::new(Semaphore::new(0)), Counter::default());
    let server = gated(&gate, &entered, Limits::default().runs_per_principal(1));
    let server = Arc::new(TestServer::start(server.into_router()).await);

    let running = tokio::spawn({
        let server = Arc::clone(&server);
        async move { post(&server, "alice-token", false).await.status() }
    });
    tokio::time::timeout(Duration::from_secs(5), async {
        while entered.get() == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the JSON run waits at the gate");
    let refused = post(&server, "alice-token", true).await;
    gate.add_permits(1);

    assert_eq!(refusal(refused).await.2, "too_many_runs");
    assert_eq!(running.await.unwrap(), 200);
    gate.add_permits(1);
    assert_eq!(post(&server, "alice-token", false).await.status(), 200);
}

#[tokio::test]
async fn a_caller_past_its_rate_gets_429_with_retry_after_and_another_caller_does_not() {
    let gate = Arc::new(Semaphore::new(Semaphore::MAX_PERMITS));
    let limits = Limits::default().requests_per_principal(2, Duration::from_secs(60));
    let server = TestServer::start(gated(&gate, &Counter::default(), limits).into_router()).await;
    let client = reqwest::Client::new();
    let get = |token: &'static str, path: &'static str| {
        client.get(server.url(path)).bearer_auth(token).send()
    };

    let first = get("alice-token", "/agents").await.unwrap();
    let second = post(&server, "alice-token", false).await;
    let third = get("alice-token", "/agents").await.unwrap();
    let openai = get("alice-token", "/v1/models").await.unwrap();
    let bobs = get("bob-token", "/agents").await.unwrap();
    let health = client.get(server.url("/healthz")).send().await.unwrap();

    assert_eq!(
        (first.status().as_u16(), second.status().as_u16()),
        (200, 200)
    );
    let (status, retry, code) = refusal(third).await;
    assert_eq!((status, code.as_str()), (429, "rate_limited"));
    // One request every 30 s: the next is allowed in 30 s at most.
    let retry: u64 = retry.unwrap().parse().unwrap();
    assert!((1..=30).contains(&retry), "{retry}");
    assert_eq!(openai.status(), 429);
    assert!(openai.headers().contains_key("retry-after"));
    let body: Value = openai.json().await.unwrap();
    assert_eq!(body["error"]["type"], "rate_limit_error");
    assert_eq!(body["error"]["code"], "rate_limited");
    assert_eq!(bobs.status(), 200);
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn without_limits_a_caller_runs_as_much_as_it_asks() {
    let gate = Arc::new(Semaphore::new(0));
    let server =
        TestServer::start(gated(&gate, &Counter::default(), Limits::default()).into_router()).await;

    let mut streams = Vec::new();
    for _ in 0..5 {
        streams.push(waiting(&server, "alice-token").await);
    }
    gate.add_permits(5);

    for events in streams {
        assert_eq!(events.all().await.last().unwrap().event, "completed");
    }
}
