//! The OpenAI-compatible model (`providers::openai`) against servers that someone else
//! wrote: `llmock` (scripted over HTTP: canned replies, parallel tool calls, errors,
//! delays, streams that drop, stall or carry bad JSON) and `fakellm` (YAML rules over a
//! multi-turn conversation), both from PyPI, installed by `scripts/setup-openai-mocks`.
//! Each test starts its own server on a free port of 127.0.0.1; a server that cannot
//! start fails the test.
//!
//! `local_llm` runs against a real model when `LOCAL_LLM_BASE_URL` points at one
//! (`scripts/setup-local-llm`); without it, it returns at once.

#![cfg(feature = "openai")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod errors;
mod fakellm;
mod local_llm;
mod options;
mod parallel;
mod react;
mod servers;
mod structured;

use std::convert::Infallible;

use futures::StreamExt;
use serde_json::json;
use tower_adk::providers::openai::OpenAiError;
use tower_adk::{
    Agent, AgentError, AgentEvent, AgentRequest, AgentResult, Tool, ToolInfo, ToolOutput,
    ToolRequest,
};

/// A tool that reports the weather of a city, echoing the city it was given.
fn weather() -> Tool {
    Tool::from_fn(
        ToolInfo::new("weather", "Current weather in a city").parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city"}},
            "required": ["city"]
        })),
        |req: ToolRequest| async move {
            let city = req.arguments["city"].as_str().unwrap_or("?").to_owned();
            Ok::<_, Infallible>(ToolOutput::new(format!("21C and sunny in {city}")))
        },
    )
}

/// A tool without arguments that tells the time.
fn clock() -> Tool {
    Tool::from_fn(ToolInfo::new("time", "The current time"), |_| async {
        Ok::<_, Infallible>(ToolOutput::new("12:00"))
    })
}

/// Runs a request to its end: every event, then the run's error if it failed.
async fn run(
    agent: &Agent,
    request: AgentRequest,
) -> (Vec<AgentEvent>, Result<AgentResult, AgentError>) {
    let mut run = agent.run(request);
    let mut events = Vec::new();
    while let Some(event) = run.next().await {
        match event {
            Ok(AgentEvent::Completed(result)) => return (events, Ok(*result)),
            Ok(event) => events.push(event),
            Err(error) => return (events, Err(error)),
        }
    }
    panic!("the run ended without a result: {events:?}");
}

/// The text streamed by the model during a run.
fn streamed_text(events: &[AgentEvent]) -> String {
    events.iter().filter_map(AgentEvent::text_delta).collect()
}

/// The `OpenAiError` a failed run ended with.
fn openai_error(error: &AgentError) -> &OpenAiError {
    OpenAiError::find(error).unwrap_or_else(|| panic!("not an OpenAiError: {error:?}"))
}

#[test]
fn the_model_is_a_clone_send_sync_service_and_its_errors_are_send_sync() {
    fn assert_service<S>()
    where
        S: tower::Service<tower_adk::ModelRequest, Response = tower_adk::ModelResponse>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
    }
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_service::<tower_adk::providers::openai::OpenAiModel>();
    assert_send_sync::<OpenAiError>();
    assert_send_sync::<tower_adk::providers::openai::ConfigError>();
}
