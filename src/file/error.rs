//! What can be wrong with an agent file: each [`Problem`] where it is, all of a file's
//! problems in one [`FileErrors`], and [`LoadError`] for what fails when the agent is
//! put together (connecting to MCP servers, opening a store).

use std::fmt;
use std::sync::Arc;

use adk::BoxError;

/// A place in an agent file: its line and column, both counted from 1.
///
/// # Example
///
/// ```
/// use tower_adk::file::AgentFile;
///
/// let text = "model: {provider: scripted, turns: [{text: hi}]}\nmax_iterations: many\n";
/// let errors = AgentFile::from_str(text, "agent.yaml").unwrap_err();
/// let at = errors.problems()[0].location();
/// assert_eq!((at.line, at.column), (2, 17));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Location {
    /// The line, from 1.
    pub line: usize,
    /// The column, in characters, from 1.
    pub column: usize,
}

impl Location {
    /// Where a parser's marker points; saphyr counts columns from 0, people from 1.
    pub(crate) fn from_marker(marker: saphyr_parser::Marker) -> Self {
        Location {
            line: marker.line(),
            column: marker.col() + 1,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// What kind of problem a [`Problem`] is, for programs (tests, editors) that act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProblemKind {
    /// The text is not YAML.
    Syntax,
    /// A key that this place of the file does not have.
    UnknownKey,
    /// A key that its mapping already has.
    DuplicateKey,
    /// A value of the wrong type (a text where a number goes, ...).
    WrongType,
    /// A key that must be there is not.
    MissingKey,
    /// A value of the right type that is not allowed (a zero limit, a bad duration, ...).
    InvalidValue,
    /// A time zone that is not in the IANA database.
    InvalidTimezone,
    /// An MCP server with both an include and an exclude list.
    IncludeAndExclude,
    /// A handler that is neither built in nor registered.
    UnknownHandler,
    /// A tool that is not registered, nor made by a handler, nor offered by an MCP server.
    UnknownTool,
    /// A model name that is not registered.
    UnknownModel,
    /// An environment variable the file refers to is not set.
    MissingEnv,
    /// A file the agent file refers to (a prompt template) cannot be read.
    UnreadableFile,
    /// Settings that cannot go together (a prompt inline and from a file, ...).
    Conflict,
    /// A setting that needs a cargo feature this program was built without.
    NotEnabled,
    /// A registered handler refused its settings, or a built-in one its values.
    HandlerSettings,
    /// Collections nested deeper than [`FileReader::MAX_DEPTH`](super::FileReader::MAX_DEPTH)
    /// levels: the file is refused there, unread.
    TooDeep,
    /// Aliases that together repeat more than
    /// [`FileReader::MAX_ALIASED_NODES`](super::FileReader::MAX_ALIASED_NODES) nodes (an
    /// "alias bomb"): the file is refused at the alias that passes the limit, unread.
    AliasExpansion,
}

impl ProblemKind {
    /// The kind as a short code, shown in brackets after `error`.
    pub fn code(self) -> &'static str {
        match self {
            ProblemKind::Syntax => "syntax",
            ProblemKind::UnknownKey => "unknown_key",
            ProblemKind::DuplicateKey => "duplicate_key",
            ProblemKind::WrongType => "wrong_type",
            ProblemKind::MissingKey => "missing_key",
            ProblemKind::InvalidValue => "invalid_value",
            ProblemKind::InvalidTimezone => "invalid_timezone",
            ProblemKind::IncludeAndExclude => "include_and_exclude",
            ProblemKind::UnknownHandler => "unknown_handler",
            ProblemKind::UnknownTool => "unknown_tool",
            ProblemKind::UnknownModel => "unknown_model",
            ProblemKind::MissingEnv => "missing_env",
            ProblemKind::UnreadableFile => "unreadable_file",
            ProblemKind::Conflict => "conflict",
            ProblemKind::NotEnabled => "not_enabled",
            ProblemKind::HandlerSettings => "handler_settings",
            ProblemKind::TooDeep => "too_deep",
            ProblemKind::AliasExpansion => "alias_expansion",
        }
    }
}

/// One thing wrong in an agent file, where it is, and what would be valid there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    kind: ProblemKind,
    message: String,
    location: Location,
    width: usize,
    choices: Vec<String>,
    suggestion: Option<String>,
}

impl Problem {
    pub(crate) fn new(kind: ProblemKind, location: Location, message: impl Into<String>) -> Self {
        Problem {
            kind,
            message: message.into(),
            location,
            width: 1,
            choices: Vec::new(),
            suggestion: None,
        }
    }

    pub(crate) fn width(mut self, width: usize) -> Self {
        self.width = width.max(1);
        self
    }

    /// Lists the valid choices, and suggests the one closest to `given`.
    pub(crate) fn with_choices<I, S>(mut self, given: &str, choices: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.choices = choices.into_iter().map(Into::into).collect();
        self.suggestion = closest(given, &self.choices).map(str::to_owned);
        self
    }

    /// What kind of problem it is.
    pub fn kind(&self) -> ProblemKind {
        self.kind
    }

    /// What is wrong, in a sentence.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where it is.
    pub fn location(&self) -> Location {
        self.location
    }

    /// The valid choices at this place, when there is a fixed set (keys, handler names,
    /// tool names, ...); empty otherwise.
    pub fn choices(&self) -> &[String] {
        &self.choices
    }

    /// The valid choice closest to what the file says ("did you mean"), if one is close.
    pub fn suggestion(&self) -> Option<&str> {
        self.suggestion.as_deref()
    }
}

/// The valid choice closest to `given`, if it is close enough to be a likely typo.
fn closest<'a>(given: &str, choices: &'a [String]) -> Option<&'a str> {
    choices
        .iter()
        .map(|choice| (strsim::jaro_winkler(given, choice), choice))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, choice)| choice.as_str())
}

/// Every problem found in one agent file, in the order they occur.
///
/// Its `Display` shows each problem the way rustc shows a compile error: the kind, the
/// message, the file, line and column, the line itself with the place marked, and the
/// valid choices.
///
/// # Example
///
/// ```
/// use tower_adk::file::{AgentFile, ProblemKind};
///
/// let text = "model: {provider: scripted, turns: [{text: hi}]}\nmax_iteration: 5\ntimezone: Europe/Berlinn\n";
/// let errors = AgentFile::from_str(text, "support.yaml").unwrap_err();
/// let kinds: Vec<_> = errors.problems().iter().map(|p| p.kind()).collect();
/// assert_eq!(kinds, [ProblemKind::UnknownKey, ProblemKind::InvalidTimezone]);
/// assert_eq!(errors.problems()[0].suggestion(), Some("max_iterations"));
/// let shown = errors.to_string();
/// assert!(shown.contains("--> support.yaml:2:1"));
/// assert!(shown.contains("did you mean `max_iterations`?"));
/// ```
#[derive(Debug, Clone)]
pub struct FileErrors {
    file: String,
    text: Arc<str>,
    problems: Vec<Problem>,
}

impl FileErrors {
    pub(crate) fn new(file: impl Into<String>, text: Arc<str>, mut problems: Vec<Problem>) -> Self {
        problems.sort_by_key(|p| (p.location.line, p.location.column));
        FileErrors {
            file: file.into(),
            text,
            problems,
        }
    }

    /// The file's name, as given when it was read.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The problems, by line and column.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Shows one problem; `lines` are the text's, found once for all the problems (a
    /// search from the start for each one made a file of many problems quadratic).
    fn render(&self, f: &mut fmt::Formatter<'_>, lines: &[&str], problem: &Problem) -> fmt::Result {
        let Location { line, column } = problem.location;
        let gutter = " ".repeat(line.to_string().len());
        writeln!(f, "error[{}]: {}", problem.kind.code(), problem.message)?;
        if line == 0 {
            // Not a place in the text (the file could not be read at all).
            return writeln!(f, "{gutter}--> {}", self.file);
        }
        writeln!(f, "{gutter}--> {}:{line}:{column}", self.file)?;
        let source = lines.get(line - 1).copied().unwrap_or("");
        let room = source.chars().count().saturating_sub(column - 1).max(1);
        let marks = "^".repeat(problem.width.min(room));
        writeln!(f, "{gutter} |")?;
        writeln!(f, "{line} | {source}")?;
        write!(
            f,
            "{gutter} | {}{marks}",
            " ".repeat(column.saturating_sub(1))
        )?;
        match &problem.suggestion {
            Some(suggestion) => writeln!(f, " did you mean `{suggestion}`?")?,
            None => writeln!(f)?,
        }
        if !problem.choices.is_empty() {
            writeln!(f, "{gutter} = valid here: {}", problem.choices.join(", "))?;
        }
        Ok(())
    }
}

impl fmt::Display for FileErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<&str> = self.text.lines().collect();
        for problem in &self.problems {
            self.render(f, &lines, problem)?;
            writeln!(f)?;
        }
        let n = self.problems.len();
        let s = if n == 1 { "" } else { "s" };
        write!(f, "error: {} has {n} problem{s}", self.file)
    }
}

impl std::error::Error for FileErrors {}

/// Why an agent file could not be made into an agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// Problems in the file itself, or in the names it uses (tools, handlers, models).
    #[error("{0}")]
    File(#[from] FileErrors),
    /// An MCP server could not be reached, or a tool list does not fit its tools.
    #[error("MCP server `{server}`: {source}")]
    Mcp {
        /// The server's name in the file.
        server: String,
        /// What went wrong.
        #[source]
        source: BoxError,
    },
    /// A remote A2A agent could not be reached, or its card cannot be used.
    #[error("remote agent `{agent}`: {source}")]
    RemoteAgent {
        /// The agent's name in the file.
        agent: String,
        /// What went wrong (an `A2aError`).
        #[source]
        source: BoxError,
    },
    /// The checkpoint store could not be opened.
    #[error("checkpoint store `{store}`: {source}")]
    Store {
        /// The store as the file names it, with any password hidden.
        store: String,
        /// What went wrong.
        #[source]
        source: BoxError,
    },
    /// The model could not be configured (e.g. an OpenAI-compatible base URL that is
    /// not a URL).
    #[error("model: {0}")]
    Model(#[source] BoxError),
}

impl LoadError {
    /// The file's problems, when that is what went wrong.
    pub fn problems(&self) -> &[Problem] {
        match self {
            LoadError::File(errors) => errors.problems(),
            _ => &[],
        }
    }
}
