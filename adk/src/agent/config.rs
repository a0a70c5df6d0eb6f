use std::collections::BTreeSet;
use std::sync::Arc;

use crate::Tool;

use super::compile::LoopKey;
use super::executor::{SharedExecutor, ToolExecutor};

/// What a run is configured with: the instruction, the tools, and which tools end the
/// run with their result.
///
/// Every run starts from the agent's configuration; [`Handler::before_agent`](crate::Handler::before_agent)
/// hooks rewrite it for that run only. The tools the model is shown and the tools that can
/// execute come from this same value, so a tool removed here can neither be seen nor
/// called in the run.
///
/// Cloning is cheap: the tool list and the return-directly set are shared until changed.
///
/// # Example
///
/// ```
/// use tower_adk::{AgentConfig, Tool, ToolInfo, ToolOutput};
///
/// let noop = |name: &str| Tool::from_fn(ToolInfo::new(name, "does nothing"), |_| async {
///     Ok::<_, std::convert::Infallible>(ToolOutput::new(""))
/// });
/// let mut config = AgentConfig::new("You are terse.");
/// config.add_tool(noop("search"));
/// config.add_tool(noop("delete"));
/// config.retain_tools(|tool| tool.name() != "delete");
/// config.set_return_directly("search", true);
///
/// assert_eq!(config.tool_names().collect::<Vec<_>>(), ["search"]);
/// assert!(config.is_return_directly("search"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct AgentConfig {
    instruction: Arc<str>,
    tools: Arc<Vec<Tool>>,
    return_directly: Arc<BTreeSet<String>>,
    executor: Option<SharedExecutor>,
}

impl AgentConfig {
    /// A configuration with this instruction, no tools and no return-directly tools.
    pub fn new(instruction: impl Into<Arc<str>>) -> Self {
        AgentConfig {
            instruction: instruction.into(),
            ..AgentConfig::default()
        }
    }

    /// The instruction, sent as the first (system) message; empty means none.
    pub fn instruction(&self) -> &str {
        &self.instruction
    }

    /// Replaces the instruction.
    pub fn set_instruction(&mut self, instruction: impl Into<Arc<str>>) {
        self.instruction = instruction.into();
    }

    /// The tools of the run.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tools of the run, mutably (copied first if shared). A run whose list holds two
    /// tools with the same name fails with [`AgentError::DuplicateTool`](crate::AgentError::DuplicateTool).
    pub fn tools_mut(&mut self) -> &mut Vec<Tool> {
        Arc::make_mut(&mut self.tools)
    }

    /// The names of the tools, in order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(Tool::name)
    }

    /// The tool with this name.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// Adds a tool, replacing any tool with the same name.
    pub fn add_tool(&mut self, tool: Tool) {
        let tools = self.tools_mut();
        match tools.iter_mut().find(|t| t.name() == tool.name()) {
            Some(existing) => *existing = tool,
            None => tools.push(tool),
        }
    }

    /// Removes the tool with this name and returns it.
    pub fn remove_tool(&mut self, name: &str) -> Option<Tool> {
        let index = self.tools.iter().position(|t| t.name() == name)?;
        Some(self.tools_mut().remove(index))
    }

    /// Keeps only the tools for which `keep` returns `true`. The list is copied only if a
    /// tool is actually removed.
    pub fn retain_tools(&mut self, mut keep: impl FnMut(&Tool) -> bool) {
        let Some(first_removed) = self.tools.iter().position(|t| !keep(t)) else {
            return;
        };
        // `keep` has seen the tools up to `first_removed`; ask it about the rest only.
        let mut index = 0;
        self.tools_mut().retain(|tool| {
            let at = index;
            index += 1;
            at < first_removed || (at > first_removed && keep(tool))
        });
    }

    /// The names of the tools whose result ends the run.
    pub fn return_directly(&self) -> &BTreeSet<String> {
        &self.return_directly
    }

    /// Whether a call of this tool ends the run with its result.
    pub fn is_return_directly(&self, name: &str) -> bool {
        self.return_directly.contains(name)
    }

    /// Makes a call of `name` end the run with its result, or not.
    pub fn set_return_directly(&mut self, name: impl Into<String>, on: bool) {
        let name = name.into();
        if self.return_directly.contains(&name) != on {
            let set = Arc::make_mut(&mut self.return_directly);
            if on {
                set.insert(name);
            } else {
                set.remove(&name);
            }
        }
    }

    /// Installs an executor for the run's batches of tool calls; see [`ToolExecutor`].
    pub fn set_executor(&mut self, executor: impl ToolExecutor) {
        self.executor = Some(SharedExecutor(Arc::new(executor)));
    }

    /// Removes the installed executor: the default one runs the calls.
    pub fn clear_executor(&mut self) {
        self.executor = None;
    }

    /// Whether an executor is installed.
    pub fn has_executor(&self) -> bool {
        self.executor.is_some()
    }

    pub(crate) fn executor(&self) -> Option<&SharedExecutor> {
        self.executor.as_ref()
    }

    pub(crate) fn key(&self) -> LoopKey {
        let tools = !self.tools.is_empty();
        let return_directly = tools && self.tools.iter().any(|t| self.is_return_directly(t.name()));
        LoopKey {
            tools,
            return_directly,
        }
    }

    /// Whether the tool list is still the one `other` holds (not copied or changed).
    pub(crate) fn shares_tools_with(&self, other: &AgentConfig) -> bool {
        Arc::ptr_eq(&self.tools, &other.tools)
    }

    /// The first name held by two tools.
    pub(crate) fn duplicate_tool(&self) -> Option<&str> {
        let mut seen = std::collections::HashSet::with_capacity(self.tools.len());
        self.tools
            .iter()
            .map(Tool::name)
            .find(|name| !seen.insert(*name))
    }
}
