//! The `read_tool_result` tool: an offloaded result, read back from the run's store.

use adk::{Tool, ToolError, ToolInfo, ToolOutput, ToolRequest};
use serde_json::json;

use super::{READ_TOOL, STORE_KEY};

/// The tool, reading the run-local store of offloaded results.
pub(super) fn tool() -> Tool {
    let info = ToolInfo::new(
        READ_TOOL,
        "Reads again the full text of an earlier tool result that was offloaded from the \
         conversation, by the id given in its place.",
    )
    .parameters(json!({
        "type": "object",
        "properties": {"id": {"type": "string", "description": "The id of the offloaded result"}},
        "required": ["id"]
    }));
    Tool::from_fn(info, |request: ToolRequest| async move {
        let id = request.arguments["id"].as_str().unwrap_or_default();
        let locals = request.locals();
        let text = (locals.get_value(STORE_KEY))
            .and_then(|store| store.get(id))
            .and_then(|text| text.as_str());
        match text {
            Some(text) => Ok(ToolOutput::new(text)),
            None => Err(ToolError::invalid_arguments(format!(
                "no offloaded result has the id `{id}`"
            ))),
        }
    })
}
