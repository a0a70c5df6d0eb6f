//! The parsers of the server's request bodies, as its routes run them but without a
//! socket, for the fuzz targets of `fuzz/` (see `fuzz/fuzz_targets/server_bodies.rs`).
//!
//! Hidden from the docs and not part of the API: they may change in any release. Each
//! gives the [`AgentRequest`] the route would start, or the [`ApiError`] it would answer
//! with; neither panics, whatever the bytes.

use super::agui::RunAgentInput;
use super::body::RunBody;
use super::error::ApiError;
use super::openai::ChatRequest;
use crate::agent::AgentRequest;

/// A body of `POST /agents/{name}/runs`: a run (`input` or `messages`, with an optional
/// `thread`) or a resume.
pub fn runs_body(body: &[u8]) -> Result<AgentRequest, ApiError> {
    RunBody::parse(body)?.into_request()
}

/// A body of `POST /agents/{name}/agui`: AG-UI's `RunAgentInput`, a run or a resume.
pub fn agui_body(body: &[u8]) -> Result<AgentRequest, ApiError> {
    RunAgentInput::parse(body)?.into_request()
}

/// A body of `POST /v1/chat/completions`. (The route answers its refusals in the OpenAI
/// error shape, with the same status and code.)
pub fn chat_body(body: &[u8]) -> Result<AgentRequest, ApiError> {
    ChatRequest::parse(body)?.to_agent_request()
}
