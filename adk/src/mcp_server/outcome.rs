//! What an MCP client reads of a run: the answer, a tool's output, a failure, or an
//! interrupt with how to resume it.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::agent::{AgentError, AgentResult, RunStatus};
use crate::content::{Part, Source};
use crate::tool::{ToolErrorKind, ToolRecord};
use crate::wire::WireError;

/// The answer of an agent called as a tool: its final message's text; an interrupted
/// run's [interrupt result](interrupted).
pub(crate) fn agent_answer(result: &AgentResult, tool: &str, resume_tool: &str) -> CallToolResult {
    if result.status == RunStatus::Interrupted {
        return interrupted(result, tool, resume_tool);
    }
    text_result(result.final_message.content(), false)
}

/// The result of one of the agent's tools called directly: its output (text, then its
/// images and files), or its failure as an `isError` result; an interrupted call's
/// [interrupt result](interrupted). A call of a tool this caller's run does not have
/// (unknown, or filtered out for the caller: the two are not told apart) is a JSON-RPC
/// error, "invalid params", as the MCP spec answers an unknown tool.
pub(crate) fn tool_answer(
    result: &AgentResult,
    tool: &str,
    resume_tool: &str,
) -> Result<CallToolResult, ErrorData> {
    if result.status == RunStatus::Interrupted {
        return Ok(interrupted(result, tool, resume_tool));
    }
    let record = result.tool_records.iter().rev().find(|r| r.name == tool);
    let Some(record) = record else {
        return Err(unknown_tool(tool));
    };
    match &record.error {
        Some(error) if error.kind() == ToolErrorKind::UnknownTool => Err(unknown_tool(tool)),
        Some(_) => Ok(text_result(&record.content, true)),
        None => Ok(output(record)),
    }
}

/// The JSON-RPC error for a tool the caller has not got.
pub(crate) fn unknown_tool(tool: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown tool `{tool}`"), None)
}

/// A run that failed (or could not start), as an `isError` result carrying the failure's
/// code and message.
pub(crate) fn run_failed(error: &AgentError) -> CallToolResult {
    failed(&WireError::from(error))
}

/// A failure with a code, as an `isError` result: its message as text, the code and
/// message as structured content.
pub(crate) fn failed(error: &WireError) -> CallToolResult {
    let mut result = text_result(&error.message, true);
    result.structured_content =
        Some(json!({"error": {"code": error.code, "message": error.message}}));
    result
}

/// Arguments that do not fit a tool's schema, as an `isError` result (so that the
/// model behind the client can correct itself, as the MCP spec asks of input errors).
pub(crate) fn invalid_arguments(message: impl Into<String>) -> CallToolResult {
    failed(&WireError::new("invalid_arguments", message.into()))
}

/// A run stopped for decisions: an `isError` result (the call has not done its work, so
/// a client that reads only `isError` does not take it as done), whose text says what
/// waits and how to go on, and whose structured content is
/// `{"status": "interrupted", "interrupts": [{"id", "call"?, "payload"}], "resume": {"tool", "arguments"}}`:
/// the call to make, with every interrupt approved (change the decisions as needed).
pub(crate) fn interrupted(result: &AgentResult, tool: &str, resume_tool: &str) -> CallToolResult {
    let checkpoint = result.checkpoint.as_ref().map(ToString::to_string);
    let decisions: serde_json::Map<String, Value> = result
        .interrupts
        .iter()
        .map(|i| (i.id.clone(), json!({"type": "approve"})))
        .collect();
    let resume = json!({
        "tool": resume_tool,
        "arguments": {"tool": tool, "checkpoint": checkpoint, "decisions": decisions},
    });
    let structured = json!({
        "status": "interrupted",
        "interrupts": result.interrupts,
        "resume": resume,
    });
    let waiting: Vec<String> = result
        .interrupts
        .iter()
        .map(|i| match &i.call {
            Some(call) => format!("- `{}`: the call of `{}`: {}", i.id, call.name, i.payload),
            None => format!("- `{}`: {}", i.id, i.payload),
        })
        .collect();
    let text = format!(
        "Not done: the run waits for a decision on:\n{}\nTo go on, call the tool `{resume_tool}` \
         with {} (each decision is approve, edit with `arguments`, reject with a `reason`, or \
         respond with an `answer`).",
        waiting.join("\n"),
        resume["arguments"],
    );
    let mut answer = text_result(&text, true);
    answer.structured_content = Some(structured);
    answer
}

/// A tool's output: its text, then its images (and files, named) as content blocks.
fn output(record: &ToolRecord) -> CallToolResult {
    let mut content = vec![ContentBlock::text(record.content.clone())];
    content.extend(record.parts.iter().filter_map(block_of));
    CallToolResult::success(content)
}

/// An image the tool returned inline, as an image block; a file or an image at a URL
/// as a text naming it (MCP's blocks carry images as base64).
fn block_of(part: &Part) -> Option<ContentBlock> {
    match part {
        Part::Image(Source::Base64 { media_type, data }) => {
            Some(ContentBlock::image(data.clone(), media_type.clone()))
        }
        other => other.placeholder().map(ContentBlock::text),
    }
}

fn text_result(text: &str, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(text)];
    if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}
