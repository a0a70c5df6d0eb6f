//! Plan and execute, both replaced at once.
//!
//! - The *planner* is a `wrap_model` handler. Before the model is asked anything, it
//!   decides: while the user's topics have not been looked up, it answers for the model
//!   with a plan ("execute these calls", one lookup per topic, each with a purpose);
//!   once the results are in, it lets the model respond.
//! - The *executor* is a `ToolExecutor` installed by a handler: it runs the plan's calls
//!   one at a time, in order, answers repeated lookups from a cache instead of calling
//!   the tool again, and records each call's purpose.
//!
//! Remove the handlers and the agent is back to a plain ReAct loop.
//!
//! ```text
//! cargo run --example plan_execute
//! ```

mod common;

use std::collections::HashMap;
use std::sync::Mutex;

use futures::StreamExt;
use serde_json::json;
use tower_adk::agent::{ToolBatch, ToolExecutor};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentConfig, AgentEvent, AgentRequest, BoxError, Handler, Message, ModelNext,
    ModelRequest, ModelResponse, RunContext, Tool, ToolCall, ToolInfo, ToolOutput, ToolRecord,
    ToolRequest,
};

/// Plans one lookup per topic named in the user's message, then lets the model respond.
struct TopicPlanner;

impl Handler for TopicPlanner {
    async fn wrap_model(
        &self,
        request: ModelRequest,
        next: ModelNext,
    ) -> Result<ModelResponse, BoxError> {
        let planned = request
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { .. }));
        if planned {
            return next.run(request).await; // respond
        }
        let question = request
            .messages
            .iter()
            .rev()
            .find(|m| matches!(m, Message::User { .. }));
        let topics: Vec<String> = question
            .map(|m| {
                m.content()
                    .split(',')
                    .map(|t| t.trim().to_lowercase())
                    .collect()
            })
            .unwrap_or_default();
        let calls = topics
            .iter()
            .enumerate()
            .map(|(i, topic)| ToolCall::new(format!("plan_{i}"), "lookup", json!({"topic": topic})))
            .collect();
        println!("  [planner] plan: look up {topics:?}");
        Ok(ModelResponse::message(Message::assistant_with_calls(
            "", calls,
        )))
    }
}

/// Runs calls one by one and answers repeated ones from its cache.
#[derive(Default)]
struct CachingExecutor {
    cache: Mutex<HashMap<String, String>>,
}

impl ToolExecutor for CachingExecutor {
    async fn execute(&self, batch: ToolBatch) -> Result<Vec<ToolRecord>, BoxError> {
        let (calls, executor) = batch.into_parts();
        let mut records = Vec::new();
        for call in calls {
            let purpose = format!("background on {}", call.arguments);
            let cached = self
                .cache
                .lock()
                .map_err(|_| "poisoned")?
                .get(call.arguments.as_str())
                .cloned();
            let record = match cached {
                Some(content) => ToolRecord::success(&call, format!("{content} (cached)")),
                None => {
                    let record = executor.run_one(call.clone()).await?;
                    self.cache
                        .lock()
                        .map_err(|_| "poisoned")?
                        .insert(call.arguments.to_string(), record.content.clone());
                    record
                }
            };
            records.push(record.with_purpose(purpose));
        }
        Ok(records)
    }
}

/// Installs the executor for each run (one cache per run).
struct PlanExecute;

impl Handler for PlanExecute {
    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        config.set_executor(CachingExecutor::default());
        Ok(config)
    }
}

fn lookup() -> Tool {
    Tool::from_fn(
        ToolInfo::new("lookup", "Looks a topic up").parameters(json!({
            "type": "object",
            "properties": {"topic": {"type": "string"}},
            "required": ["topic"]
        })),
        |req: ToolRequest| async move {
            let topic = req.arguments["topic"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            Ok::<_, std::convert::Infallible>(ToolOutput::new(format!("{topic}: 3 articles")))
        },
    )
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // The model is only asked to respond: the planner makes the plan.
    let model = ScriptedModel::new([Turn::text(
        "Tower has 3 articles, and so do Tokio and Serde.",
    )]);
    let agent = Agent::builder(model.clone()).tool(lookup()).build()?;

    let request = AgentRequest::user("tower, tokio, tower, serde")
        .with_handler(TopicPlanner)
        .with_handler(PlanExecute);
    let mut run = agent.run(request);
    while let Some(event) = run.next().await {
        let event = event?;
        common::print_event(&event);
        if let AgentEvent::Completed(result) = &event {
            for record in &result.tool_records {
                let purpose = record.purpose.as_deref().unwrap_or("-");
                println!(
                    "  record {}: {} (purpose: {purpose})",
                    record.call_id, record.content
                );
            }
            println!("\n{}", result.final_message.content());
        }
    }
    println!(
        "\nmodel calls: {} (the planner answered the first one)",
        model.calls()
    );
    Ok(())
}
