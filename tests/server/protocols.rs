//! The protocols clients already speak, driven by real clients no one here wrote: the
//! `openai` package against the OpenAI-compatible routes, and the AG-UI SDK's models
//! (`ag-ui-protocol`) against the AG-UI route, from Python scripts in `clients/`.
//!
//! `scripts/setup-protocol-clients` installs them first (the venv is looked for in
//! `$PROTOCOL_CLIENTS_VENV`, by default `target/test-servers/protocols`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use tower_adk::Agent;
use tower_adk::server::{BearerTokens, Server};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool};

use super::{Counter, TestServer, asking_tool};

/// The role a bearer token stands for.
#[derive(Debug, Clone)]
struct User;

fn weather_model() -> ScriptedModel {
    ScriptedModel::per_run([
        Turn::call("c1", "weather", json!({"city": "Oslo"})),
        Turn::stream(["It is ", "sunny."]),
    ])
}

fn weather_agent(model: ScriptedModel) -> Agent {
    Agent::builder(model)
        .instruction("You forecast.")
        .tool(chunk_tool("weather", &["sun", "ny"], Duration::ZERO))
        .build()
        .unwrap()
}

fn bank_agent(paid: &Counter) -> Agent {
    let model = ScriptedModel::per_run([Turn::call("c1", "pay", json!({})), Turn::text("Paid.")]);
    Agent::builder(model)
        .name("bank")
        .tool(asking_tool(paid))
        .build()
        .unwrap()
}

/// Runs a script of `clients/` with the venv's python; panics with its output if it
/// fails.
async fn python(script: &str, args: &[&str]) -> String {
    let venv = match std::env::var_os("PROTOCOL_CLIENTS_VENV") {
        Some(venv) => PathBuf::from(venv),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/protocols"),
    };
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "{} not found: run scripts/setup-protocol-clients (or set PROTOCOL_CLIENTS_VENV)",
        python.display()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/server/clients")
        .join(script);
    let mut command = std::process::Command::new(python);
    command.arg(script).args(args);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the client failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    println!("{stdout}");
    stdout
}

#[tokio::test]
async fn the_openai_package_lists_the_agents_and_calls_them_streamed_and_not() {
    let model = weather_model();
    let paid = Counter::default();
    let router = Server::new()
        .agent("weather", weather_agent(model.clone()))
        .agent("bank", bank_agent(&paid))
        .identify(BearerTokens::new().token("sk-test", User))
        .into_router();
    let server = TestServer::start(router).await;

    let printed = python("openai_client.py", &[&server.url(""), "sk-test"]).await;

    assert!(printed.ends_with("ok\n"), "{printed}");
    // The agent's instruction stays first; the client's system message follows it.
    let first = &model.requests()[0];
    let contents: Vec<&str> = first.messages.iter().map(|m| m.content()).collect();
    assert_eq!(
        contents[..3],
        ["You forecast.", "Answer briefly.", "Weather in Oslo?"]
    );
    assert_eq!(paid.get(), 0);
}

async fn agui_server(paid: &Counter) -> TestServer {
    let greeter = Agent::builder(ScriptedModel::per_run([Turn::stream(["Hel", "lo!"])]))
        .build()
        .unwrap();
    let router = Server::new()
        .agent("greeter", greeter)
        .agent("weather", weather_agent(weather_model()))
        .agent("bank", bank_agent(paid))
        .into_router();
    TestServer::start(router).await
}

#[tokio::test]
async fn an_agui_run_streams_its_text_as_valid_agui_events_in_order() {
    let server = agui_server(&Counter::default()).await;

    let printed = python("agui_client.py", &[&server.url(""), "plain"]).await;

    assert!(printed.ends_with("ok\n"), "{printed}");
}

#[tokio::test]
async fn an_agui_run_streams_its_tool_calls_and_their_results() {
    let server = agui_server(&Counter::default()).await;

    let printed = python("agui_client.py", &[&server.url(""), "tools"]).await;

    assert!(printed.ends_with("ok\n"), "{printed}");
}

#[tokio::test]
async fn an_agui_interrupt_is_resumed_by_a_run_whose_input_carries_resume_entries() {
    let paid = Counter::default();
    let server = agui_server(&paid).await;

    let printed = python("agui_client.py", &[&server.url(""), "interrupt"]).await;

    assert!(printed.ends_with("ok\n"), "{printed}");
    // Approved once (the tool ran), used checkpoint refused, then cancelled (it did not).
    assert_eq!(paid.get(), 1);
}
