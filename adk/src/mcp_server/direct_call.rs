//! One of an agent's tools called directly by an MCP client: a run of the agent in which
//! a stand-in for the model makes exactly that call, so that everything the agent's
//! runs go through holds for it too.
//!
//! The run's `before_agent` hooks decide the tools of this caller (a role filter), the
//! loop refuses a call outside them ("unknown tool", never executed) and checks the
//! arguments against the tool's schema, and the tool wrappers (policies, approvals,
//! timeouts, output limits) wrap the call. The call returns directly, so the run ends
//! with it; a call that fails or is refused gets one more model turn, which the stand-in
//! answers with nothing.

use std::borrow::Cow;

use tower::BoxError;

use crate::agent::AgentRequest;
use crate::auth::Identity;
use crate::config::AgentConfig;
use crate::context::RunContext;
use crate::handler::{Handler, ModelNext};
use crate::message::{Message, ToolCall};
use crate::model::{ModelRequest, ModelResponse};

/// The call id of a direct call: the only call of its run.
const CALL_ID: &str = "mcp-call";

/// The innermost handler of a direct call's run: makes `tool` return directly and plays
/// the model, which is never called.
#[derive(Debug, Clone)]
pub(crate) struct DirectCall {
    tool: String,
    /// The arguments to call with; `None` on a resume, whose call is in its checkpoint.
    arguments: Option<serde_json::Value>,
}

impl DirectCall {
    /// The request of a run that calls `tool` with `arguments` for `caller`.
    pub(crate) fn request(
        tool: &str,
        arguments: serde_json::Value,
        caller: Identity,
    ) -> AgentRequest {
        let handler = DirectCall {
            tool: tool.to_owned(),
            arguments: Some(arguments),
        };
        AgentRequest::user(format!("An MCP client calls the tool `{tool}`."))
            .with_identity(caller)
            .with_handler(handler)
    }

    /// The handler to add to a request that resumes a direct call of `tool`.
    pub(crate) fn resumed(tool: &str) -> Self {
        DirectCall {
            tool: tool.to_owned(),
            arguments: None,
        }
    }
}

impl Handler for DirectCall {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("mcp_server::DirectCall")
    }

    async fn before_agent(
        &self,
        _cx: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        // Only a tool this run has can return directly; a call of another one is the
        // loop's to refuse.
        if config.tool(&self.tool).is_some() {
            config.set_return_directly(self.tool.clone(), true);
        }
        Ok(config)
    }

    async fn wrap_model(
        &self,
        request: ModelRequest,
        _next: ModelNext,
    ) -> Result<ModelResponse, BoxError> {
        let called = request
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { .. }));
        let reply = match (&self.arguments, called) {
            (Some(arguments), false) => {
                let call = ToolCall::new(CALL_ID, self.tool.as_str(), arguments.clone());
                Message::assistant_with_calls("", vec![call])
            }
            // After the call (it failed, was refused, or was decided on): the run ends.
            _ => Message::assistant(""),
        };
        Ok(ModelResponse::message(reply))
    }
}
