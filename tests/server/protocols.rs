//! The protocols clients already speak, driven by real clients no one here wrote: the
//! `openai` package against the OpenAI-compatible routes, and against the AG-UI route
//! the AG-UI SDK's models (`ag-ui-protocol`, from Python) and the AG-UI client from npm
//! (`@ag-ui/client`'s `HttpAgent`, from node), with scripts in `clients/`.
//!
//! `scripts/setup-protocol-clients` installs them first (the venv is looked for in
//! `$PROTOCOL_CLIENTS_VENV`, by default `target/test-servers/protocols`; the npm client
//! in `$AGUI_CLIENT_DIR`, by default `target/test-servers/agui-client`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tower_adk::content::{Part, Reasoning, Source};
use tower_adk::server::{BearerTokens, Server};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool};
use tower_adk::{Agent, BoxError, Tool, ToolInfo, ToolOutput};

use super::{Counter, TestServer, asking_tool};

/// A 1x1 PNG, base64.
const DOT: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The opaque data of the model's reasoning: for its provider only, never for a client.
const SIGNATURE: &str = "c2lnbmF0dXJlLW9mLXRoZS1wcm92aWRlcg==";

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

fn thinking(text: &str) -> Part {
    Part::Reasoning(Reasoning::new("anthropic", text).with_data("signature", SIGNATURE))
}

/// Reasons (whole) and calls `draw`, which returns an image; then reasons (streamed),
/// returns an image of its own and streams "Here it is."; then says "Anything else?".
fn painter_model() -> ScriptedModel {
    ScriptedModel::per_run([
        Turn::call("c1", "draw", json!({})).with_part(thinking("I should draw.")),
        Turn::stream(["Here ", "it is."])
            .with_part(thinking("Weigh it."))
            .with_part(Part::image(Source::base64("image/png", DOT))),
        Turn::text("Anything else?"),
    ])
}

fn painter_agent(model: ScriptedModel) -> Agent {
    let draw = Tool::from_fn(ToolInfo::new("draw", "Draws"), |_| async {
        let image = Part::image(Source::base64("image/png", DOT));
        Ok::<_, BoxError>(ToolOutput::new("drawn").with_part(image))
    });
    Agent::builder(model).tool(draw).build().unwrap()
}

/// Where a client was installed: `$VAR`, else `target/test-servers/DEFAULT`.
fn installed(var: &str, default: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/test-servers")
            .join(default),
    }
}

fn client_script(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/server/clients")
        .join(script)
}

/// Runs a script of `clients/` with the venv's python; panics with its output if it
/// fails.
pub(super) async fn python(script: &str, args: &[&str]) -> String {
    let python = installed("PROTOCOL_CLIENTS_VENV", "protocols").join("bin/python");
    assert!(
        python.exists(),
        "{} not found: run scripts/setup-protocol-clients (or set PROTOCOL_CLIENTS_VENV)",
        python.display()
    );
    let mut command = std::process::Command::new(python);
    command.arg(client_script(script)).args(args);
    output_of(command).await
}

/// Runs `agui_client.cjs` with node and the npm client; its runs, as it printed them.
async fn agui_node(base: &str, scenario: &str) -> Vec<Value> {
    let dir = installed("AGUI_CLIENT_DIR", "agui-client");
    assert!(
        dir.join("node_modules/@ag-ui/client").exists(),
        "@ag-ui/client not found in {}: run scripts/setup-protocol-clients (or set AGUI_CLIENT_DIR)",
        dir.display()
    );
    let mut command = std::process::Command::new("node");
    command
        .arg(client_script("agui_client.cjs"))
        .arg(dir)
        .args([base, scenario]);
    let printed: Value = serde_json::from_str(&output_of(command).await).unwrap();
    printed["runs"].as_array().unwrap().clone()
}

/// Runs a client; panics with its output if it fails.
async fn output_of(mut command: std::process::Command) -> String {
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

#[tokio::test]
async fn the_openai_package_reads_reasoning_apart_and_a_placeholder_for_an_image() {
    let router = Server::new()
        .agent("painter", painter_agent(painter_model()))
        .into_router();
    let server = TestServer::start(router).await;

    let printed = python("openai_parts.py", &[&server.url("")]).await;

    assert!(printed.ends_with("ok\n"), "{printed}");
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

/// The `type`s of a run's events, as the client collected them.
fn event_types(run: &Value) -> Vec<&str> {
    let events = run["events"].as_array().unwrap();
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn the_npm_agui_client_runs_an_agent_with_tool_calls_and_builds_its_conversation() {
    let server = agui_server(&Counter::default()).await;

    let runs = agui_node(&server.url(""), "tools").await;

    let run = &runs[0];
    assert_eq!(
        event_types(run),
        [
            "RUN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    let events = &run["events"];
    assert_eq!(events[1]["toolCallName"], "weather");
    let arguments: Value = serde_json::from_str(events[2]["delta"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"city": "Oslo"}));
    assert_eq!(events[4]["content"], "sunny");
    assert_eq!(run["result"]["result"], "It is sunny.");
    // The conversation the client put together from the events.
    let messages = run["messages"].as_array().unwrap();
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(messages[1]["toolCalls"][0]["function"]["name"], "weather");
    assert_eq!(
        (
            messages[2]["toolCallId"].as_str(),
            messages[2]["content"].as_str()
        ),
        (Some("c1"), Some("sunny"))
    );
    assert_eq!(messages[3]["content"], "It is sunny.");
}

#[tokio::test]
async fn the_npm_agui_client_resumes_its_pending_interrupt_with_resume_entries() {
    let paid = Counter::default();
    let server = agui_server(&paid).await;

    let runs = agui_node(&server.url(""), "interrupt").await;

    let (stopped, approved, again) = (&runs[0], &runs[1], &runs[2]);
    assert_eq!(
        event_types(stopped),
        [
            "RUN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(stopped["events"][4]["outcome"]["type"], "interrupt");
    let pending = stopped["pendingInterrupts"].as_array().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (
            pending[0]["reason"].as_str(),
            pending[0]["toolCallId"].as_str(),
            pending[0]["message"].as_str()
        ),
        (Some("tool_call"), Some("c1"), Some("Pay?"))
    );

    assert_eq!(
        event_types(approved),
        [
            "RUN_STARTED",
            "TOOL_CALL_RESULT",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(approved["events"][1]["content"], "paid");
    assert_eq!(approved["events"][5]["outcome"]["type"], "success");
    assert_eq!(approved["result"]["result"], "Paid.");
    assert_eq!(approved["pendingInterrupts"], json!([]));
    let roles: Vec<_> = approved["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(paid.get(), 1);

    assert_eq!(event_types(again), ["RUN_STARTED", "RUN_ERROR"]);
    assert_eq!(again["events"][1]["code"], "checkpoint_used");
    assert_eq!(paid.get(), 1);
}

#[tokio::test]
async fn an_agui_run_reads_images_in_and_streams_reasoning_and_images_out() {
    let model = painter_model();
    let router = Server::new()
        .agent("painter", painter_agent(model.clone()))
        .into_router();
    let server = TestServer::start(router).await;

    let printed = python("agui_client.py", &[&server.url(""), "parts"]).await;

    assert!(printed.ends_with("ok\n"), "{printed}");
    // The user's image reached the model as an image part.
    let first = &model.requests()[0];
    let said = first.messages.last().unwrap().parts().into_owned();
    assert_eq!(
        said,
        [
            Part::text("Draw a dot like this:"),
            Part::image(Source::base64("image/png", DOT))
        ]
    );
}

#[tokio::test]
async fn the_npm_agui_client_keeps_reasoning_and_a_tools_image_and_sends_them_back() {
    let model = painter_model();
    let router = Server::new()
        .agent("painter", painter_agent(model.clone()))
        .into_router();
    let server = TestServer::start(router).await;

    let runs = agui_node(&server.url(""), "parts").await;

    let (first, second) = (&runs[0], &runs[1]);
    let messages = first["messages"].as_array().unwrap();
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "reasoning",
            "assistant",
            "tool",
            "reasoning",
            "assistant"
        ]
    );
    assert_eq!(messages[1]["content"], "I should draw.");
    assert_eq!(
        messages[3]["content"][0],
        json!({"type": "text", "text": "drawn"})
    );
    assert_eq!(
        messages[3]["content"][1]["source"],
        json!({"type": "data", "value": DOT, "mimeType": "image/png"})
    );
    assert_eq!(messages[4]["content"], "Weigh it.");
    assert_eq!(
        messages[5]["content"],
        "Here it is.\n\n[an image: image/png, 96 base64 bytes]"
    );
    assert!(!first.to_string().contains(SIGNATURE));

    // The second run: the client sent it all back; the reasoning messages were read
    // past, the tool's image came back as an image part of the tool's message.
    assert_eq!(second["result"]["result"], "Anything else?");
    let third = &model.requests()[2];
    let tool = third
        .messages
        .iter()
        .find(|m| m.tool_call_id() == Some("c1"));
    let tool = tool.unwrap().parts().into_owned();
    assert_eq!(
        tool,
        [
            Part::text("drawn"),
            Part::image(Source::base64("image/png", DOT))
        ]
    );
    assert!(
        third
            .messages
            .iter()
            .all(|m| m.full_content().reasoning().count() == 0)
    );
}
