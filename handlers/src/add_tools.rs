//! Add tools to a run.

use std::borrow::Cow;

use adk::{AgentConfig, BoxError, Handler, RunContext, Tool};

/// Adds tools to every run. See [`add_tools`].
#[derive(Debug, Clone)]
pub struct AddTools {
    tools: Vec<Tool>,
}

/// A handler that adds `tools` to every run, replacing run tools of the same name.
///
/// Adding tools to an agent built without any makes its runs use the loop variant with a
/// tools step; the agent compiles that variant once.
///
/// # Example
///
/// ```
/// use tower_adk::testing::text_tool;
///
/// let handler = tower_adk::handlers::add_tools([text_tool("clock", "12:00")]);
/// # let _ = handler;
/// ```
pub fn add_tools(tools: impl IntoIterator<Item = Tool>) -> AddTools {
    AddTools {
        tools: tools.into_iter().collect(),
    }
}

impl Handler for AddTools {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("add_tools")
    }

    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        for tool in &self.tools {
            config.add_tool(tool.clone());
        }
        Ok(config)
    }
}
