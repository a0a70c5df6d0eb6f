//! Several hosts: two server processes on loopback that share a Postgres or a Redis
//! checkpoint store. A run interrupted through one is resumed through the other (once:
//! a second resume through the first is refused), and a thread goes on through either.
//!
//! This binary is both the test and its hosts (`harness = false`): run without arguments
//! it starts the database servers and, for each store, two copies of itself as hosts
//! (`hosts worker serve STORE LOG`), then talks to them over HTTP with reqwest. Each case
//! prints `ok` or panics; the hosts are killed when their guard is dropped, on success
//! or failure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../stores/servers.rs"]
mod servers;
#[path = "../support/workers.rs"]
mod workers;

use self::workers::{AskBefore, logged, open, runs_of, unique};

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use serde_json::{Value, json};
use tower_adk::checkpoint::CheckpointStore;
use tower_adk::server::{ServedAgent, Server};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, HandlerLayer};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if args.first().map(String::as_str) == Some("worker") {
        runtime.block_on(worker(&args[1..]));
        return;
    }
    runtime.block_on(cases());
}

/// Every case, on every shared store.
async fn cases() {
    let dir = servers::scratch("hosts");
    let postgres = servers::Postgres::start();
    let redis = servers::Redis::start();
    for store in [postgres.url(), redis.url()] {
        let kind = store.split(':').next().unwrap_or_default();
        let log = dir.join(format!("{kind}.log"));
        let hosts = Hosts::start(&store, &log);
        interrupted_here_resumed_there(&hosts, &log).await;
        println!("test {kind}: interrupted through one host, resumed through the other ... ok");
        thread_goes_on_through_either(&hosts, &log).await;
        println!("test {kind}: a thread goes on through either host ... ok");
    }
}

async fn interrupted_here_resumed_there(hosts: &Hosts, log: &Path) {
    let [a, b] = &hosts.urls;
    let thread = format!("approval-{}", unique());
    let before = runs_of(log, "transfer");

    let (status, stopped) = run(a, json!({"input": "send 5 to bob", "thread": thread})).await;
    assert_eq!(
        (status, stopped["status"].as_str()),
        (200, Some("interrupted")),
        "{stopped}"
    );
    assert_eq!(stopped["interrupts"][0]["id"], "agent:bank/tool:t1");
    assert_eq!(
        runs_of(log, "transfer"),
        before,
        "nothing ran before the approval"
    );

    let resume = json!({"resume": {
        "checkpoint": stopped["checkpoint"],
        "decisions": {"agent:bank/tool:t1": {"type": "approve"}},
    }});
    let (status, done) = run(b, resume.clone()).await;
    assert_eq!(
        (status, done["status"].as_str()),
        (200, Some("completed")),
        "{done}"
    );
    assert_eq!(done["final_message"]["content"], "sent 5 to bob");
    assert_eq!(runs_of(log, "transfer"), before + 1);

    // The same checkpoint, resumed again through the first host, is refused.
    let (status, again) = run(a, resume).await;
    assert_eq!(
        (status, again["error"]["code"].as_str()),
        (409, Some("checkpoint_used")),
        "{again}"
    );
    assert_eq!(
        runs_of(log, "transfer"),
        before + 1,
        "the transfer ran once"
    );
}

/// Each run's answer is the script's turn for the history it is sent, so a host answers
/// "you're welcome" and "goodbye" only if it read what the other host wrote.
async fn thread_goes_on_through_either(hosts: &Hosts, log: &Path) {
    let [a, b] = &hosts.urls;
    let thread = format!("chat-{}", unique());
    let before = runs_of(log, "transfer");

    let (_, stopped) = run(a, json!({"input": "send 5 to bob", "thread": thread})).await;
    let resume = json!({"resume": {
        "checkpoint": stopped["checkpoint"],
        "decisions": {"agent:bank/tool:t1": {"type": "approve"}},
    }});
    let (_, first) = run(a, resume).await;
    assert_eq!(
        first["final_message"]["content"], "sent 5 to bob",
        "{first}"
    );

    let (status, second) = run(b, json!({"input": "thanks", "thread": thread})).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["final_message"]["content"], "you're welcome");
    let (status, third) = run(a, json!({"input": "bye", "thread": thread})).await;
    assert_eq!(status, 200, "{third}");
    assert_eq!(third["final_message"]["content"], "goodbye");

    let url = format!("{b}/agents/bank/threads/{thread}");
    let shown: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
    assert_eq!(shown["status"], "completed", "{shown}");
    assert_eq!(
        said(&shown["messages"]),
        [
            "send 5 to bob",
            "sent 5 to bob",
            "thanks",
            "you're welcome",
            "bye",
            "goodbye"
        ],
        "{shown}"
    );
    assert_eq!(runs_of(log, "transfer"), before + 1);
}

/// The texts of a thread's user and assistant messages, in order (tool calls aside).
fn said(messages: &Value) -> Vec<&str> {
    let messages = messages.as_array().map(Vec::as_slice).unwrap_or_default();
    let spoken = messages.iter().filter(|m| m["role"] != "tool");
    let texts = spoken.filter_map(|m| m["content"].as_str());
    texts.filter(|text| !text.is_empty()).collect()
}

/// Posts a run body to a host and reads the JSON answer with its status.
async fn run(host: &str, body: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{host}/agents/bank/runs"))
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// Two hosts on one store, killed when dropped.
struct Hosts {
    children: Vec<Child>,
    urls: [String; 2],
}

impl Hosts {
    /// Starts both hosts at once (they create the store's tables together) and waits for
    /// the address each prints.
    fn start(store: &str, log: &Path) -> Hosts {
        let mut hosts = Hosts {
            children: Vec::new(),
            urls: Default::default(),
        };
        for _ in 0..2 {
            let child = Command::new(std::env::current_exe().unwrap())
                .args(["worker", "serve", store, log.to_str().unwrap()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap();
            hosts.children.push(child);
        }
        for (child, url) in hosts.children.iter_mut().zip(&mut hosts.urls) {
            let mut line = String::new();
            let stdout = child.stdout.as_mut().unwrap();
            BufReader::new(stdout).read_line(&mut line).unwrap();
            let address = line.trim().strip_prefix("listening ");
            *url = address
                .unwrap_or_else(|| panic!("a host did not start: {line:?}"))
                .to_owned();
        }
        hosts
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

// --- The hosts ---

async fn worker(args: &[String]) {
    let [role, store, log] = args else {
        panic!("worker serve STORE LOG, got {args:?}")
    };
    assert_eq!(role, "serve", "no worker role {role}");
    // A host whose test is gone (its standard input closed) goes too.
    std::thread::spawn(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    let agent = bank(open(store).await, Path::new(log));
    let served = ServedAgent::new(agent).layer(HandlerLayer::new(AskBefore));
    let router = Server::new().agent("bank", served).into_router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("listening http://{}", listener.local_addr().unwrap());
    axum::serve(listener, router).await.unwrap();
}

/// A bank agent: a transfer that needs approval, then small talk. Any host answers any
/// turn, by the number of assistant messages in the history it is sent.
fn bank(store: Arc<dyn CheckpointStore>, log: &Path) -> Agent {
    let model = ScriptedModel::per_run([
        Turn::call("t1", "transfer", json!({"amount": 5, "to": "bob"})),
        Turn::text("sent 5 to bob"),
        Turn::text("you're welcome"),
        Turn::text("goodbye"),
    ]);
    Agent::builder(model)
        .name("bank")
        .checkpoints(store)
        .tool(logged("transfer", log))
        .build()
        .unwrap()
}
