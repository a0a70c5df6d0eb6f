//! Threads over HTTP: read where one stands, delete it.

use serde_json::json;
use tower_adk::Agent;
use tower_adk::server::Server;
use tower_adk::testing::{ScriptedModel, Turn};

use super::{Counter, TestServer, asking_tool};

#[tokio::test]
async fn a_thread_is_read_and_deleted() {
    let model = ScriptedModel::per_run([Turn::text("Hi!")]);
    let agent = Agent::builder(model).build().unwrap();
    let server = TestServer::start(Server::new().agent("a", agent).into_router()).await;
    let client = reqwest::Client::new();
    let url = server.url("/agents/a/threads/t1");
    server
        .run("a", json!({"input": "hello", "thread": "t1"}))
        .await;

    let thread: serde_json::Value = client.get(&url).send().await.unwrap().json().await.unwrap();
    let deleted = client.delete(&url).send().await.unwrap().status();
    let gone = client.get(&url).send().await.unwrap();

    assert_eq!(thread["v"], 1);
    assert_eq!(thread["status"], "completed");
    assert_eq!(thread["messages"][1]["content"], "Hi!");
    assert!(thread["checkpoint"].as_str().unwrap().starts_with("t1@"));
    assert_eq!(deleted, 204);
    assert_eq!(gone.status(), 404);
    let body: serde_json::Value = gone.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unknown_thread");
    assert_eq!(client.delete(&url).send().await.unwrap().status(), 404);
}

#[tokio::test]
async fn an_interrupted_thread_shows_its_pending_interrupts() {
    let model = ScriptedModel::per_run([Turn::call("c1", "pay", serde_json::json!({}))]);
    let agent = Agent::builder(model)
        .name("bank")
        .tool(asking_tool(&Counter::default()))
        .build()
        .unwrap();
    let server = TestServer::start(Server::new().agent("bank", agent).into_router()).await;
    let (_, stopped) = server
        .run("bank", json!({"input": "pay", "thread": "t9"}))
        .await;

    let url = server.url("/agents/bank/threads/t9");
    let thread: serde_json::Value = reqwest::get(url).await.unwrap().json().await.unwrap();

    assert_eq!(thread["status"], "interrupted");
    assert_eq!(thread["checkpoint"], stopped["checkpoint"]);
    assert_eq!(thread["interrupts"][0]["id"], "agent:bank/tool:c1");
}
