//! Identity over HTTP: no valid token, nothing starts; two tokens, two roles, two sets
//! of tools, in runs and in the listing.

use serde_json::{Value, json};
use tower_adk::interrupt::Interrupt;
use tower_adk::server::{BearerTokens, ServedAgent, Server};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentConfig, BoxError, Handler, HandlerLayer, RunContext};

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

async fn listing(server: &TestServer, token: &str) -> Value {
    let response = reqwest::Client::new()
        .get(server.url("/agents"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

fn tool_names(agent: &Value) -> Vec<&str> {
    let tools = agent["tools"].as_array().unwrap();
    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn the_listing_shows_each_caller_the_tools_its_runs_would_give_the_model() {
    let model = refunding_model();
    let server = TestServer::start(support(&model).into_router()).await;

    let admin = listing(&server, "admin-token").await;
    let guest = listing(&server, "guest-token").await;

    let agent = &guest["agents"][0];
    assert_eq!(guest["v"], 1);
    assert_eq!(
        (agent["name"].as_str(), agent["description"].as_str()),
        (Some("support"), Some("Answers customers"))
    );
    assert_eq!(tool_names(agent), ["lookup"]);
    assert_eq!(tool_names(&admin["agents"][0]), ["lookup", "refund"]);
    assert_eq!(agent["tools"][0]["description"], "Returns a fixed text.");
    assert_eq!(model.calls(), 0); // listing calls no model
}

/// Refuses guests, as a handler that checks a role before the run does.
struct AdminsOnly;

impl Handler for AdminsOnly {
    async fn before_agent(
        &self,
        cx: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        if cx.extensions().get::<Role>() != Some(&Role::Admin) {
            return Err("admins only".into());
        }
        Ok(config)
    }
}

/// Asks a person before every run.
struct AsksFirst;

impl Handler for AsksFirst {
    async fn before_agent(
        &self,
        _: &mut RunContext,
        _: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        Err(Interrupt::new(json!({"question": "May I start?"})).into())
    }
}

#[tokio::test]
async fn an_agent_whose_before_agent_fails_or_interrupts_says_so_in_the_listing() {
    let agent = || {
        Agent::builder(ScriptedModel::default())
            .tool(text_tool("lookup", "found"))
            .build()
            .unwrap()
    };
    let router = support(&refunding_model())
        .agent(
            "admin",
            ServedAgent::new(agent()).layer(HandlerLayer::new(AdminsOnly)),
        )
        .agent(
            "asking",
            ServedAgent::new(agent()).layer(HandlerLayer::new(AsksFirst)),
        )
        .into_router();
    let server = TestServer::start(router).await;

    let guest = listing(&server, "guest-token").await;
    let admin = listing(&server, "admin-token").await;

    let names: Vec<_> = guest["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["admin", "asking", "support"]);
    let (refused, asking) = (&guest["agents"][0], &guest["agents"][1]);
    assert_eq!(refused["error"]["code"], "handler_failed");
    assert!(refused.get("tools").is_none(), "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("admins only")
    );
    assert_eq!(asking["error"]["code"], "interrupted");
    assert!(
        asking["error"]["message"]
            .as_str()
            .unwrap()
            .contains("May I start?")
    );
    assert_eq!(tool_names(&guest["agents"][2]), ["lookup"]);
    assert_eq!(tool_names(&admin["agents"][0]), ["lookup"]);
    assert_eq!(admin["agents"][1]["error"]["code"], "interrupted");
}
