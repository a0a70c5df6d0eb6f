//! The MCP server of one connection: rmcp's [`ServerHandler`], which lists and calls
//! the exposed tools for the connection's (or the HTTP request's) caller.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};

use super::caller::Callers;
use super::direct_call::DirectCall;
use super::listing;
use super::outcome;
use super::progress::{Progress, Streamed, follow};
use super::resume::ResumeArguments;
use super::{Exposed, agent_call};
use crate::auth::Identity;
use crate::server::ServedAgent;

/// Serves one connection's requests.
#[derive(Debug, Clone)]
pub(crate) struct FaceHandler {
    pub(crate) exposed: Arc<Exposed>,
    pub(crate) callers: Callers,
}

impl ServerHandler for FaceHandler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        let mut info =
            ServerConfig::new(capabilities).with_server_info(self.exposed.implementation.clone());
        if let Some(instructions) = &self.exposed.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.callers.of(&context)?;
        let tools = listing::tools_for(&self.exposed, &caller).await;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.callers.of(&context)?;
        let progress = Progress::of(&context);
        // A client's `notifications/cancelled` drops the run, which cancels what it does.
        let call = self.call(request, caller, progress);
        tokio::select! {
            result = call => result.map(CallToolResponse::from),
            () = context.ct.cancelled() => Err(ErrorData::internal_error("the call was cancelled", None)),
        }
    }
}

impl FaceHandler {
    /// Dispatches on the tool's name: an agent, the resume tool, or one of the
    /// agent's tools (the run decides whether this caller has it).
    async fn call(
        &self,
        request: CallToolRequestParams,
        caller: Identity,
        progress: Option<Progress>,
    ) -> Result<CallToolResult, ErrorData> {
        let exposed = &self.exposed;
        let name = request.name.as_ref();
        let resume_tool = exposed.resume_tool.as_str();
        if let Some(agent) = exposed.agents.get(name) {
            let arguments = request.arguments;
            return Ok(
                agent_call::call(agent, name, resume_tool, arguments, caller, progress).await,
            );
        }
        if let Some(agent) = &exposed.tools
            && (name != resume_tool || agent.agent().config().tool(name).is_some())
        {
            let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
            let request = DirectCall::request(name, arguments, caller);
            return direct(agent, request, name, resume_tool, progress).await;
        }
        if name == resume_tool {
            return self.resume(request, caller, progress).await;
        }
        Err(outcome::unknown_tool(name))
    }

    /// The resume tool: the run of the named tool goes on from its checkpoint.
    async fn resume(
        &self,
        request: CallToolRequestParams,
        caller: Identity,
        progress: Option<Progress>,
    ) -> Result<CallToolResult, ErrorData> {
        let exposed = &self.exposed;
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let arguments: ResumeArguments = match serde_json::from_value(arguments) {
            Ok(arguments) => arguments,
            Err(error) => return Ok(outcome::invalid_arguments(error.to_string())),
        };
        let tool = arguments.tool.clone();
        let resumed = match arguments.into_request() {
            Ok(resumed) => resumed.with_identity(caller),
            Err(message) => return Ok(outcome::invalid_arguments(message)),
        };
        let resume_tool = exposed.resume_tool.as_str();
        if let Some(agent) = exposed.agents.get(&tool) {
            return Ok(agent_call::run(agent, resumed, &tool, resume_tool, progress).await);
        }
        match &exposed.tools {
            Some(agent) => {
                let resumed = resumed.with_handler(DirectCall::resumed(&tool));
                direct(agent, resumed, &tool, resume_tool, progress).await
            }
            None => Err(outcome::unknown_tool(&tool)),
        }
    }
}

/// Runs a direct call of one of the agent's tools and answers with its output.
async fn direct(
    agent: &ServedAgent,
    request: crate::agent::AgentRequest,
    tool: &str,
    resume_tool: &str,
    progress: Option<Progress>,
) -> Result<CallToolResult, ErrorData> {
    let run = match agent.call(request).await {
        Ok(run) => run,
        Err(error) => return Ok(outcome::failed(error.error())),
    };
    match follow(run, Streamed::ToolChunks, progress).await {
        Ok(result) => outcome::tool_answer(&result, tool, resume_tool),
        Err(error) => Ok(outcome::run_failed(&error)),
    }
}
