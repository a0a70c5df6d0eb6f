//! [`EvalSetFile`]: an eval set read from YAML (feature `eval`), with every problem at
//! its line and column as agent files have them, and the judge model it names.
//!
//! # The file
//!
//! ```yaml
//! name: booking                        # shown in reports
//! description: The booking agent books a room in two turns.
//! criteria:                            # the thresholds, each from 0 to 1 (default 1)
//!   tool_trajectory_avg_score: 1.0     # share of turns whose calls matched
//!   response_match_score: 0.8          # mean score of the response matchers
//! judge:                               # for `judge` matchers: an agent file's `model:`
//!   provider: openai
//!   name: gpt-4o-mini
//! cases:
//!   - id: paris                        # unique; reports and baselines match cases by it
//!     criteria: {response_match_score: 1.0}   # this case's own thresholds
//!     conversation:                    # the turns, run one after the other on one thread
//!       - user: A room in Paris, please.
//!         tool_uses:                   # or just the list of calls (then `match: exact`)
//!           match: in_order            # exact (default) | in_order | any_order
//!           calls:
//!             - name: set_slot_city
//!               args: {value: Paris}   # only the arguments named are checked
//!             - name: set_slot_nights
//!               args: {value: {$schema: {type: number, minimum: 1}}}   # also $any, $regex, $contains
//!         response:                    # one matcher, or a list of them
//!           - contains: How many nights
//!           - regex: '\?$'
//!           - exact: How many nights?
//!           - json_schema: {type: object, required: [city]}
//!           - judge: {rubric: Asks one question at a time.}
//! ```
//!
//! # Example
//!
//! ```
//! use tower_adk::file::{EvalSetFile, ProblemKind};
//!
//! let text = "name: booking\ncases:\n  - id: paris\n    conversation:\n      - user: A room in Paris\n        response: {regex: 'Paris('}\n";
//! let errors = EvalSetFile::from_str(text, "booking.yaml").unwrap_err();
//! let problem = &errors.problems()[0];
//! assert_eq!(problem.kind(), ProblemKind::InvalidValue);
//! assert_eq!((problem.location().line, problem.location().column), (6, 27));
//!
//! let file = EvalSetFile::from_str(&text.replace("Paris(", "Paris"), "booking.yaml")?;
//! assert_eq!(file.set().cases[0].conversation[0].user, "A room in Paris");
//! # Ok::<_, tower_adk::file::FileErrors>(())
//! ```

mod parse;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use adk::eval::{EvalSet, INSTRUCTION, Judge};

use super::error::{FileErrors, LoadError, Location, Problem, ProblemKind};
use super::registry::Registry;
use super::spec::Spec;
use super::yaml::Walk;

/// An eval set file, read and checked: the [`EvalSet`], and the judge model it names.
pub struct EvalSetFile {
    file: String,
    set: EvalSet,
    /// The judge's model, as an agent file with only `model:`.
    judge: Option<Spec>,
}

impl EvalSetFile {
    /// Reads the file at `path`, with the process's environment (`${VAR}` in strings, as
    /// in agent files).
    ///
    /// # Errors
    ///
    /// Every problem of the file, including one that it cannot be read.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, FileErrors> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| {
            let message = format!("cannot read the eval set: {error}");
            let problem = Problem::new(ProblemKind::UnreadableFile, Location::default(), message);
            FileErrors::new(name.clone(), Arc::from(""), vec![problem])
        })?;
        Self::read(&text, name, &|var| std::env::var(var).ok())
    }

    /// Reads `text`, calling it `name` in messages, with the process's environment.
    ///
    /// # Errors
    ///
    /// Every problem of the file.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, name: impl Into<String>) -> Result<Self, FileErrors> {
        Self::read(text, name.into(), &|var| std::env::var(var).ok())
    }

    fn read(
        text: &str,
        name: String,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, FileErrors> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let source: Arc<str> = Arc::from(text);
        let fail = |problems| FileErrors::new(name.clone(), Arc::clone(&source), problems);
        let nodes = super::nodes::load(text).map_err(fail)?;
        let Some(root) = nodes.documents.first() else {
            let message = "the eval set is empty; it needs `name` and `cases`";
            return Err(fail(vec![super::check::at_start(
                ProblemKind::MissingKey,
                message,
            )]));
        };
        let mut walk = Walk::new(env);
        let (set, judge) = parse::eval_set(&mut walk, root);
        let mut problems = walk.problems;
        nodes.one_document("an eval set", &mut problems);
        if !problems.is_empty() {
            return Err(fail(problems));
        }
        Ok(EvalSetFile {
            file: name,
            set,
            judge,
        })
    }

    /// The file's name, as given when it was read.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The eval set.
    pub fn set(&self) -> &EvalSet {
        &self.set
    }

    /// The eval set, owned.
    pub fn into_set(self) -> EvalSet {
        self.set
    }

    /// Whether the file names a judge model (`judge:`).
    pub fn has_judge(&self) -> bool {
        self.judge.is_some()
    }

    /// The judge the file's `judge:` describes (a model as an agent file's `model:`; a
    /// `registered` one from `registry`), with the default
    /// [`INSTRUCTION`](adk::eval::INSTRUCTION); `None` when it names none.
    ///
    /// # Errors
    ///
    /// [`LoadError::Model`] when the model cannot be made.
    pub fn judge(&self, registry: &Registry) -> Result<Option<Judge>, LoadError> {
        let Some(spec) = &self.judge else {
            return Ok(None);
        };
        let (builder, _) = super::load::model(spec, registry)?;
        let builder = builder
            .instruction(INSTRUCTION)
            .model_options(spec.options.clone());
        Judge::from_builder(builder)
            .map(Some)
            .map_err(|error| LoadError::Model(error.into()))
    }
}

impl fmt::Debug for EvalSetFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EvalSetFile")
            .field("file", &self.file)
            .field("set", &self.set.name)
            .field("cases", &self.set.cases.len())
            .field("judge", &self.judge.is_some())
            .finish()
    }
}
