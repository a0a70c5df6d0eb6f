//! The Gemini model (`providers::gemini`) against Google's own material: replies recorded
//! from the real API by Google's SDK test suites (`recorded/`, see its README), replayed
//! byte for byte by a local HTTP server started by each test, and the request bodies we
//! send checked by Google's Python SDK, `google-genai` (`scripts/setup-gemini-sdk`), whose
//! types and request serialiser must accept them and build the same body.
//!
//! `tool_loop` also resumes a run in another OS process: this test binary started again
//! with a filter that runs only `tool_loop::worker_resumes_a_checkpoint`, which does
//! nothing unless the parent's environment names a checkpoint.

#![cfg(all(feature = "gemini", feature = "openai", feature = "sqlite"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fallback;
mod parts;
mod replay;
mod replies;
mod sdk;
mod tool_loop;

use std::convert::Infallible;

use serde_json::{Value, json};
use tower_adk::providers::gemini::{GeminiModel, GeminiModelBuilder};
use tower_adk::{Tool, ToolInfo, ToolOutput, ToolRequest};

/// A model on the replay server at `url`, with a key the server checks.
fn model(url: &str) -> GeminiModelBuilder {
    GeminiModel::builder()
        .base_url(url)
        .api_key("test-key")
        .model("gemini-2.5-flash")
}

/// The recorded run's `customDivide`: its declaration as Google's test declared it, and
/// the outputs its fake function gave (42 for 10 / 2, then 2 for 42 / 2).
fn custom_divide() -> Tool {
    let info = ToolInfo::new("customDivide", "Custom divide function").parameters(json!({
        "type": "object",
        "properties": {"numerator": {"type": "number"}, "denominator": {"type": "number"}}
    }));
    Tool::from_fn(info, |request: ToolRequest| async move {
        let output = match request.arguments["numerator"].as_f64() {
            Some(10.0) => 42,
            _ => 2,
        };
        Ok::<_, Infallible>(ToolOutput::new(json!({"output": output}).to_string()))
    })
}

/// The `thoughtSignature`s of a request's `model` contents, in order, with the part
/// each is on (`functionCall`, `text`, ...).
fn signatures(body: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for content in body["contents"].as_array().into_iter().flatten() {
        for part in content["parts"].as_array().into_iter().flatten() {
            if let Some(signature) = part["thoughtSignature"].as_str() {
                let on = (part.as_object().unwrap().keys())
                    .find(|k| *k != "thoughtSignature")
                    .cloned()
                    .unwrap_or_default();
                found.push((on, signature.to_owned()));
            }
        }
    }
    found
}

/// The signature a recorded reply carries on its `n`th part.
fn recorded_signature(file: &str, part: usize) -> String {
    let text = std::fs::read_to_string(replay::recorded(file)).unwrap();
    let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
    let chunk: Value = serde_json::from_str(data).unwrap();
    chunk["candidates"][0]["content"]["parts"][part]["thoughtSignature"]
        .as_str()
        .unwrap()
        .to_owned()
}
