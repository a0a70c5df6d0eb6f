//! An agent called as one MCP tool: `{"message": "...", "thread": "..."?}` in, the
//! run's final text out.

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject};
use serde::Deserialize;
use serde_json::json;

use super::outcome;
use super::progress::{Progress, Streamed, follow};
use crate::agent::{AgentRequest, check_thread};
use crate::auth::Identity;
use crate::server::ServedAgent;

/// The arguments of an agent's tool.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    message: String,
    #[serde(default)]
    thread: Option<String>,
}

/// The JSON Schema of an agent's tool.
pub(crate) fn input_schema() -> Arc<JsonObject> {
    let schema = json!({
        "type": "object",
        "properties": {
            "message": {"type": "string", "description": "What to ask the agent."},
            "thread": {
                "type": "string",
                "description": "A conversation to continue: the same thread in a later call \
                                keeps the history (1 to 256 characters). Without it, the call \
                                starts afresh."
            }
        },
        "required": ["message"],
        "additionalProperties": false
    });
    match schema {
        serde_json::Value::Object(object) => Arc::new(object),
        _ => Arc::default(),
    }
}

/// Runs `agent` for `caller` with the call's arguments and answers with its final text.
pub(crate) async fn call(
    agent: &ServedAgent,
    tool: &str,
    resume_tool: &str,
    arguments: Option<JsonObject>,
    caller: Identity,
    progress: Option<Progress>,
) -> CallToolResult {
    let arguments = serde_json::Value::Object(arguments.unwrap_or_default());
    let arguments: Arguments = match serde_json::from_value(arguments) {
        Ok(arguments) => arguments,
        Err(error) => {
            return outcome::invalid_arguments(format!(
                "`{tool}` takes {{\"message\": \"...\", \"thread\": \"...\"}} (thread optional): {error}"
            ));
        }
    };
    let mut request = AgentRequest::user(arguments.message);
    if let Some(thread) = arguments.thread {
        if let Err(error) = check_thread(&thread) {
            return outcome::invalid_arguments(error.to_string());
        }
        request = request.on_thread(thread);
    }
    run(
        agent,
        request.with_identity(caller),
        tool,
        resume_tool,
        progress,
    )
    .await
}

/// Runs a request (a new run, or a resume) and answers with its final text.
pub(crate) async fn run(
    agent: &ServedAgent,
    request: AgentRequest,
    tool: &str,
    resume_tool: &str,
    progress: Option<Progress>,
) -> CallToolResult {
    let run = match agent.call(request).await {
        Ok(run) => run,
        Err(error) => return outcome::failed(error.error()),
    };
    match follow(run, Streamed::Text, progress).await {
        Ok(result) => outcome::agent_answer(&result, tool, resume_tool),
        Err(error) => outcome::run_failed(&error),
    }
}
