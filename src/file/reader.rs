//! [`FileReader`]: reads an agent file into an [`AgentFile`], with the environment and
//! (optionally) the registry its names are checked against; and the [`AgentFile`]
//! constructors that read with it.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use super::agent_file::AgentFile;
use super::check;
use super::error::{FileErrors, Location, Problem, ProblemKind};
use super::parse;
use super::registry::Registry;
use super::yaml::Walk;

impl AgentFile {
    /// Reads the file at `path`, with the process's environment.
    ///
    /// # Errors
    ///
    /// Every problem of the file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, FileErrors> {
        FileReader::new().read_path(path)
    }

    /// Reads `text`, calling it `name` in messages, with the process's environment.
    ///
    /// # Errors
    ///
    /// Every problem of the file.
    pub fn from_str(text: &str, name: impl Into<String>) -> Result<Self, FileErrors> {
        FileReader::new().read_str(text, name)
    }

    /// A reader with more choices: the registry to check names against, the
    /// environment to read.
    pub fn reader<'r>() -> FileReader<'r> {
        FileReader::new()
    }
}

/// Reads agent files: from a path or a string, with the process's environment or
/// another, checking names against a [`Registry`] or not. See
/// [`AgentFile::reader`].
///
/// # Example
///
/// ```
/// use tower_adk::file::{AgentFile, ProblemKind};
///
/// let text = "model: {provider: openai, name: gpt-4o-mini, base_url: '${LLM_URL}'}\n";
/// let env = |name: &str| (name == "LLM_URL").then(|| "http://127.0.0.1:8000/v1".to_owned());
/// assert!(AgentFile::reader().env(env).read_str(text, "agent.yaml").is_ok() || !cfg!(feature = "openai"));
///
/// let errors = AgentFile::reader().env(|_| None).read_str(text, "agent.yaml").unwrap_err();
/// let missing = errors.problems().iter().find(|p| p.kind() == ProblemKind::MissingEnv).unwrap();
/// assert_eq!(missing.message(), "environment variable `LLM_URL` is not set");
/// ```
///
/// # Limits
///
/// A file is refused, with one problem where it passes the limit, when it nests deeper
/// than [`MAX_DEPTH`](Self::MAX_DEPTH) levels ([`ProblemKind::TooDeep`]) or when its
/// aliases together repeat more than [`MAX_ALIASED_NODES`](Self::MAX_ALIASED_NODES)
/// nodes ([`ProblemKind::AliasExpansion`]). Both are checked as the text is parsed,
/// before any node is built, so that reading any file takes time and memory in
/// proportion to its text (an agent file is a few levels deep and repeats little).
///
/// ```
/// use tower_adk::file::{AgentFile, FileReader, ProblemKind};
///
/// let text = format!("model: {{provider: scripted}}\nx:\n{}1\n", "- ".repeat(100_000));
/// let errors = AgentFile::from_str(&text, "deep.yaml").unwrap_err();
/// assert_eq!(errors.problems()[0].kind(), ProblemKind::TooDeep);
/// assert_eq!(errors.problems()[0].location().line, 3);
/// assert_eq!(FileReader::MAX_DEPTH, 128);
/// ```
pub struct FileReader<'r> {
    registry: Option<&'r Registry>,
    env: Env<'r>,
}

/// Where `${VAR}` is read from.
type Env<'r> = Box<dyn Fn(&str) -> Option<String> + 'r>;

impl<'r> FileReader<'r> {
    /// The deepest a file may nest: a collection inside this many others (the top
    /// mapping is level 1) is a problem, an alias counting as what it repeats.
    pub const MAX_DEPTH: usize = super::limits::MAX_DEPTH;

    /// The most nodes that all the aliases of a file may repeat together: an alias of a
    /// list of ten scalars repeats eleven.
    pub const MAX_ALIASED_NODES: u64 = super::limits::MAX_ALIASED_NODES;

    pub(crate) fn new() -> Self {
        FileReader {
            registry: None,
            env: Box::new(|name| std::env::var(name).ok()),
        }
    }

    /// Also checks the names the file uses (tools, handlers, models, and the tools that
    /// handlers name) against `registry`, reporting their problems with the others.
    pub fn registry(mut self, registry: &'r Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Reads `${VAR}` and `{env: VAR}` from `env` instead of the process's environment.
    pub fn env<F>(mut self, env: F) -> Self
    where
        F: Fn(&str) -> Option<String> + 'r,
    {
        self.env = Box::new(env);
        self
    }

    /// Reads the file at `path`; a prompt file is found relative to its folder.
    ///
    /// # Errors
    ///
    /// Every problem of the file ([`FileErrors`]), including one that it cannot be read.
    pub fn read_path(self, path: impl AsRef<Path>) -> Result<AgentFile, FileErrors> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| {
            let message = format!("cannot read the agent file: {error}");
            let problem = Problem::new(ProblemKind::UnreadableFile, Location::default(), message);
            FileErrors::new(name.clone(), Arc::from(""), vec![problem])
        })?;
        self.read(&text, name, path.parent())
    }

    /// Reads `text`, calling the file `name` in messages; a prompt file is found
    /// relative to the current folder.
    ///
    /// # Errors
    ///
    /// Every problem of the file ([`FileErrors`]).
    pub fn read_str(self, text: &str, name: impl Into<String>) -> Result<AgentFile, FileErrors> {
        self.read(text, name.into(), None)
    }

    fn read(self, text: &str, name: String, base: Option<&Path>) -> Result<AgentFile, FileErrors> {
        // A byte order mark is not part of the first key (and not a column).
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let source: Arc<str> = Arc::from(text);
        let fail = |problems| FileErrors::new(name.clone(), Arc::clone(&source), problems);
        let nodes = super::nodes::load(text).map_err(fail)?;
        let Some(root) = nodes.documents.first() else {
            let message = "the agent file is empty; it needs at least `model`";
            return Err(fail(vec![check::at_start(
                ProblemKind::MissingKey,
                message,
            )]));
        };
        let mut walk = Walk::new(&*self.env);
        let spec = parse::spec(&mut walk, root, base);
        let mut problems = walk.problems;
        nodes.one_document("an agent file", &mut problems);
        if let Some(registry) = self.registry {
            check::registry_names(&spec, registry, &mut problems);
            if let Some(tools) = check::static_tools(&spec) {
                check::tool_references(&spec, &tools, &mut problems);
            }
        }
        if !problems.is_empty() {
            return Err(fail(problems));
        }
        Ok(AgentFile {
            file: name,
            text: source,
            spec,
        })
    }
}

impl fmt::Debug for FileReader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileReader")
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}
