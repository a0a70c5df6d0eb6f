//! `adk serve`: prints its address, answers `GET /agents` and a run, and stops on
//! SIGINT with exit status 0.

use std::io::{BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Instant;

use crate::support::{PATIENCE, adk};

#[tokio::test(flavor = "multi_thread")]
async fn serve_answers_runs_and_stops_on_ctrl_c() {
    let (mut server, base, lines) = serve("tests/cli/agents/desk.yaml", &[], &[]);
    let server = &mut server.0;

    let client = reqwest::Client::new();
    let agents: serde_json::Value = client
        .get(format!("{base}/agents"))
        .send()
        .await
        .expect("GET /agents")
        .json()
        .await
        .expect("JSON");
    assert_eq!(agents["agents"][0]["name"], "desk", "{agents}");
    assert_eq!(
        agents["agents"][0]["description"],
        "Books rooms at the front desk."
    );

    let response = client
        .post(format!("{base}/agents/desk/runs"))
        .json(&serde_json::json!({"input": "hi"}))
        .send()
        .await
        .expect("POST a run");
    assert!(response.status().is_success(), "{}", response.status());
    let body = response.text().await.expect("a body");
    assert!(
        body.contains("Hello! Which city are you travelling to?"),
        "{body}"
    );

    let interrupt = Command::new("kill")
        .args(["-INT", &server.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupt.success());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = server.try_wait().expect("wait") {
            break status;
        }
        assert!(start.elapsed() < PATIENCE, "adk serve did not stop");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(status.code(), Some(0));
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(rest.iter().any(|line| line.contains("stopped")), "{rest:?}");
}

/// Starts `adk serve FILE --addr 127.0.0.1:0 ARGS` with `env`: the server (killed when
/// dropped), the address it printed first, and the rest of its output's lines.
fn serve(
    file: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Stopped, String, Lines<BufReader<ChildStdout>>) {
    let mut server = Stopped(
        adk()
            .args(["serve", file, "--addr", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .spawn()
            .expect("adk starts"),
    );
    let stdout = server.0.stdout.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a line").expect("text");
    let base = first
        .split_once("serving on ")
        .map(|(_, url)| url.trim().to_owned())
        .unwrap_or_else(|| panic!("no address in {first:?}"));
    (server, base, lines)
}

/// The server, killed if a failed test left it running.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_with_tokens_lets_in_only_their_holders() {
    let tokens = [("ADK_TOKENS", "t0ken-clerk=clerk,t0ken-guest=guest")];
    let (_server, base, _) = serve("tests/cli/agents/desk.yaml", &[], &tokens);
    let client = reqwest::Client::new();
    let anonymous = client
        .get(format!("{base}/agents"))
        .send()
        .await
        .expect("GET");
    assert_eq!(anonymous.status(), 401);
    let clerk = client
        .get(format!("{base}/agents"))
        .bearer_auth("t0ken-clerk")
        .send()
        .await
        .expect("GET");
    assert_eq!(clerk.status(), 200);
}

/// `adk serve --metrics` with tokens serves `GET /metrics` to their holders only, and
/// counts the runs it served.
#[tokio::test(flavor = "multi_thread")]
async fn serve_with_metrics_serves_them_to_token_holders() {
    let tokens = [("ADK_TOKENS", "t0ken-clerk=clerk")];
    let (_server, base, mut lines) = serve("tests/cli/agents/desk.yaml", &["--metrics"], &tokens);
    let listed: Vec<String> = lines.by_ref().take(2).map(|l| l.expect("text")).collect();
    assert!(
        listed
            .iter()
            .any(|l| l.trim() == format!("GET {base}/metrics")),
        "{listed:?}"
    );
    let client = reqwest::Client::new();
    let anonymous = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("GET");
    assert_eq!(anonymous.status(), 401);
    let run = client
        .post(format!("{base}/agents/desk/runs"))
        .bearer_auth("t0ken-clerk")
        .json(&serde_json::json!({"input": "hello"}))
        .send()
        .await
        .expect("POST");
    assert_eq!(run.status(), 200);
    let metrics = client
        .get(format!("{base}/metrics"))
        .bearer_auth("t0ken-clerk")
        .send()
        .await
        .expect("GET");
    assert_eq!(metrics.status(), 200);
    let text = metrics.text().await.expect("text");
    assert!(
        text.lines()
            .any(|l| l == "adk_runs_started_total{agent=\"desk\"} 1"),
        "{text}"
    );
}

/// `adk serve`'s runs on a thread carry the booking's slots from one message to the
/// next, as `adk run`'s do: the second message makes the booking in the first one's city.
#[tokio::test(flavor = "multi_thread")]
async fn serve_keeps_a_threads_slots_between_its_runs() {
    let (_server, base, _) = serve("examples/agents/booking.yaml", &[], &[]);
    let client = reqwest::Client::new();
    let mut last = serde_json::Value::Null;
    for input in ["A room in Paris", "3 nights, double"] {
        let response = client
            .post(format!("{base}/agents/booking/runs"))
            .json(&serde_json::json!({"input": input, "thread": "trip-1"}))
            .send()
            .await
            .expect("POST a run");
        assert!(response.status().is_success(), "{}", response.status());
        last = response.json().await.expect("JSON");
    }
    let reply = last.to_string();
    assert!(
        reply.contains("I have everything I need:\\n- city: Paris\\n- nights: 3\\n- room: double"),
        "{reply}"
    );
}

/// `adk serve --a2a` serves the file's agent over A2A: its card at the root (the tools an
/// anonymous caller sees: the role filter hides the clerk's), and a message answered as
/// a completed task.
#[tokio::test(flavor = "multi_thread")]
async fn serve_with_a2a_serves_the_files_agent_over_a2a() {
    let (_server, base, _) = serve("tests/cli/agents/desk.yaml", &["--a2a"], &[]);
    let client = reqwest::Client::new();
    let card: serde_json::Value = client
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .expect("GET the card")
        .json()
        .await
        .expect("JSON");
    assert_eq!(card["name"], "desk", "{card}");
    assert_eq!(card["supportedInterfaces"][0]["url"], format!("{base}/a2a"));
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .filter_map(|skill| skill["id"].as_str())
        .collect();
    assert_eq!(skills, ["set_slot_city"]);

    let message = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    });
    let answer: serde_json::Value = client
        .post(format!("{base}/agents/desk/a2a"))
        .json(&message)
        .send()
        .await
        .expect("POST SendMessage")
        .json()
        .await
        .expect("JSON");
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"],
        "Hello! Which city are you travelling to?"
    );
}
