//! [`AgentFile`]: an agent file, read and checked. [`FileReader`](super::FileReader)
//! reads it (reader.rs); [`load`](AgentFile::load) puts its agent together (load.rs).

use std::fmt;
use std::sync::Arc;

use super::spec::Spec;

/// An agent file, read and checked: what it describes, ready to be
/// [loaded](AgentFile::load).
///
/// # Example
///
/// ```
/// use tower_adk::file::AgentFile;
///
/// let file = AgentFile::from_str("name: greeter\nmodel: {provider: scripted, turns: [{text: Hi!}]}\n", "greeter.yaml")?;
/// assert_eq!(file.name(), "greeter");
/// # Ok::<_, tower_adk::file::FileErrors>(())
/// ```
pub struct AgentFile {
    pub(super) file: String,
    pub(super) text: Arc<str>,
    pub(super) spec: Spec,
}

impl AgentFile {
    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// What the agent does.
    pub fn description(&self) -> &str {
        &self.spec.description
    }

    /// The file's name, as given when it was read.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The names of the MCP servers that [`load`](AgentFile::load) connects to.
    pub fn mcp_servers(&self) -> impl Iterator<Item = &str> {
        self.spec
            .mcp_servers
            .iter()
            .map(|server| server.name.as_str())
    }

    /// The names of the remote A2A agents that [`load`](AgentFile::load) connects to,
    /// each a tool of the agent.
    pub fn remote_agents(&self) -> impl Iterator<Item = &str> {
        self.spec
            .remote_agents
            .iter()
            .map(|agent| agent.name.value.as_str())
    }
}

impl fmt::Debug for AgentFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentFile")
            .field("file", &self.file)
            .field("name", &self.spec.name)
            .finish_non_exhaustive()
    }
}
