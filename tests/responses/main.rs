//! The Responses API model (`providers::openai::responses`) against servers that someone
//! else wrote, and against OpenAI's own published replies:
//!
//! - `recorded`: replies copied from OpenAI's API reference (`recorded/`, see its
//!   `SOURCES.md`), replayed byte for byte by a local HTTP server (`replay`): text,
//!   function calls, reasoning with `encrypted_content` across a three-turn tool loop,
//!   usage, `error` and `response.failed` events; every request body we sent there is
//!   validated against the official `openai` Python SDK's `ResponseCreateParams`
//!   (`validate.py`).
//! - `resume`: the same tool loop interrupted after turn 1 and resumed from its SQLite
//!   checkpoint in another OS process.
//! - `litellm`: LiteLLM's proxy (PyPI, `scripts/setup-litellm`) serving `/v1/responses` in
//!   front of llmock (`scripts/setup-openai-mocks`), translating to chat completions and
//!   passing through; what it translates faithfully is asserted there.
//! - `fallback`: from this model to the chat completions model, which sends no reasoning.
//!
//! Every server runs on a free port of 127.0.0.1, started by the test; one that cannot
//! start fails the test.

#![cfg(feature = "openai-responses")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fallback;
mod litellm;
mod recorded;
mod replay;
mod resume;
#[allow(dead_code)]
#[path = "../openai/servers.rs"]
mod servers;

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tower_adk::{Tool, ToolInfo, ToolOutput, ToolRequest};

/// The tool of the recorded tool loop: `get_current_weather`, as in OpenAI's reference.
fn weather() -> Tool {
    Tool::from_fn(
        ToolInfo::new(
            "get_current_weather",
            "Get the current weather in a given location",
        )
        .parameters(json!({
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
            },
            "required": ["location", "unit"]
        })),
        |req: ToolRequest| async move {
            let city = req.arguments["location"].as_str().unwrap_or("?").to_owned();
            let degrees = if city.starts_with("Boston") { 21 } else { 20 };
            Ok::<_, Infallible>(ToolOutput::new(format!("{degrees}C in {city}")))
        },
    )
}

/// The LiteLLM venv (`scripts/setup-litellm`): its proxy and the official `openai` SDK.
fn litellm_venv() -> PathBuf {
    match std::env::var_os("LITELLM_VENV") {
        Some(venv) => PathBuf::from(venv),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/litellm"),
    }
}

/// A folder of this test binary's own.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("responses")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Validates request bodies against the official `openai` SDK's `ResponseCreateParams`
/// (pinned in `scripts/setup-litellm`), failing the test with the SDK's complaint.
fn assert_valid_for_the_sdk(name: &str, bodies: &[Value]) {
    let python = litellm_venv().join("bin/python");
    assert!(
        python.exists(),
        "{} not found: run scripts/setup-litellm (or set LITELLM_VENV)",
        python.display()
    );
    let file = scratch("sdk").join(format!("{name}.json"));
    std::fs::write(&file, Value::from(bodies.to_vec()).to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/responses/validate.py");
    let output = Command::new(python)
        .arg(script)
        .arg(&file)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the openai SDK refuses a body of {name}:\n{report}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(report.matches(": valid").count(), bodies.len(), "{report}");
}

/// The input items of a request body.
fn items(body: &Value) -> &[Value] {
    body["input"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}
