//! The file's remote A2A agents: each connected by its card and made a tool.

use adk::Tool;
use adk::a2a::client::{A2aError, RemoteAgent, RemoteAgentTool};

use super::spec::RemoteSpec;

/// Connects to `spec`'s agent and makes it a tool named as the file says.
pub(crate) async fn connect(spec: &RemoteSpec) -> Result<Tool, A2aError> {
    let name = &spec.name.value;
    let mut builder = RemoteAgent::builder(&spec.url).name(name);
    if let Some(token) = &spec.bearer_token {
        builder = builder.bearer_token(token);
    }
    for (key, value) in &spec.headers {
        builder = builder.header(key, value);
    }
    if let Some(timeout) = spec.connect_timeout {
        builder = builder.connect_timeout(timeout);
    }
    if let Some(timeout) = spec.request_timeout {
        builder = builder.request_timeout(timeout);
    }
    if let Some(timeout) = spec.cancel_timeout {
        builder = builder.cancel_timeout(timeout);
    }
    if let Some(streaming) = spec.streaming {
        builder = builder.streaming(streaming);
    }
    let agent = builder.connect().await?;
    let mut tool = RemoteAgentTool::new(agent);
    if let Some(description) = &spec.description {
        tool = tool.description(description);
    }
    Ok(tool.into_tool())
}
