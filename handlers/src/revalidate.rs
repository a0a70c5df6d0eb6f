//! Re-checking arguments that a handler changed, against the called tool's schema.

use adk::{ToolError, ToolRequest};
use serde_json::Value;

/// Checks `arguments` against the schema of the tool `request` calls; `changed_by` names
/// who changed them (e.g. "the policy"), for the model.
///
/// The core validates the model's arguments before any wrapper runs; arguments changed
/// after that are checked here again, so a rewrite cannot smuggle in what the schema
/// forbids. A request made outside a run (no tool attached) is not checked, nor is any
/// request without the `validation` feature.
pub(crate) fn revalidate(
    request: &ToolRequest,
    arguments: &Value,
    changed_by: &str,
) -> Result<(), ToolError> {
    #[cfg(not(feature = "validation"))]
    let _ = (request, arguments, changed_by);
    #[cfg(feature = "validation")]
    if let Some(tool) = request.tool() {
        return tool.validate(arguments).map_err(|error| {
            ToolError::new(
                error.kind(),
                format!(
                    "the arguments as changed by {changed_by} are invalid: {}",
                    error.message()
                ),
            )
        });
    }
    Ok(())
}
