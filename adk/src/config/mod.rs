//! [`AgentConfig`]: what a run is configured with (the instruction, the tools, which tools
//! end the run with their result, how its batches of tool calls run), the agent's copy
//! of which each run's `before_agent` hooks rewrite for that run; and the
//! [executor](ToolExecutor) a handler may install in it.
//!
//! (The public paths are `tower_adk::agent::{AgentConfig, ToolExecutor, ...}`: this
//! module sits below the handlers, whose `before_agent` hook rewrites a config, and the
//! loop, which runs one.)

mod executor;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

pub use self::executor::{DefaultExecutor, ToolBatch, ToolExecutor};
pub(crate) use self::executor::{RunCalls, SharedExecutor};
use crate::error::BuildError;
use crate::tool::{self, Tool};

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
    tools: Arc<ToolList>,
    return_directly: Arc<BTreeSet<String>>,
    executor: Option<SharedExecutor>,
}

/// The tools, and how they are found by name. (Behind the config's one pointer: a run
/// holds its config for its whole life, so the config stays small.)
#[derive(Debug, Clone, Default)]
struct ToolList {
    tools: Vec<Tool>,
    catalog: Catalog,
}

impl ToolList {
    /// Marks the indexed tools whose verdict (one per tool of the list, in order) is
    /// `false` as gone; the caller removes them from the list.
    fn unindex(&mut self, verdicts: &[bool]) {
        let Catalog::Indexed { index, kept } = &mut self.catalog else {
            return;
        };
        // The list holds the indexed tools still kept, in the index's order.
        let mut at = 0;
        let now: Arc<[bool]> = (0..index.tools.len())
            .map(|indexed| {
                let held = kept.as_ref().is_none_or(|kept| kept[indexed]);
                at += usize::from(held);
                held && verdicts[at - 1]
            })
            .collect();
        *kept = Some(now);
    }
}

/// What is known of the tool list without looking at it again: whether its names were
/// checked (valid and unique), and an index to find a tool by name without a scan.
///
/// The agent checks and indexes its own list once, when it is built. A run's list that a
/// handler only narrowed (kept or removed tools) keeps both: removing tools cannot make
/// a name invalid or twice, and which of the indexed tools remain is a flag per tool. A
/// list changed any other way is checked when its run starts and searched in order.
#[derive(Debug, Clone, Default)]
enum Catalog {
    /// Not checked, no index.
    #[default]
    Unchecked,
    /// Checked; short enough to scan (a scan of a few names is cheaper than hashing one).
    Checked,
    /// Checked, and indexed: `kept[i]` says whether the indexed list's tool `i` is still
    /// in this list (`None`: all are, this is that list).
    Indexed {
        index: Arc<ToolIndex>,
        kept: Option<Arc<[bool]>>,
    },
}

/// The positions of a checked tool list's tools, by name.
#[derive(Debug)]
struct ToolIndex {
    tools: Vec<Tool>,
    by_name: HashMap<Arc<str>, usize>,
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
        &self.tools.tools
    }

    /// The tools of the run, mutably (copied first if shared). A run whose list holds two
    /// tools with the same name, or a name outside `^[a-zA-Z0-9_-]{1,64}$`, fails when it
    /// starts with [`AgentError::Config`](crate::AgentError::Config).
    pub fn tools_mut(&mut self) -> &mut Vec<Tool> {
        let list = Arc::make_mut(&mut self.tools);
        list.catalog = Catalog::Unchecked;
        &mut list.tools
    }

    /// The names of the tools, in order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools().iter().map(Tool::name)
    }

    /// The tool with this name: found in an index when the list is long and is the
    /// agent's own or was only narrowed since (the common case of a role filter), else
    /// by a scan.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        match &self.tools.catalog {
            Catalog::Indexed { index, kept } => {
                let at = *index.by_name.get(name)?;
                kept.as_ref()
                    .is_none_or(|kept| kept[at])
                    .then(|| &index.tools[at])
            }
            Catalog::Unchecked | Catalog::Checked => self.tools().iter().find(|t| t.name() == name),
        }
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
        let index = self.tools().iter().position(|t| t.name() == name)?;
        let list = Arc::make_mut(&mut self.tools);
        if let Catalog::Indexed { .. } = list.catalog {
            let verdicts: Vec<bool> = (0..list.tools.len()).map(|at| at != index).collect();
            list.unindex(&verdicts);
        }
        Some(list.tools.remove(index))
    }

    /// Keeps only the tools for which `keep` returns `true`. The list is copied only if a
    /// tool is actually removed.
    pub fn retain_tools(&mut self, mut keep: impl FnMut(&Tool) -> bool) {
        let Some(first_removed) = self.tools().iter().position(|t| !keep(t)) else {
            return;
        };
        // `keep` has seen the tools up to `first_removed`; ask it about the rest only.
        let mut at = 0;
        let mut verdict = move |tool: &Tool| {
            at += 1;
            at - 1 < first_removed || (at - 1 > first_removed && keep(tool))
        };
        let list = Arc::make_mut(&mut self.tools);
        if let Catalog::Indexed { .. } = list.catalog {
            let verdicts: Vec<bool> = list.tools.iter().map(verdict).collect();
            list.unindex(&verdicts);
            let mut at = 0;
            list.tools.retain(|_| {
                at += 1;
                verdicts[at - 1]
            });
        } else {
            list.tools.retain(|tool| verdict(tool));
        }
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

    /// Whether one of the run's tools returns directly.
    pub(crate) fn returns_directly(&self) -> bool {
        self.return_directly.iter().any(|n| self.tool(n).is_some())
    }

    /// Whether the tool list is still the one `other` holds (not copied or changed).
    pub(crate) fn shares_tools_with(&self, other: &AgentConfig) -> bool {
        Arc::ptr_eq(&self.tools, &other.tools)
    }

    /// Checks the tools' names (valid, unique) unless they are known to be, and indexes
    /// them: done once for the agent's own list, and for a run's list only when a handler
    /// did more than narrow it.
    pub(crate) fn check_tools(&mut self) -> Result<(), BuildError> {
        if !matches!(self.tools.catalog, Catalog::Unchecked) {
            return Ok(());
        }
        let mut seen = HashSet::with_capacity(self.tools().len());
        for name in self.tool_names() {
            tool::check_name(name)?;
            if !seen.insert(name) {
                return Err(BuildError::DuplicateTool(name.to_owned()));
            }
        }
        Arc::make_mut(&mut self.tools).catalog = Catalog::Checked;
        Ok(())
    }

    /// Checks the tools (see [`check_tools`](Self::check_tools)) and, if there are more
    /// than a few, indexes them by name: for the agent's own list.
    pub(crate) fn index_tools(&mut self) -> Result<(), BuildError> {
        /// Up to this many tools, a scan finds a name faster than a hash.
        const SCANNED: usize = 16;

        self.check_tools()?;
        if self.tools().len() <= SCANNED {
            return Ok(());
        }
        let tools = self.tools().to_vec();
        let by_name = (tools.iter().enumerate())
            .map(|(at, tool)| (Arc::from(tool.name()), at))
            .collect();
        Arc::make_mut(&mut self.tools).catalog = Catalog::Indexed {
            index: Arc::new(ToolIndex { tools, by_name }),
            kept: None,
        };
        Ok(())
    }
}
