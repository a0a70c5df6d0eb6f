//! The official A2A JS SDK's client (`@a2a-js/sdk`, from node: `clients/a2a_client.cjs`)
//! against the A2A face: the card, a blocking message, a streamed one.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{ALICE, TestServer, agents, client_script, output_of};

/// Where the npm client was installed: `$A2A_JS_CLIENT_DIR`, else
/// `target/test-servers/a2a-js-client`.
fn npm_dir() -> PathBuf {
    match std::env::var_os("A2A_JS_CLIENT_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/a2a-js-client"),
    }
}

async fn node(card: &str) -> Value {
    let dir = npm_dir();
    assert!(
        dir.join("node_modules/@a2a-js/sdk").exists(),
        "@a2a-js/sdk not found in {}: run scripts/setup-a2a-clients (or set A2A_JS_CLIENT_DIR)",
        dir.display()
    );
    let mut command = std::process::Command::new("node");
    command
        .arg(client_script("a2a_client.cjs"))
        .arg(&dir)
        .args([card, ALICE]);
    output_of(command).await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_js_sdks_client_reads_the_card_and_gets_answers_sent_and_streamed() {
    let server = TestServer::start(agents().server).await;
    let read = node(&server.url("/agents/weather/.well-known/agent-card.json")).await;
    assert_eq!(read["card"]["name"], "weather");
    let sent = &read["sent"];
    let task = sent.get("value").unwrap_or(sent);
    assert_eq!(task["status"]["state"], 3, "TASK_STATE_COMPLETED: {sent}");
    let streamed = read["streamed"].as_array().unwrap();
    let cases: Vec<&str> = streamed
        .iter()
        .filter_map(|e| e["$case"].as_str())
        .collect();
    assert_eq!(cases.first(), Some(&"task"), "{cases:?}");
    assert_eq!(cases.last(), Some(&"statusUpdate"), "{cases:?}");
    let texts: Vec<&str> = streamed
        .iter()
        .filter(|e| e["$case"] == "artifactUpdate")
        .filter_map(|e| e["value"]["artifact"]["parts"][0]["content"]["value"].as_str())
        .collect();
    assert_eq!(texts, ["It is ", "sunny."]);
    let last = &streamed.last().unwrap()["value"]["status"]["state"];
    assert_eq!(last, 3, "TASK_STATE_COMPLETED");
}
