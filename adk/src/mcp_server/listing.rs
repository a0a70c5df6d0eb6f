//! `tools/list`: the tools a caller sees, each agent's one tool, the tools the caller's
//! runs of the exposed agent have (its role filter decides), and the resume tool.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool as McpTool};

use super::Exposed;
use super::{agent_call, resume};
use crate::auth::Identity;
use crate::tool::ToolInfo;

/// The tools `caller` sees, in order: the agents, the agent's tools, the resume tool.
/// When the exposed agent's hooks fail (or would interrupt) for the caller, none of its
/// tools are listed.
pub(crate) async fn tools_for(exposed: &Exposed, caller: &Identity) -> Vec<McpTool> {
    let mut tools: Vec<McpTool> = exposed
        .agents
        .iter()
        .map(|(name, agent)| {
            let description = match agent.about() {
                "" => format!("Asks the agent `{name}`; answers with its reply."),
                about => about.to_owned(),
            };
            McpTool::new(name.clone(), description, agent_call::input_schema())
        })
        .collect();
    if let Some(agent) = &exposed.tools
        && let Ok(infos) = agent.tools_for(caller).await
    {
        let shadowed = |info: &&Arc<ToolInfo>| exposed.agents.contains_key(&info.name);
        tools.extend(infos.iter().filter(|i| !shadowed(i)).map(|i| tool_of(i)));
    }
    let resume = &exposed.resume_tool;
    if !tools.iter().any(|t| t.name == resume.as_str()) {
        tools.push(McpTool::new(
            resume.clone(),
            resume::DESCRIPTION,
            resume::input_schema(),
        ));
    }
    tools
}

/// One of the agent's tools as an MCP tool: its name, description and JSON Schema (an
/// object schema, as MCP asks; a tool without one takes any object).
fn tool_of(info: &ToolInfo) -> McpTool {
    let schema: JsonObject = match &info.parameters {
        serde_json::Value::Object(schema) => schema.clone(),
        _ => JsonObject::from_iter([("type".to_owned(), "object".into())]),
    };
    McpTool::new(
        info.name.clone(),
        info.description.clone(),
        Arc::new(schema),
    )
}
