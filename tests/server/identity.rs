//! Identity over HTTP: no valid token, nothing starts; two tokens, two roles, two sets
//! of tools; and stock tower-http layers around the router.

use serde_json::{Value, json};
use tower_adk::server::{BearerTokens, ServedAgent, Server};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, HandlerLayer};

use super::TestServer;

#[derive(Debug, Clone, PartialEq)]
enum Role {
    Admin,
    Guest,
}

/// A support agent whose `refund` tool only admins have; the model always tries it.
fn support(model: &ScriptedModel) -> Server {
    let agent = Agent::builder(model.clone())
        .tool(text_tool("lookup", "found"))
        .tool(text_tool("refund", "refunded"))
        .build()
        .unwrap();
    let admins_refund = tower_adk::handlers::filter_tools(|ext, tool| {
        tool.name() != "refund" || ext.get::<Role>() == Some(&Role::Admin)
    });
    let served = ServedAgent::new(agent)
        .description("Answers customers")
        .layer(HandlerLayer::new(admins_refund));
    let tokens = BearerTokens::new()
        .token("admin-token", Role::Admin)
        .token("guest-token", Role::Guest);
    Server::new().agent("support", served).identify(tokens)
}

fn refunding_model() -> ScriptedModel {
    ScriptedModel::per_run([
        Turn::call("c1", "refund", json!({"order": 7})),
        Turn::text("done"),
    ])
}

async fn run_as(server: &TestServer, token: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(server.url("/agents/support/runs"))
        .json(&json!({"input": "refund order 7"}));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_request_without_a_valid_token_gets_401_and_starts_nothing() {
    let model = refunding_model();
    let server = TestServer::start(support(&model).into_router()).await;

    let (none, no_body) = run_as(&server, None).await;
    let (wrong, wrong_body) = run_as(&server, Some("guessed")).await;
    let listing = reqwest::get(server.url("/agents")).await.unwrap();

    assert_eq!((none, wrong), (401, 401));
    assert_eq!(no_body["error"]["code"], "unauthorized");
    assert_eq!(wrong_body["error"]["code"], "unauthorized");
    assert_eq!(listing.status(), 401);
    assert_eq!(listing.headers()["www-authenticate"], "Bearer");
    assert_eq!(model.calls(), 0);
}

#[tokio::test]
async fn each_role_sees_and_runs_only_its_tools_end_to_end() {
    let model = refunding_model();
    let server = TestServer::start(support(&model).into_router()).await;

    let (admin_status, admin) = run_as(&server, Some("admin-token")).await;
    let (guest_status, guest) = run_as(&server, Some("guest-token")).await;

    assert_eq!((admin_status, guest_status), (200, 200));
    assert_eq!(admin["tool_records"][0]["content"], "refunded");
    assert_eq!(guest["tool_records"][0]["error"]["kind"], "unknown_tool");
    let requests = model.requests();
    let shown = |i: usize| {
        requests[i]
            .tool_names()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(shown(0), ["lookup", "refund"]);
    assert_eq!(shown(2), ["lookup"]);
}

#[tokio::test]
async fn the_listing_names_each_agent_its_description_and_tools() {
    let server = TestServer::start(support(&refunding_model()).into_router()).await;

    let listing: Value = reqwest::Client::new()
        .get(server.url("/agents"))
        .bearer_auth("guest-token")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();

    let agent = &listing["agents"][0];
    assert_eq!(
        (agent["name"].as_str(), agent["description"].as_str()),
        (Some("support"), Some("Answers customers"))
    );
    let tools: Vec<_> = agent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(tools, [json!("lookup"), json!("refund")]);
}
