//! Every error is JSON with a stable code and a fitting status.

use serde_json::{Value, json};
use tower_adk::Agent;
use tower_adk::server::Server;
use tower_adk::testing::{ScriptedModel, Turn};

use super::{Counter, TestServer, asking_tool};

async fn bank() -> TestServer {
    let model = ScriptedModel::per_run([Turn::call("c1", "pay", json!({})), Turn::text("Paid.")]);
    let agent = Agent::builder(model)
        .name("bank")
        .tool(asking_tool(&Counter::default()))
        .build()
        .unwrap();
    TestServer::start(Server::new().agent("bank", agent).into_router()).await
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("none")
}

#[tokio::test]
async fn bodies_agents_and_routes_that_do_not_exist_get_400_and_404() {
    let server = bank().await;
    let client = reqwest::Client::new();

    let (s1, b1) = server.run("bank", json!({"inpt": "typo"})).await;
    let (s2, b2) = server
        .run("bank", json!({"input": "a", "messages": []}))
        .await;
    let (s3, b3) = server.run("nobody", json!({"input": "hi"})).await;
    let (s4, b4) = server
        .run("bank", json!({"resume": {"checkpoint": "no-id"}}))
        .await;
    let not_json = client
        .post(server.url("/agents/bank/runs"))
        .body("{")
        .send()
        .await
        .unwrap();
    let route = client.get(server.url("/nowhere")).send().await.unwrap();

    assert_eq!((s1, code(&b1)), (400, "invalid_body"));
    assert_eq!((s2, code(&b2)), (400, "invalid_body"));
    assert_eq!((s3, code(&b3)), (404, "unknown_agent"));
    assert_eq!((s4, code(&b4)), (400, "malformed_checkpoint_id"));
    assert_eq!(not_json.status(), 400);
    assert_eq!(route.status(), 404);
    assert_eq!(code(&route.json().await.unwrap()), "not_found");
}

#[tokio::test]
async fn resumes_that_do_not_fit_get_404_409_and_422() {
    let server = bank().await;
    let (_, stopped) = server
        .run("bank", json!({"input": "pay", "thread": "t1"}))
        .await;
    let checkpoint = stopped["checkpoint"].as_str().unwrap().to_owned();
    let resume =
        |decisions: Value| json!({"resume": {"checkpoint": checkpoint, "decisions": decisions}});

    let (s1, b1) = server.run("bank", resume(json!({}))).await;
    let (s2, b2) = server
        .run(
            "bank",
            resume(json!({"agent:bank/tool:c1": {"type": "approve"}, "x": {"type": "approve"}})),
        )
        .await;
    let (s3, b3) = server
        .run("bank", json!({"input": "again", "thread": "t1"}))
        .await;
    let unknown = json!({"resume": {"checkpoint": "t1@99#nope", "decisions": {}}});
    let (s4, b4) = server.run("bank", unknown).await;
    let streamed = server.stream("bank", resume(json!({}))).await;

    assert_eq!((s1, code(&b1)), (422, "missing_decision"));
    assert_eq!((s2, code(&b2)), (422, "unknown_interrupt"));
    assert_eq!((s3, code(&b3)), (409, "thread_interrupted"));
    assert_eq!((s4, code(&b4)), (404, "checkpoint_unknown"));
    assert_eq!(
        streamed.status(),
        422,
        "a streamed run refused at its start gets its status"
    );
    assert_eq!(code(&streamed.json().await.unwrap()), "missing_decision");
}

#[tokio::test]
async fn health_and_readiness_answer_without_identity() {
    let server = Server::new().identify(tower_adk::server::BearerTokens::<u8>::new());
    let readiness = server.readiness();
    let server = TestServer::start(server.into_router()).await;

    let health = reqwest::get(server.url("/healthz")).await.unwrap().status();
    let ready = reqwest::get(server.url("/readyz")).await.unwrap().status();
    readiness.set_ready(false);
    let draining = reqwest::get(server.url("/readyz")).await.unwrap();

    assert_eq!((health.as_u16(), ready.as_u16()), (200, 200));
    assert_eq!(draining.status(), 503);
    assert_eq!(code(&draining.json().await.unwrap()), "not_ready");
}
