//! Traces in a real backend: Arize Phoenix (scripts/setup-phoenix) started on free ports
//! of 127.0.0.1, the spans of runs exported to it over OTLP/HTTP (`telemetry::otlp`),
//! then read back through its REST API (`GET /v1/projects/default/spans`): the tree (model
//! and tool calls under their run, a sub-agent's run under its caller's tool call), the
//! GenAI attributes, the token counts, the interrupt and decision events, and a run
//! started over HTTP in the caller's trace (`traceparent`).
//!
//! One test: the exporter is the process's subscriber, installed once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tower_adk::interrupt::{Decision, Interrupt};
use tower_adk::model::Usage;
use tower_adk::server::Server;
use tower_adk::telemetry::{capture_content, otlp};
use tower_adk::testing::{ScriptedModel, Turn, failing_tool, text_tool};
use tower_adk::{
    Agent, AgentRequest, BoxError, RunStatus, Tool, ToolInfo, ToolOutput, ToolRequest,
};

/// `phoenix serve` on free ports, its data under target/; killed when dropped, passed or
/// failed.
struct Phoenix {
    child: Child,
    base: String,
    dir: PathBuf,
}

impl Phoenix {
    fn start() -> Phoenix {
        let venv = match std::env::var_os("PHOENIX_VENV") {
            Some(dir) => PathBuf::from(dir),
            None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/phoenix"),
        };
        let program = venv.join("bin/phoenix");
        assert!(
            program.exists(),
            "{} not found: run scripts/setup-phoenix (or set PHOENIX_VENV)",
            program.display()
        );
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/test-servers/phoenix-data")
            .join(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (port, grpc) = (free_port(), free_port());
        let child = Command::new(program)
            .arg("serve")
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_WORKING_DIR", &dir)
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Phoenix {
            child,
            base: format!("http://127.0.0.1:{port}"),
            dir,
        }
    }

    /// Waits until Phoenix answers its health check; fails if it exits or takes too long.
    async fn ready(&mut self) {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut log = String::new();
                if let Some(stderr) = &mut self.child.stderr {
                    let _ = stderr.read_to_string(&mut log);
                }
                panic!("phoenix exited ({status}) before it was ready:\n{log}");
            }
            let health = client.get(format!("{}/healthz", self.base)).send().await;
            if health.is_ok_and(|r| r.status().is_success()) {
                return;
            }
            assert!(Instant::now() < deadline, "phoenix did not start in 120 s");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The spans of the default project, once there are at least `least` of them in
    /// `trace` (Phoenix writes what it receives in the background).
    async fn spans(&self, trace: &str, least: usize) -> Vec<Value> {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let url = format!("{}/v1/projects/default/spans?limit=1000", self.base);
            let body: Value = client.get(url).send().await.unwrap().json().await.unwrap();
            let spans: Vec<Value> = body["data"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["context"]["trace_id"] == trace)
                .cloned()
                .collect();
            if spans.len() >= least || Instant::now() > deadline {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A tool that asks before it transfers, and transfers once approved.
fn transfer() -> Tool {
    Tool::from_fn(
        ToolInfo::new("transfer", "Moves money"),
        |request: ToolRequest| async move {
            if request.decision().is_none() {
                return Err(Interrupt::new(json!({"question": "Transfer?"})).into());
            }
            Ok::<_, BoxError>(ToolOutput::new("transferred"))
        },
    )
}

/// Support, whose model asks billing (a sub-agent), a transfer (which waits for
/// approval) and a broken tool in one turn, then answers.
fn support_desk() -> Agent {
    let billing = Agent::builder(ScriptedModel::new([
        Turn::call("b1", "invoice", json!({"number": 7}))
            .with_usage(Some("billing-model-1".into()), Usage::new(30, 4, 34)),
        Turn::text("Invoice 7 is paid.")
            .with_usage(Some("billing-model-1".into()), Usage::new(50, 6, 56)),
    ]))
    .name("billing")
    .tool(text_tool("invoice", "invoice 7: 40 EUR, paid"))
    .build()
    .unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "billing", json!({"request": "Is invoice 7 paid?"}))
            .with_call("c2", "transfer", json!({"to": "Bob"}))
            .with_call("c3", "broken", json!({}))
            .with_usage(Some("support-model-1".into()), Usage::new(120, 15, 135)),
        Turn::text("Paid, and the money is sent.")
            .streamed()
            .with_usage(Some("support-model-1".into()), Usage::new(200, 9, 209)),
    ]);
    Agent::builder(model)
        .name("support")
        .tool(billing.as_tool("Billing questions"))
        .tool(transfer())
        .tool(failing_tool("broken", "out of order"))
        .build()
        .unwrap()
}

fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

fn one<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "one span {name} in {spans:#?}");
    found[0]
}

fn id(span: &Value) -> &str {
    span["context"]["span_id"].as_str().unwrap()
}

fn attribute<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

/// `gen_ai.response.finish_reasons`, a list (Phoenix may flatten it to `.0`, `.1`, ..).
fn finish_reasons(span: &Value) -> Vec<String> {
    if let Some(list) = attribute(span, "gen_ai.response.finish_reasons").as_array() {
        return list
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
    }
    let flat: BTreeMap<&String, &Value> = span["attributes"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("gen_ai.response.finish_reasons."))
        .collect();
    flat.values()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// The spans named `name` whose parent is `parent`.
fn children<'a>(spans: &'a [Value], parent: &Value, name: &str) -> Vec<&'a Value> {
    let parent = id(parent);
    spans
        .iter()
        .filter(|s| s["name"] == name && s["parent_id"] == parent)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phoenix_shows_runs_model_calls_tool_calls_and_sub_agents_as_one_tree() {
    let mut phoenix = Phoenix::start();
    phoenix.ready().await;
    let guard = otlp::Exporter::new()
        .endpoint(&phoenix.base)
        .service_name("tower-adk-phoenix-test")
        .install()
        .unwrap();
    capture_content(true);

    // A run that calls a sub-agent, a failing tool and one that waits for approval.
    let agent = support_desk();
    let stopped = agent
        .run(AgentRequest::user("Is invoice 7 paid? Then send Bob 5.").on_thread("desk-1"))
        .await
        .unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    let pending = stopped.interrupts[0].id.clone();
    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(pending.clone(), Decision::Approve)],
    );
    let done = agent.run(resume).await.unwrap();
    assert_eq!(done.final_message.content(), "Paid, and the money is sent.");

    // A run over HTTP, in the trace of the caller's `traceparent`.
    let served = Agent::builder(ScriptedModel::per_run([
        Turn::text("Hi over HTTP.").with_usage(Some("edge-1".into()), Usage::new(11, 3, 14))
    ]))
    .name("edge")
    .build()
    .unwrap();
    let router = Server::new().agent("edge", served).into_router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let (caller_trace, caller_span) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let response = reqwest::Client::new()
        .post(format!("{base}/agents/edge/runs"))
        .header("traceparent", format!("00-{caller_trace}-{caller_span}-01"))
        .json(&json!({"input": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{:?}", response.text().await);
    server.abort();

    guard.flush().unwrap();

    // The served run: in the caller's trace, a child of the caller's span.
    let spans = phoenix.spans(caller_trace, 2).await;
    let edge = one(&spans, "invoke_agent edge");
    assert_eq!(edge["parent_id"], caller_span, "{edge:#}");
    let chat = one(&spans, "chat scripted");
    assert_eq!(chat["parent_id"], id(edge));
    assert_eq!(attribute(chat, "gen_ai.usage.input_tokens"), 11);
    assert_eq!(attribute(chat, "gen_ai.usage.output_tokens"), 3);

    // The interrupted run: its tree.
    let first = phoenix_trace(&phoenix, "desk-1", false).await;
    let run = one(&first, "invoke_agent support");
    assert_eq!(run["parent_id"], Value::Null, "a root: {run:#}");
    assert_eq!(attribute(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attribute(run, "gen_ai.agent.name"), "support");
    assert_eq!(attribute(run, "gen_ai.conversation.id"), "desk-1");
    let interrupt = run["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "gen_ai.agent.interrupt")
        .unwrap_or_else(|| panic!("an interrupt event: {run:#}"));
    assert_eq!(
        interrupt["attributes"]["adk.interrupt.id"],
        pending.as_str()
    );
    assert_eq!(interrupt["attributes"]["gen_ai.tool.name"], "transfer");

    let chat = children(&first, run, "chat scripted");
    assert_eq!(chat.len(), 1, "one model call of support's: {first:#?}");
    let chat = chat[0];
    assert_eq!(attribute(chat, "gen_ai.operation.name"), "chat");
    assert_eq!(attribute(chat, "gen_ai.provider.name"), "scripted");
    assert_eq!(attribute(chat, "gen_ai.request.model"), "scripted");
    assert_eq!(attribute(chat, "gen_ai.response.model"), "support-model-1");
    assert_eq!(attribute(chat, "gen_ai.usage.input_tokens"), 120);
    assert_eq!(attribute(chat, "gen_ai.usage.output_tokens"), 15);
    assert_eq!(finish_reasons(chat), ["tool_calls"]);
    let input = attribute(chat, "gen_ai.input.messages").as_str().unwrap();
    let input: Value = serde_json::from_str(input).unwrap();
    assert_eq!(input[0]["role"], "user");
    assert_eq!(
        input[0]["parts"][0]["content"],
        "Is invoice 7 paid? Then send Bob 5."
    );

    let billing = one(&first, "execute_tool billing");
    assert_eq!(billing["parent_id"], id(run));
    assert_eq!(attribute(billing, "gen_ai.tool.name"), "billing");
    assert_eq!(attribute(billing, "gen_ai.tool.call.id"), "c1");
    assert_eq!(attribute(billing, "gen_ai.tool.type"), "function");
    assert_eq!(
        attribute(billing, "gen_ai.tool.call.arguments"),
        r#"{"request":"Is invoice 7 paid?"}"#
    );
    assert_eq!(
        attribute(billing, "gen_ai.tool.call.result"),
        "Invoice 7 is paid."
    );

    let broken = one(&first, "execute_tool broken");
    assert_eq!(broken["parent_id"], id(run));
    assert_eq!(attribute(broken, "error.type"), "tool_error");
    assert_eq!(broken["status_code"], "ERROR");

    // The sub-agent's run, under the caller's tool call; its own calls under it.
    let sub = one(&first, "invoke_agent billing");
    assert_eq!(sub["parent_id"], id(billing));
    assert_eq!(attribute(sub, "gen_ai.agent.name"), "billing");
    let sub_chats = children(&first, sub, "chat scripted");
    assert_eq!(sub_chats.len(), 2, "billing's two model calls: {first:#?}");
    let tokens: i64 = sub_chats
        .iter()
        .map(|s| attribute(s, "gen_ai.usage.input_tokens").as_i64().unwrap())
        .sum();
    assert_eq!(tokens, 80);
    let invoice = one(&first, "execute_tool invoice");
    assert_eq!(invoice["parent_id"], id(sub));

    // The resumed run: its decision, the approved call, the last model call.
    let second = phoenix_trace(&phoenix, "desk-1", true).await;
    let resumed = one(&second, "invoke_agent support");
    assert_eq!(attribute(resumed, "gen_ai.conversation.id"), "desk-1");
    let decision = resumed["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "gen_ai.agent.decision")
        .unwrap_or_else(|| panic!("a decision event: {resumed:#}"));
    assert_eq!(decision["attributes"]["adk.interrupt.id"], pending.as_str());
    assert_eq!(decision["attributes"]["adk.decision"], "approve");
    let transfer = one(&second, "execute_tool transfer");
    assert_eq!(transfer["parent_id"], id(resumed));
    assert_eq!(
        attribute(transfer, "gen_ai.tool.call.result"),
        "transferred"
    );
    let last = one(&second, "chat scripted");
    assert_eq!(last["parent_id"], id(resumed));
    assert_eq!(attribute(last, "gen_ai.usage.input_tokens"), 200);
    assert_eq!(attribute(last, "gen_ai.usage.output_tokens"), 9);
    assert_eq!(finish_reasons(last), ["stop"]);
    let output = attribute(last, "gen_ai.output.messages").as_str().unwrap();
    let output: Value = serde_json::from_str(output).unwrap();
    assert_eq!(output[0]["role"], "assistant");
    assert_eq!(
        output[0]["parts"][0]["content"],
        "Paid, and the money is sent."
    );

    drop(guard);
    drop(phoenix);
}

/// The spans of the support run on `thread`: the first run's trace, or the resumed one's
/// (the one whose root has a decision event).
async fn phoenix_trace(phoenix: &Phoenix, thread: &str, resumed: bool) -> Vec<Value> {
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let url = format!("{}/v1/projects/default/spans?limit=1000", phoenix.base);
        let body: Value = client.get(url).send().await.unwrap().json().await.unwrap();
        let spans = body["data"].as_array().unwrap();
        let root = spans.iter().find(|s| {
            s["name"] == "invoke_agent support"
                && s["attributes"]["gen_ai.conversation.id"] == thread
                && s["events"]
                    .as_array()
                    .is_some_and(|e| e.iter().any(|e| e["name"] == "gen_ai.agent.decision"))
                    == resumed
        });
        if let Some(root) = root {
            let trace = root["context"]["trace_id"].as_str().unwrap();
            // The first run has 9 spans (its own, a model call, three tool calls, the
            // sub-agent's run with two model calls and a tool call), the resumed one 3.
            let least = if resumed { 3 } else { 9 };
            let spans = phoenix.spans(trace, least).await;
            if spans.len() >= least {
                return spans;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no {} run on {thread} in {spans:#?}",
            if resumed { "resumed" } else { "first" }
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
