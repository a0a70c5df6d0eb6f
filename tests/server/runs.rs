//! Runs as JSON and as SSE (reqwest and curl), interrupts resumed over HTTP, and a
//! client that disconnects cancelling its run.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::Semaphore;
use tower_adk::server::{RUN_ID_HEADER, Server};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool};
use tower_adk::{Agent, Tool, ToolInfo, ToolOutput};

use super::{Counter, SseReader, TestServer, asking_tool, track_behind};

fn weather_agent() -> Agent {
    let model = ScriptedModel::per_run([
        Turn::call("c1", "weather", json!({"city": "Oslo"})),
        Turn::stream(["It is ", "sunny."]),
    ]);
    Agent::builder(model)
        .tool(chunk_tool("weather", &["sun", "ny"], Duration::ZERO))
        .build()
        .unwrap()
}

async fn weather_server() -> TestServer {
    TestServer::start(
        Server::new()
            .agent("weather", weather_agent())
            .into_router(),
    )
    .await
}

#[tokio::test]
async fn a_run_without_sse_answers_with_its_completed_event() {
    let server = weather_server().await;

    let (status, body) = server.run("weather", json!({"input": "Oslo?"})).await;

    assert_eq!(status, 200);
    assert_eq!(
        (body["v"].clone(), body["type"].clone()),
        (json!(1), json!("completed"))
    );
    assert_eq!(body["status"], "completed");
    assert_eq!(body["final_message"]["content"], "It is sunny.");
    assert_eq!(body["tool_records"][0]["content"], "sunny");
}

#[tokio::test]
async fn a_streamed_run_sends_every_event_in_order_with_increasing_ids() {
    let server = weather_server().await;

    let response = server
        .stream(
            "weather",
            json!({"messages": [{"role": "user", "content": "Oslo?"}]}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    let run_id = response.headers()[RUN_ID_HEADER]
        .to_str()
        .unwrap()
        .to_owned();
    let events = SseReader::new(response).all().await;

    assert!(content_type.starts_with("text/event-stream"));
    let kinds: Vec<_> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "message",
            "tool_call_started",
            "tool_output_chunk",
            "tool_output_chunk",
            "tool_result",
            "text_delta",
            "text_delta",
            "message",
            "completed"
        ]
    );
    let ids: Vec<_> = events.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=10).collect::<Vec<_>>());
    assert_eq!(events[0].data["run_id"], run_id.as_str());
    assert!(
        events
            .iter()
            .all(|e| e.data["type"] == e.event.as_str() && e.data["v"] == 1)
    );
    assert_eq!(events[9].data["final_message"]["content"], "It is sunny.");
}

#[tokio::test]
async fn an_event_goes_out_when_it_is_ready_without_waiting_for_the_next() {
    let gate = Arc::new(Semaphore::new(0));
    let model = ScriptedModel::per_run([
        Turn::call("c1", "track", json!({"order": 7})),
        Turn::text("Shipped."),
    ]);
    let agent = Agent::builder(model)
        .tool(track_behind(&gate))
        .build()
        .unwrap();
    let server = TestServer::start(Server::new().agent("track", agent).into_router()).await;

    let response = server.stream("track", json!({"input": "Order 7?"})).await;
    let mut events = SseReader::new(response);
    // The events the run makes before its tool waits (sent together, as they were
    // ready at once) all arrive while it waits.
    let mut early = Vec::new();
    while early.last().map(|e: &super::Sse| e.event.as_str()) != Some("tool_output_chunk") {
        let next = tokio::time::timeout(Duration::from_secs(10), events.next()).await;
        early.push(next.expect("sent while the tool waits").unwrap());
    }
    gate.add_permits(1);
    let rest = events.all().await;

    let kinds: Vec<_> = early.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "message",
            "tool_call_started",
            "tool_output_chunk"
        ]
    );
    assert_eq!(early[3].data["chunk"], "packed, ");
    assert_eq!(rest[0].data["chunk"], "shipped, ");
    assert_eq!(rest.last().unwrap().event, "completed");
    let ids: Vec<_> = early.iter().chain(&rest).map(|e| e.id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
}

#[tokio::test]
async fn curl_streams_a_run() {
    let server = weather_server().await;
    let url = server.url("/agents/weather/runs");

    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("curl")
            .args([
                "-sN",
                "-H",
                "accept: text/event-stream",
                "-d",
                r#"{"input": "Oslo?"}"#,
            ])
            .arg(url)
            .output()
            .unwrap()
    })
    .await
    .unwrap();

    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success());
    assert!(text.starts_with("event: run_started\n"), "{text}");
    assert!(text.contains("event: tool_output_chunk\n"), "{text}");
    assert!(
        text.contains("event: completed\nid: 10\ndata: {\"v\":1,\"type\":\"completed\""),
        "{text}"
    );
}

#[tokio::test]
async fn an_interrupted_run_is_resumed_over_http() {
    let paid = Counter::default();
    let model = ScriptedModel::per_run([Turn::call("c1", "pay", json!({})), Turn::text("Paid.")]);
    let agent = Agent::builder(model)
        .name("bank")
        .tool(asking_tool(&paid))
        .build()
        .unwrap();
    let server = TestServer::start(Server::new().agent("bank", agent).into_router()).await;

    let (status, stopped) = server
        .run("bank", json!({"input": "pay", "thread": "t1"}))
        .await;
    assert_eq!(
        (status, stopped["status"].as_str()),
        (200, Some("interrupted"))
    );
    assert_eq!(stopped["interrupts"][0]["id"], "agent:bank/tool:c1");
    assert_eq!(stopped["interrupts"][0]["payload"]["question"], "Pay?");
    assert_eq!(paid.get(), 0);

    let checkpoint = stopped["checkpoint"].clone();
    let resume = json!({"resume": {"checkpoint": checkpoint, "decisions": {"agent:bank/tool:c1": {"type": "approve"}}}});
    let response = server.stream("bank", resume.clone()).await;
    let events = SseReader::new(response).all().await;

    let last = events.last().unwrap();
    assert_eq!(last.event, "completed");
    assert_eq!(last.data["final_message"]["content"], "Paid.");
    assert_eq!(paid.get(), 1);
    let (status, again) = server.run("bank", resume).await;
    assert_eq!(
        (status, again["error"]["code"].as_str()),
        (409, Some("checkpoint_used"))
    );
    assert_eq!(paid.get(), 1);
}

/// A tool that never finishes, and counts the calls dropped before they did.
pub(super) fn hanging_tool(dropped: &Counter) -> Tool {
    let dropped = dropped.clone();
    Tool::from_fn(ToolInfo::new("hang", "Never ends"), move |_| {
        let guard = DropCounter(dropped.clone());
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok::<_, std::convert::Infallible>(ToolOutput::new("never"))
        }
    })
}

struct DropCounter(Counter);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.bump();
    }
}

#[tokio::test]
async fn a_client_that_disconnects_cancels_its_run_and_frees_its_thread() {
    let dropped = Counter::default();
    let model = ScriptedModel::per_run([Turn::call("c1", "hang", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model)
        .tool(hanging_tool(&dropped))
        .build()
        .unwrap();
    let server = TestServer::start(Server::new().agent("a", agent).into_router()).await;

    let response = server
        .stream("a", json!({"input": "go", "thread": "t1"}))
        .await;
    let mut events = SseReader::new(response);
    while events.next().await.unwrap().event != "tool_call_started" {}
    let (status, busy) = server
        .run("a", json!({"input": "again", "thread": "t1"}))
        .await;
    assert_eq!(
        (status, busy["error"]["code"].as_str()),
        (409, Some("thread_busy"))
    );
    drop(events);

    tokio::time::timeout(Duration::from_secs(5), async {
        while dropped.get() == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the tool in flight is dropped");
    let again = server
        .stream("a", json!({"input": "again", "thread": "t1"}))
        .await;
    assert_eq!(again.status(), 200); // the thread took a new run
}
