//! A file's agent served over HTTP (feature `server`): its description in the listing,
//! its handlers on every run.

use axum::body::Body;
use http::{Request, StatusCode};
use serde_json::{Value, json};
use tower::ServiceExt;
use tower_adk::file::Registry;
use tower_adk::server::Server;

use super::support::agent;

async fn send(router: &axum::Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = router.clone().oneshot(request).await.expect("answers");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, serde_json::from_slice(&bytes).expect("JSON"))
}

#[tokio::test]
async fn a_served_file_agent_has_its_description_and_its_handlers() {
    let text = "name: helper\ndescription: Helps.\nmodel: {provider: scripted, turns: [{text: Done., call: {tool: task_completed}}]}\nhandlers: [task_completed]\n";
    let agent = agent(text, &Registry::new()).await;
    let router = Server::new()
        .agent(agent.name(), agent.served())
        .into_router();

    let (status, listing) = send(
        &router,
        Request::get("/agents")
            .body(Body::empty())
            .expect("request"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listing["agents"][0]["name"], "helper");
    assert_eq!(listing["agents"][0]["description"], "Helps.");

    let body = Body::from(json!({"input": "hi"}).to_string());
    let (status, _) = send(
        &router,
        Request::post("/agents/helper/runs")
            .body(body)
            .expect("request"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let seen = agent.scripted_model().expect("scripted").requests();
    assert_eq!(
        seen[0].messages[0].content(),
        "Helps.",
        "the prompt template ran"
    );
    assert_eq!(
        seen[0].tool_names().collect::<Vec<_>>(),
        ["task_completed"],
        "so did task_completed"
    );
}
