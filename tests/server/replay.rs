//! A client that reconnects with `Last-Event-ID` gets the events it missed, and the
//! next ones live while the run still streams.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::Semaphore;
use tower_adk::server::Server;
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, Tool, ToolInfo, ToolOutput};

use super::{SseReader, TestServer};

async fn events_after(server: &TestServer, run_id: &str, last: Option<u64>) -> reqwest::Response {
    let mut request =
        reqwest::Client::new().get(server.url(&format!("/agents/a/runs/{run_id}/events")));
    if let Some(last) = last {
        request = request.header("last-event-id", last.to_string());
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn a_finished_run_is_replayed_after_the_last_event_id() {
    let model = ScriptedModel::per_run([Turn::call("c1", "t", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model)
        .tool(text_tool("t", "ok"))
        .build()
        .unwrap();
    let server = TestServer::start(Server::new().agent("a", agent).into_router()).await;
    let first = SseReader::new(server.stream("a", json!({"input": "go"})).await)
        .all()
        .await;
    let run_id = first[0].data["run_id"].as_str().unwrap().to_owned();

    let all = SseReader::new(events_after(&server, &run_id, None).await)
        .all()
        .await;
    let missed = SseReader::new(events_after(&server, &run_id, Some(3)).await)
        .all()
        .await;
    let unknown = events_after(&server, "no-such-run", None).await;

    assert_eq!(
        all.iter().map(|e| e.id).collect::<Vec<_>>(),
        first.iter().map(|e| e.id).collect::<Vec<_>>()
    );
    assert_eq!(
        missed.iter().map(|e| e.id).collect::<Vec<_>>(),
        (4..=first.len() as u64).collect::<Vec<_>>()
    );
    assert_eq!(missed.last().unwrap().data, first.last().unwrap().data);
    assert_eq!(unknown.status(), 404);
    let body: serde_json::Value = unknown.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unknown_run");
}

/// A tool that waits until the gate opens.
fn gated_tool(gate: &Arc<Semaphore>) -> Tool {
    let gate = Arc::clone(gate);
    Tool::from_fn(ToolInfo::new("gated", "Waits"), move |_| {
        let gate = Arc::clone(&gate);
        async move {
            let _permit = gate.acquire().await;
            Ok::<_, std::convert::Infallible>(ToolOutput::new("opened"))
        }
    })
}

#[tokio::test]
async fn a_reconnecting_client_gets_the_missed_events_then_the_run_live() {
    let gate = Arc::new(Semaphore::new(0));
    let model = ScriptedModel::per_run([Turn::call("c1", "gated", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model)
        .tool(gated_tool(&gate))
        .build()
        .unwrap();
    let server = TestServer::start(Server::new().agent("a", agent).into_router()).await;
    let mut first = SseReader::new(server.stream("a", json!({"input": "go"})).await);
    let started = first.next().await.unwrap();
    let message = first.next().await.unwrap();
    let run_id = started.data["run_id"].as_str().unwrap().to_owned();

    let mut second = SseReader::new(events_after(&server, &run_id, Some(started.id)).await);
    let replayed = second.next().await.unwrap();
    let tool_started = second.next().await.unwrap();
    gate.add_permits(1);
    let live = second.all().await;
    let rest = first.all().await;

    assert_eq!(
        (replayed.id, replayed.data.clone()),
        (message.id, message.data)
    );
    assert_eq!(tool_started.event, "tool_call_started");
    let kinds: Vec<_> = live.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(kinds, ["tool_result", "text_delta", "message", "completed"]);
    assert_eq!(
        live.iter().map(|e| e.id).collect::<Vec<_>>(),
        rest[1..].iter().map(|e| e.id).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_run_whose_client_went_away_is_replayed_ending_with_cancelled() {
    let gate = Arc::new(Semaphore::new(0));
    let model = ScriptedModel::per_run([Turn::call("c1", "gated", json!({}))]);
    let agent = Agent::builder(model)
        .tool(gated_tool(&gate))
        .build()
        .unwrap();
    let server = TestServer::start(Server::new().agent("a", agent).into_router()).await;
    let mut first = SseReader::new(server.stream("a", json!({"input": "go"})).await);
    let run_id = first.next().await.unwrap().data["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    while first.next().await.unwrap().event != "tool_call_started" {}
    drop(first);

    let replay = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        SseReader::new(events_after(&server, &run_id, Some(2)).await)
            .all()
            .await
    })
    .await
    .expect("the log of a cancelled run ends");

    let last = replay.last().unwrap();
    assert_eq!(
        (last.event.as_str(), last.data["code"].as_str()),
        ("error", Some("cancelled"))
    );
}
