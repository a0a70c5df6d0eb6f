//! The Anthropic model (`providers::anthropic`) against servers that someone else wrote or
//! streams that someone else recorded:
//!
//! - `recorded`: the streams of Anthropic's published API reference (thinking with its
//!   signature, redacted thinking, interleaved thinking with tool calls,
//!   `input_json_delta`, an `overloaded_error` event, 529 and 429 answers), replayed byte
//!   for byte by a local server ([`replay`]) that keeps the request bodies we send;
//! - `fakellm`: fakellm's Anthropic format (scripted replies over a multi-turn
//!   conversation), from PyPI (`scripts/setup-openai-mocks`);
//! - `litellm`: LiteLLM's proxy serving `/v1/messages` in front of an OpenAI-compatible
//!   backend, from PyPI (`scripts/setup-litellm`), and what it translates;
//! - `sdk`: the request bodies we send, validated by Anthropic's official Python SDK's
//!   published types (`scripts/setup-litellm`);
//! - `resume`: a thinking tool loop interrupted in one process and resumed in another,
//!   its thinking blocks sent back byte for byte (this binary starts itself as the
//!   worker processes);
//! - `mcp`: an MCP server's image reaching Claude as an image in the tool result.
//!
//! A server that cannot start fails the test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fakellm;
mod litellm;
mod mcp;
mod recorded;
mod replay;
mod resume;
mod sdk;
mod servers;

use std::convert::Infallible;

use futures::StreamExt;
use serde_json::{Value, json};
use tower_adk::providers::anthropic::{AnthropicError, AnthropicModel, AnthropicModelBuilder};
use tower_adk::{
    Agent, AgentError, AgentEvent, AgentRequest, AgentResult, Tool, ToolInfo, ToolOutput,
    ToolRequest,
};

/// The model name the tests configure: usage is reported under it.
const MODEL: &str = "claude-test";

/// A model builder for a server at `base_url`.
fn builder(base_url: &str) -> AnthropicModelBuilder {
    AnthropicModel::builder()
        .base_url(base_url)
        .api_key("sk-ant-test")
        .model(MODEL)
}

/// The calculator of Anthropic's interleaved thinking example: evaluates `a * b`.
fn calculator() -> Tool {
    Tool::from_fn(
        ToolInfo::new("calculator", "Perform mathematical calculations").parameters(json!({
            "type": "object",
            "properties": {"expression": {"type": "string", "description": "Mathematical expression to evaluate"}},
            "required": ["expression"]
        })),
        |req: ToolRequest| async move {
            let expression = req.arguments["expression"].as_str().unwrap_or_default();
            let product: i64 = (expression.split('*'))
                .map(|n| n.trim().parse::<i64>().unwrap_or(0))
                .product();
            Ok::<_, Infallible>(ToolOutput::new(product.to_string()))
        },
    )
}

/// The database of the same example: the average monthly revenue.
fn database() -> Tool {
    Tool::from_fn(
        ToolInfo::new("database_query", "Query product database").parameters(json!({
            "type": "object",
            "properties": {"query": {"type": "string", "description": "SQL query to execute"}},
            "required": ["query"]
        })),
        |_: ToolRequest| async move { Ok::<_, Infallible>(ToolOutput::new("5200")) },
    )
}

/// The weather tool of Anthropic's streaming example.
fn weather() -> Tool {
    Tool::from_fn(
        ToolInfo::new("get_weather", "Get the current weather in a given location").parameters(
            json!({
                "type": "object",
                "properties": {"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}},
                "required": ["location"]
            }),
        ),
        |req: ToolRequest| async move {
            let location = req.arguments["location"].as_str().unwrap_or("?").to_owned();
            Ok::<_, Infallible>(ToolOutput::new(format!("15C and foggy in {location}")))
        },
    )
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

/// The `AnthropicError` a failed run ended with.
fn anthropic_error(error: &AgentError) -> &AnthropicError {
    AnthropicError::find(error).unwrap_or_else(|| panic!("not an AnthropicError: {error:?}"))
}

/// The reasoning the model streamed during a run.
fn streamed_reasoning(events: &[AgentEvent]) -> String {
    (events.iter())
        .filter_map(|event| match event {
            AgentEvent::ReasoningDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The blocks of a request body's message `at`.
fn blocks(body: &Value, at: usize) -> Vec<Value> {
    match &body["messages"][at]["content"] {
        Value::Array(blocks) => blocks.clone(),
        text => vec![json!({"type": "text", "text": text})],
    }
}

/// The thinking blocks of a request body, in order.
fn thinking_blocks(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().unwrap();
    (0..messages.len())
        .flat_map(|at| blocks(body, at))
        .filter(|b| matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
        .collect()
}
