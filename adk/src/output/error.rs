//! The errors of typed answers: [`Problem`] (one thing wrong with an answer),
//! [`InvalidOutput`] (the answer was still wrong when the retries ran out) and
//! [`OutputError`], what a [`TypedAgent`](super::TypedAgent) fails with.

use std::fmt;

use crate::agent::AgentError;
use crate::agent::AgentResult;
use crate::agent::RunStatus;

/// One thing wrong with a final answer: where (a JSON Pointer into the answer, `/` for
/// the whole) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where in the answer, e.g. `/items/0/price`; `/` for the answer as a whole.
    pub path: String,
    /// What is wrong, e.g. `"12" is not of type "number"`.
    pub reason: String,
}

impl Problem {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Problem {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at `{}`: {}", self.path, self.reason)
    }
}

/// The model's final answer was still invalid after the last retry.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
#[error("the final answer was still invalid after {attempts} attempts: {}", join(.problems))]
pub struct InvalidOutput {
    /// How many answers the model gave (the first and each retry).
    pub attempts: usize,
    /// What was wrong with the last one.
    pub problems: Vec<Problem>,
}

fn join(problems: &[Problem]) -> String {
    let texts: Vec<String> = problems.iter().map(Problem::to_string).collect();
    texts.join("; ")
}

/// Why a [`TypedAgent`](super::TypedAgent) gave no typed answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The model's answer was still invalid when the retries ran out.
    #[error(transparent)]
    Invalid(InvalidOutput),
    /// The run ended without a final answer: it stopped at an interrupt (resume it from
    /// the result's checkpoint) or a tool failure ended it, degraded. The result is the
    /// run's.
    #[error("the run ended without a final answer ({:?})", .0.status)]
    NoAnswer(Box<AgentResult>),
    /// The run failed.
    #[error(transparent)]
    Run(AgentError),
}

impl OutputError {
    /// The run's error as the typed agent reports it: the check's own failure when the
    /// retries ran out, the run's error otherwise.
    pub(crate) fn from_run(error: AgentError) -> Self {
        let AgentError::Handler(failed) = error else {
            return OutputError::Run(error);
        };
        let (hook, handler) = (failed.hook(), failed.handler().to_owned());
        match failed.into_source().downcast::<InvalidOutput>() {
            Ok(invalid) => OutputError::Invalid(*invalid),
            Err(source) => OutputError::Run(AgentError::Handler(
                crate::handler::HandlerError::new(hook, handler.into(), source),
            )),
        }
    }

    /// The error for a run that ended some other way than with an answer.
    pub(crate) fn no_answer(result: AgentResult) -> Self {
        debug_assert_ne!(result.status, RunStatus::Completed);
        OutputError::NoAnswer(Box::new(result))
    }

    /// The problems with the last answer, when the retries ran out.
    pub fn problems(&self) -> &[Problem] {
        match self {
            OutputError::Invalid(invalid) => &invalid.problems,
            _ => &[],
        }
    }
}
