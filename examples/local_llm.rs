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
//! With the feature `cassette` it runs from the cassette recorded from that server,
//! `tests/cassettes/smollm2-example.json`, with no server at all; `ADK_CASSETTE_MODE=record`
//! (and the server running) records it again:
//!
//! ```text
//! cargo run --features openai,cassette --example local_llm
//! ```
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
use tower_adk::{
    Agent, AgentRequest, Message, ModelRequest, ModelResponse, Tool, ToolInfo, ToolOutput,
    ToolRequest,
};

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

/// The cassette this example runs from with the feature `cassette`.
#[cfg(feature = "cassette")]
pub(crate) const CASSETTE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/cassettes/smollm2-example.json"
);

/// The agent: held to the `weather` tool on its first call.
pub(crate) fn agent<M>(model: M) -> Result<Agent, Box<dyn Error>>
where
    M: tower::Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
    M::Error: Into<tower_adk::BoxError>,
    M::Future: Send + 'static,
{
    let mut options = ModelOptions::default();
    options.tool_choice = ToolChoice::Tool("weather".into());
    options.temperature = Some(0.2);
    options.max_tokens = Some(64);
    Ok(Agent::builder(model)
        .instruction("You are a helpful assistant. Answer in one sentence.")
        .tool(weather())
        .model_options(options)
        .max_iterations(3)
        .build()?)
}

/// The question, and a handler that offers no tools once the tool's result is in, so
/// the model answers in text.
pub(crate) fn request(usage: &UsageMeter) -> AgentRequest {
    let answer_in_text = wrap_model(|mut request, next| async move {
        if matches!(request.messages.last(), Some(Message::Tool { .. })) {
            request.tools = Arc::from([]);
        }
        next.run(request).await
    });
    AgentRequest::user("What is the weather in Paris?")
        .with_handler(answer_in_text)
        .with_extension(usage.clone())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let env = |name, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_owned());
    let model = OpenAiModelBuilder::from_env()
        .base_url(env("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"))
        .model(env("OPENAI_MODEL", "smollm2"))
        .build()?;
    println!("model {} at {}", model.model_name(), model.endpoint());
    // With the feature `cassette`: from the cassette when it is there (the server is
    // never called), else recorded to it.
    #[cfg(feature = "cassette")]
    let model = {
        use tower::Layer;
        let layer = tower_adk::testing::cassette::Cassette::new(CASSETTE).layer()?;
        match layer.is_replaying() {
            true => println!("replaying {CASSETTE}"),
            false => println!("recording to {CASSETTE}"),
        }
        layer.layer(model)
    };

    let agent = agent(model)?;
    let usage = UsageMeter::new();
    let mut run = agent.run(request(&usage));
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
