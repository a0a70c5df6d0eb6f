//! `GET /metrics` (feature `prometheus`): runs of several agents (completed, a failing
//! tool, interrupted and resumed, a stream dropped mid-run) scraped in Prometheus's text
//! format, checked by `promtool check metrics` (scripts/setup-promtool) and read back:
//! runs by status, tokens, tool calls by outcome, runs in flight back to 0.
//!
//! The recorder is the process's, so other tests of this binary count there too: every
//! figure read here is of an agent or a tool of this file's own.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use tower::service_fn;
use tower_adk::model::{ModelResponse, Usage};
use tower_adk::server::{BearerTokens, PrometheusMetrics, Server};
use tower_adk::testing::{ScriptedModel, Turn, echo_tool, failing_tool};
use tower_adk::{Agent, BoxError, Message, ModelRequest, Tool, ToolCall};

use super::runs::hanging_tool;
use super::{Counter, SseReader, TestServer, asking_tool};

/// An agent whose model reports 1,000 tokens in and 100 out, as `small`: it calls
/// `tool` while its history has no tool result, then answers.
fn metered_agent(name: &str, tool: Tool) -> Agent {
    let called = tool.name().to_owned();
    let model = service_fn(move |request: ModelRequest| {
        let called = called.clone();
        async move {
            let answered = request.messages.iter().any(|m| m.tool_call_id().is_some());
            let reply = if answered {
                Message::assistant("Done.")
            } else {
                Message::assistant_with_calls("", vec![ToolCall::new("c1", called, json!({}))])
            };
            let response = ModelResponse::message(reply);
            Ok::<_, BoxError>(
                response.with_usage(Some("small".into()), Usage::new(1_000, 100, 1_100)),
            )
        }
    });
    Agent::builder(model).name(name).tool(tool).build().unwrap()
}

/// A series' labels, as pairs.
type Labels = Vec<(String, String)>;

/// The series of a scrape: each line's name, labels and value.
struct Scrape(Vec<(String, Labels, f64)>);

impl Scrape {
    fn parse(text: &str) -> Self {
        let series = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty());
        Scrape(
            series
                .map(|line| {
                    let (series, value) = line.rsplit_once(' ').unwrap();
                    let (name, labels) = match series.split_once('{') {
                        Some((name, labels)) => (name, labels.trim_end_matches('}')),
                        None => (series, ""),
                    };
                    let labels = labels
                        .split("\",")
                        .filter(|l| !l.is_empty())
                        .map(|l| {
                            let (key, value) = l.split_once('=').unwrap();
                            (key.to_owned(), value.trim_matches('"').to_owned())
                        })
                        .collect();
                    (name.to_owned(), labels, value.parse().unwrap())
                })
                .collect(),
        )
    }

    /// The sum of the series of `name` whose labels include `labels`.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let has = |found: &[(String, String)]| {
            labels
                .iter()
                .all(|(k, v)| found.iter().any(|(fk, fv)| fk == k && fv == v))
        };
        let matching = self.0.iter().filter(|(n, l, _)| n == name && has(l));
        matching.map(|(_, _, value)| value).sum()
    }
}

/// `promtool check metrics` on `text`: its exit code, and what it found.
fn promtool_check(text: &str) -> (i32, String) {
    let promtool = std::env::var("PROMTOOL").unwrap_or_else(|_| "promtool".into());
    let mut child = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{promtool} does not start ({e}): run scripts/setup-promtool"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let found = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), found)
}

async fn scrape(server: &TestServer) -> String {
    let response = reqwest::get(server.url("/metrics")).await.unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap();
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    response.text().await.unwrap()
}

#[tokio::test]
async fn the_metrics_of_several_agents_runs_pass_promtool_and_add_up() {
    let metrics = PrometheusMetrics::install().unwrap();
    let paid = Counter::default();
    let dropped = Counter::default();
    let hanging = ScriptedModel::per_run([Turn::call("c1", "hang", json!({}))]);
    let server = Server::new()
        .agent("m_done", metered_agent("m_done", echo_tool("m_lookup")))
        .agent(
            "m_broken",
            metered_agent("m_broken", failing_tool("m_fix", "broken")),
        )
        .agent("m_bank", metered_agent("m_bank", asking_tool(&paid)))
        .agent(
            "m_hang",
            Agent::builder(hanging)
                .name("m_hang")
                .tool(hanging_tool(&dropped))
                .build()
                .unwrap(),
        )
        .metrics(metrics);
    let server = TestServer::start(server.into_router()).await;

    for _ in 0..2 {
        let (status, done) = server.run("m_done", json!({"input": "go"})).await;
        assert_eq!((status, done["status"].as_str()), (200, Some("completed")));
    }
    let (status, _) = server.run("m_broken", json!({"input": "go"})).await;
    assert_eq!(status, 200);
    let (status, stopped) = server.run("m_bank", json!({"input": "pay"})).await;
    assert_eq!(
        (status, stopped["status"].as_str()),
        (200, Some("interrupted"))
    );
    let waiting = Scrape::parse(&scrape(&server).await);
    let bank = [("agent", "m_bank")];
    assert_eq!(waiting.value("adk_interrupts_waiting", &bank), 1.0);
    let id = stopped["interrupts"][0]["id"].as_str().unwrap();
    let resume = json!({"resume": {"checkpoint": stopped["checkpoint"], "decisions": {id: {"type": "approve"}}}});
    let (status, resumed) = server.run("m_bank", resume).await;
    assert_eq!(
        (status, resumed["status"].as_str()),
        (200, Some("completed"))
    );
    assert_eq!(paid.get(), 1);

    // A stream dropped while its tool runs: in flight until the client goes away.
    let response = server.stream("m_hang", json!({"input": "go"})).await;
    let mut events = SseReader::new(response);
    while events.next().await.unwrap().event != "tool_call_started" {}
    let hang = [("agent", "m_hang")];
    let during = Scrape::parse(&scrape(&server).await);
    assert_eq!(during.value("adk_runs_in_flight", &hang), 1.0);
    drop(events);
    let after = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let after = Scrape::parse(&scrape(&server).await);
            if after.value("adk_runs_in_flight", &hang) == 0.0 {
                return after;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the dropped run leaves the runs in flight");
    assert_eq!(dropped.get(), 1);

    let text = scrape(&server).await;
    let (code, found) = promtool_check(&text);
    assert_eq!((code, found.as_str()), (0, ""), "{text}");

    let scraped = Scrape::parse(&text);
    let finished = |agent, status| {
        scraped.value(
            "adk_runs_finished_total",
            &[("agent", agent), ("status", status)],
        )
    };
    assert_eq!(
        scraped.value("adk_runs_started_total", &[("agent", "m_done")]),
        2.0
    );
    assert_eq!(finished("m_done", "completed"), 2.0);
    assert_eq!(finished("m_broken", "completed"), 1.0);
    assert_eq!(finished("m_bank", "interrupted"), 1.0);
    assert_eq!(finished("m_bank", "completed"), 1.0);
    assert_eq!(finished("m_hang", "cancelled"), 1.0);
    assert_eq!(after.value("adk_runs_finished_total", &hang), 1.0);
    for agent in ["m_done", "m_broken", "m_bank", "m_hang"] {
        assert_eq!(
            scraped.value("adk_runs_in_flight", &[("agent", agent)]),
            0.0
        );
    }
    assert_eq!(scraped.value("adk_interrupts_waiting", &bank), 0.0);
    let done = [("agent", "m_done"), ("status", "completed")];
    assert_eq!(scraped.value("adk_run_duration_seconds_count", &done), 2.0);

    // Two runs of two model calls each, 1,000 tokens in and 100 out per call.
    let tokens = |kind| {
        let labels = [("gen_ai_agent_name", "m_done"), ("gen_ai_token_type", kind)];
        (
            scraped.value("gen_ai_client_token_usage_sum", &labels),
            scraped.value("gen_ai_client_token_usage_count", &labels),
        )
    };
    assert_eq!(tokens("input"), (4_000.0, 4.0));
    assert_eq!(tokens("output"), (400.0, 4.0));
    let chat = [
        ("gen_ai_agent_name", "m_done"),
        ("gen_ai_operation_name", "chat"),
    ];
    assert_eq!(
        scraped.value("gen_ai_client_operation_duration_seconds_count", &chat),
        4.0
    );
    // A histogram's buckets: every call under the last bound.
    let inf = [("gen_ai_agent_name", "m_done"), ("le", "+Inf")];
    assert_eq!(
        scraped.value("gen_ai_client_operation_duration_seconds_bucket", &inf),
        4.0
    );

    let calls = |tool, outcome| {
        scraped.value(
            "adk_tool_calls_total",
            &[("tool", tool), ("outcome", outcome)],
        )
    };
    assert_eq!(calls("m_lookup", "ok"), 2.0);
    assert_eq!(calls("m_fix", "tool_error"), 1.0);
    assert_eq!(calls("pay", "interrupted"), 1.0);
    assert_eq!(calls("pay", "ok"), 1.0);
    assert_eq!(calls("hang", "ok") + calls("hang", "tool_error"), 0.0);
    // The interrupted run's checkpoint, and the resume's claim and end, in memory.
    let writes = |status| {
        let labels = [("store", "memory"), ("status", status), ("outcome", "ok")];
        scraped.value("adk_checkpoint_write_duration_seconds_count", &labels)
    };
    assert!(writes("interrupted") >= 1.0);
    assert!(writes("completed") >= 1.0);
}

#[tokio::test]
async fn the_metrics_route_is_off_unless_turned_on_and_can_require_an_identity() {
    let agent = Agent::builder(ScriptedModel::per_run([Turn::text("hi")]))
        .build()
        .unwrap();
    let off = TestServer::start(Server::new().agent("a", agent.clone()).into_router()).await;
    let response = reqwest::get(off.url("/metrics")).await.unwrap();
    assert_eq!(response.status(), 404);

    let metrics = PrometheusMetrics::install().unwrap().require_identity(true);
    let guarded = Server::new()
        .agent("a", agent)
        .identify(BearerTokens::new().token("scraper", ()))
        .metrics(metrics);
    let guarded = TestServer::start(guarded.into_router()).await;
    let response = reqwest::get(guarded.url("/metrics")).await.unwrap();
    assert_eq!(response.status(), 401);
    let response = reqwest::Client::new()
        .post(guarded.url("/agents/a/runs"))
        .bearer_auth("scraper")
        .json(&json!({"input": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let response = reqwest::Client::new()
        .get(guarded.url("/metrics"))
        .bearer_auth("scraper")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(
        text.contains("# TYPE adk_runs_started_total counter"),
        "{text}"
    );
}
