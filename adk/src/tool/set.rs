//! A source of tools, filtered by name.

use crate::error::BuildError;
use crate::tool::Tool;

/// A named source of tools (a group of your own, later an MCP server's tools), filtered
/// with an include list or an exclude list before its tools join an agent.
///
/// # Example
///
/// ```
/// use tower_adk::Agent;
/// use tower_adk::testing::{text_tool, ScriptedModel};
/// use tower_adk::tool::ToolSet;
///
/// let files = ToolSet::new("files", [text_tool("read", ""), text_tool("write", ""), text_tool("delete", "")])
///     .exclude(["delete"]);
/// let agent = Agent::builder(ScriptedModel::default()).tool_set(files).build()?;
/// assert_eq!(agent.config().tool_names().collect::<Vec<_>>(), ["read", "write"]);
///
/// // Both lists at once, or a name the source does not have, is an error when the agent is built.
/// let wrong = ToolSet::new("files", [text_tool("read", "")]).include(["read", "raed"]);
/// let error = Agent::builder(ScriptedModel::default()).tool_set(wrong).build().unwrap_err();
/// assert_eq!(error.to_string(), "tool source `files` has no tool named `raed`");
/// # Ok::<_, tower_adk::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ToolSet {
    name: String,
    tools: Vec<Tool>,
    include: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
}

impl ToolSet {
    /// A source named `name` (used in errors) with these tools.
    pub fn new(name: impl Into<String>, tools: impl IntoIterator<Item = Tool>) -> Self {
        ToolSet {
            name: name.into(),
            tools: tools.into_iter().collect(),
            include: None,
            exclude: None,
        }
    }

    /// Keeps only these tools of the source.
    pub fn include<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.include = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Keeps every tool of the source but these.
    pub fn exclude<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.exclude = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The source's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// This set's include or exclude list over the tools of the source `name`: for a
    /// source whose tools are known only later (an MCP server, once connected).
    #[cfg(feature = "mcp")]
    pub(crate) fn with_tools(self, name: &str, tools: impl IntoIterator<Item = Tool>) -> Self {
        let tools = tools.into_iter().collect();
        ToolSet {
            name: name.to_owned(),
            tools,
            ..self
        }
    }

    /// The include list and the exclude list, as given.
    #[cfg(feature = "mcp")]
    pub(crate) fn lists(&self) -> (&Option<Vec<String>>, &Option<Vec<String>>) {
        (&self.include, &self.exclude)
    }

    /// The tools that pass the filter.
    ///
    /// # Errors
    ///
    /// [`BuildError::IncludeAndExclude`] when both lists are given, and
    /// [`BuildError::UnknownToolInSet`] for the first listed name that the source lacks.
    pub fn into_tools(self) -> Result<Vec<Tool>, BuildError> {
        let (list, keep_listed) = match (self.include, self.exclude) {
            (Some(_), Some(_)) => return Err(BuildError::IncludeAndExclude(self.name)),
            (Some(include), None) => (include, true),
            (None, Some(exclude)) => (exclude, false),
            (None, None) => return Ok(self.tools),
        };
        if let Some(unknown) = list
            .iter()
            .find(|n| !self.tools.iter().any(|t| t.name() == n.as_str()))
        {
            return Err(BuildError::UnknownToolInSet {
                set: self.name,
                tool: unknown.clone(),
            });
        }
        let mut tools = self.tools;
        tools.retain(|t| list.iter().any(|n| n == t.name()) == keep_listed);
        Ok(tools)
    }
}
