//! The resume tool: a run an MCP call left waiting for decisions (an approval) goes on,
//! with the checkpoint and decisions the interrupted call's result named.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::JsonObject;
use serde::Deserialize;
use serde_json::json;

use crate::agent::AgentRequest;
use crate::checkpoint::CheckpointId;
use crate::interrupt::Decision;

/// The resume tool's arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResumeArguments {
    /// The MCP tool whose call was interrupted.
    pub(crate) tool: String,
    checkpoint: String,
    #[serde(default)]
    decisions: BTreeMap<String, Decision>,
}

impl ResumeArguments {
    /// The request that resumes the checkpoint with the decisions, or why the
    /// checkpoint is not one.
    pub(crate) fn into_request(self) -> Result<AgentRequest, String> {
        let checkpoint: CheckpointId = self
            .checkpoint
            .parse()
            .map_err(|error| format!("`checkpoint` is not a checkpoint id: {error}"))?;
        Ok(AgentRequest::resume(checkpoint, self.decisions))
    }
}

/// What the resume tool says of itself.
pub(crate) const DESCRIPTION: &str = "Continues a call that stopped for a decision (an \
    approval): pass the `tool`, `checkpoint` and `decisions` its result gave, each decision \
    {\"type\": \"approve\"}, {\"type\": \"edit\", \"arguments\": {...}}, {\"type\": \"reject\", \
    \"reason\": \"...\"} or {\"type\": \"respond\", \"answer\": ...}.";

/// The resume tool's JSON Schema.
pub(crate) fn input_schema() -> Arc<JsonObject> {
    let decision = json!({
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["approve", "edit", "reject", "respond"]},
            "arguments": {"type": "object"},
            "reason": {"type": "string"},
            "answer": {}
        },
        "required": ["type"]
    });
    let schema = json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "description": "The tool whose call stopped."},
            "checkpoint": {"type": "string", "description": "The checkpoint the stopped call gave."},
            "decisions": {
                "type": "object",
                "description": "A decision per interrupt id.",
                "additionalProperties": decision
            }
        },
        "required": ["tool", "checkpoint", "decisions"],
        "additionalProperties": false
    });
    match schema {
        serde_json::Value::Object(object) => Arc::new(object),
        _ => Arc::default(),
    }
}
