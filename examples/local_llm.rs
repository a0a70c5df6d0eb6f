//! An agent on a real model running on this machine: SmolLM2-135M-Instruct served by
//! llama-cpp-python's OpenAI-compatible server.
//!
//! ```text
//! scripts/setup-local-llm                                  # builds once, then serves on :8080
//! cargo run --features openai --example local_llm          # in another shell
//! ```
//!
//! `OPENAI_BASE_URL` (default `http://127.0.0.1:8080/v1`), `OPENAI_MODEL` (default
//! `smollm2`) and `OPENAI_API_KEY` point it at another server.
//!
//! The model is tiny (135M parameters): it is held to the `weather` tool with a named
//! `tool_choice` on its first call (the only way this server streams tool calls), and
//! offered no tools once the result is in, so it answers in text. Its words are not
//! worth much; that every piece arrives where it should is the point.

mod common;

use std::error::Error;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::json;
use tower_adk::handlers::wrap_model;
use tower_adk::model::{ModelOptions, ToolChoice, UsageMeter};
use tower_adk::providers::openai::OpenAiModelBuilder;
use tower_adk::{Agent, AgentRequest, Message, Tool, ToolInfo, ToolOutput, ToolRequest};

fn weather() -> Tool {
    Tool::from_fn(
        ToolInfo::new("weather", "Current weather in a city").parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        })),
        |req: ToolRequest| async move {
            let city = req.arguments["city"].as_str().unwrap_or("?").to_owned();
            Ok::<_, std::convert::Infallible>(ToolOutput::new(format!("21C and sunny in {city}")))
        },
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let env = |name, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_owned());
    let model = OpenAiModelBuilder::from_env()
        .base_url(env("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"))
        .model(env("OPENAI_MODEL", "smollm2"))
        .build()?;
    println!("model {} at {}", model.model_name(), model.endpoint());

    let mut options = ModelOptions::default();
    options.tool_choice = ToolChoice::Tool("weather".into());
    options.temperature = Some(0.2);
    options.max_tokens = Some(64);
    let agent = Agent::builder(model)
        .instruction("You are a helpful assistant. Answer in one sentence.")
        .tool(weather())
        .model_options(options)
        .max_iterations(3)
        .build()?;

    // Once the tool's result is in, offer no tools: the model answers in text.
    let answer_in_text = wrap_model(|mut request, next| async move {
        if matches!(request.messages.last(), Some(Message::Tool { .. })) {
            request.tools = Arc::from([]);
        }
        next.run(request).await
    });
    let usage = UsageMeter::new();
    let request = AgentRequest::user("What is the weather in Paris?")
        .with_handler(answer_in_text)
        .with_extension(usage.clone());
    let mut run = agent.run(request);
    while let Some(event) = run.next().await {
        if common::print_event(&event?) {
            break;
        }
    }
    match usage.calls() {
        0 => println!("  (the server reported no token usage for its streams)"),
        calls => println!("  {calls} call(s) reported {:?}", usage.total()),
    }
    Ok(())
}
