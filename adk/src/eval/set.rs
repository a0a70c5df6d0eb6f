//! [`EvalSet`]: the cases an evaluation runs, each a conversation with what is expected
//! of each turn, and the thresholds its scores must meet.

use serde::{Deserialize, Serialize};

use super::matcher::{ResponseMatcher, Trajectory};

/// The cases of an evaluation, and the thresholds their scores must meet.
///
/// It is plain serde data: written in code, read from JSON, or read from a YAML file
/// with `tower_adk::file::EvalSetFile` (features `config` and `eval`), which reports
/// each problem at its line and column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalSet {
    /// The set's name, shown in reports.
    pub name: String,
    /// What the set checks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The thresholds of every case that does not set its own.
    #[serde(default)]
    pub criteria: Criteria,
    /// The cases, in the order reports show them.
    pub cases: Vec<EvalCase>,
}

impl EvalSet {
    /// A set with this name and no cases, with the default [`Criteria`] (every score
    /// must be 1).
    pub fn new(name: impl Into<String>) -> Self {
        EvalSet {
            name: name.into(),
            description: String::new(),
            criteria: Criteria::default(),
            cases: Vec::new(),
        }
    }

    /// With this case added.
    pub fn case(mut self, case: EvalCase) -> Self {
        self.cases.push(case);
        self
    }

    /// With these thresholds for every case that sets none.
    pub fn criteria(mut self, criteria: Criteria) -> Self {
        self.criteria = criteria;
        self
    }

    /// The thresholds that hold for `case`: its own, else the set's.
    pub fn criteria_of(&self, case: &EvalCase) -> Criteria {
        case.criteria.unwrap_or(self.criteria)
    }
}

/// The lowest scores a case may have and pass, each from 0 to 1. The names are Google
/// ADK's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Criteria {
    /// The lowest trajectory score: the share of the case's turns whose tool calls
    /// matched what they expect.
    pub tool_trajectory_avg_score: f64,
    /// The lowest response score: the mean of the scores of the case's response
    /// matchers (each 0 or 1, a judge's anywhere between).
    pub response_match_score: f64,
}

impl Default for Criteria {
    /// Every score must be 1.
    fn default() -> Self {
        Criteria {
            tool_trajectory_avg_score: 1.0,
            response_match_score: 1.0,
        }
    }
}

impl Criteria {
    /// These two thresholds.
    pub fn new(tool_trajectory_avg_score: f64, response_match_score: f64) -> Self {
        Criteria {
            tool_trajectory_avg_score,
            response_match_score,
        }
    }
}

/// One case: a conversation of one or more turns, run on a thread of its own, and what
/// each turn is expected to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalCase {
    /// The case's id, unique in its set (reports and baselines match cases by it).
    pub id: String,
    /// What the case checks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The user's messages, one per turn, each with its expectations.
    pub conversation: Vec<EvalTurn>,
    /// Thresholds of this case's own, instead of the set's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<Criteria>,
}

impl EvalCase {
    /// A case with this id and no turns.
    pub fn new(id: impl Into<String>) -> Self {
        EvalCase {
            id: id.into(),
            description: String::new(),
            conversation: Vec::new(),
            criteria: None,
        }
    }

    /// With this turn added to the conversation.
    pub fn turn(mut self, turn: EvalTurn) -> Self {
        self.conversation.push(turn);
        self
    }

    /// With thresholds of its own.
    pub fn criteria(mut self, criteria: Criteria) -> Self {
        self.criteria = Some(criteria);
        self
    }
}

/// One turn of a case: what the user says, the tool calls expected of the run it
/// starts, and what its answer is expected to be. A turn that expects nothing is only
/// run (it sets up the next).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalTurn {
    /// The user's message.
    pub user: String,
    /// The tool calls expected, and how they must match; none: not scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_uses: Option<Trajectory>,
    /// What the final answer of the turn must satisfy: each matcher is scored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response: Vec<ResponseMatcher>,
}

impl EvalTurn {
    /// A turn in which the user says `text`, expecting nothing yet.
    pub fn user(text: impl Into<String>) -> Self {
        EvalTurn {
            user: text.into(),
            tool_uses: None,
            response: Vec::new(),
        }
    }

    /// Expecting these tool calls.
    pub fn tool_uses(mut self, trajectory: Trajectory) -> Self {
        self.tool_uses = Some(trajectory);
        self
    }

    /// Expecting the answer to satisfy this matcher too.
    pub fn response(mut self, matcher: ResponseMatcher) -> Self {
        self.response.push(matcher);
        self
    }
}
