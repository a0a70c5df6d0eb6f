//! [`EvalReport`]: what an evaluation found, case by case, as serde data (the JSON a
//! later run compares itself with), and as a table for the terminal.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::matcher::{CalledTool, Check};
use super::set::Criteria;
use crate::model::Usage;

/// The outcome of an evaluation: every case's scores, and whether all passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalReport {
    /// The set's name.
    pub set: String,
    /// Each case's result, in the set's order.
    pub cases: Vec<CaseResult>,
}

impl EvalReport {
    /// Whether every case passed.
    pub fn passed(&self) -> bool {
        self.cases.iter().all(|c| c.passed)
    }

    /// The cases that did not pass.
    pub fn failures(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases.iter().filter(|c| !c.passed)
    }

    /// The result of the case with this id.
    pub fn case(&self, id: &str) -> Option<&CaseResult> {
        self.cases.iter().find(|c| c.id == id)
    }

    /// A table of the cases: one line each, with the scores, thresholds, latency and
    /// tokens, and each score's change since `baseline` when given.
    ///
    /// ```text
    /// case          trajectory  response        latency   tokens  result
    /// full_booking  1.00 ≥1.00  1.00 ≥1.00      12.3 ms        0  pass
    /// ```
    pub fn table<'a>(&'a self, baseline: Option<&'a EvalReport>) -> Table<'a> {
        Table {
            report: self,
            baseline,
        }
    }
}

/// The result of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CaseResult {
    /// The case's id.
    pub id: String,
    /// Whether every score met its threshold and every turn ran.
    pub passed: bool,
    /// The share of turns whose tool calls matched; `None` when no turn expects calls.
    pub trajectory_score: Option<f64>,
    /// The mean of the response matchers' scores; `None` when no turn has one.
    pub response_score: Option<f64>,
    /// The thresholds the scores were held to.
    pub criteria: Criteria,
    /// How long the case's runs took, in all, in milliseconds (judges not included).
    pub latency_ms: f64,
    /// The tokens its runs used, as the model reported them (judges not included).
    pub usage: Usage,
    /// How many times the runs called the model.
    pub model_calls: usize,
    /// Each turn: the answer, the calls, the checks.
    pub turns: Vec<TurnResult>,
    /// Why a run failed, when one did (the case then fails; later turns do not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What one turn of a case did, and how it was scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TurnResult {
    /// The user's message.
    pub user: String,
    /// The final answer.
    pub response: String,
    /// The tool calls the run made, in order.
    pub tool_calls: Vec<CalledTool>,
    /// The trajectory's check, when the turn expects calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<Check>,
    /// Each response matcher's check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_checks: Vec<Check>,
    /// How long the run took, in milliseconds.
    pub latency_ms: f64,
}

/// The table of [`EvalReport::table`], as its `Display`.
#[derive(Debug, Clone, Copy)]
pub struct Table<'a> {
    report: &'a EvalReport,
    baseline: Option<&'a EvalReport>,
}

impl fmt::Display for Table<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .report
            .cases
            .iter()
            .map(|c| c.id.chars().count())
            .chain([4])
            .max()
            .unwrap_or(4);
        let delta = self.baseline.is_some();
        let score_width = if delta { 18 } else { 10 };
        writeln!(
            f,
            "{:width$}  {:score_width$}  {:score_width$}  {:>11}  {:>7}  result",
            "case", "trajectory", "response", "latency", "tokens"
        )?;
        for case in &self.report.cases {
            // A case the baseline does not have: its scores are new.
            let before = self.baseline.map(|b| b.case(&case.id));
            let trajectory = score(
                case.trajectory_score,
                case.criteria.tool_trajectory_avg_score,
                before.map(|b| b.and_then(|b| b.trajectory_score)),
            );
            let response = score(
                case.response_score,
                case.criteria.response_match_score,
                before.map(|b| b.and_then(|b| b.response_score)),
            );
            let result = match (&case.error, case.passed) {
                (Some(error), _) => format!("FAIL ({error})"),
                (None, true) => "pass".to_owned(),
                (None, false) => "FAIL".to_owned(),
            };
            writeln!(
                f,
                "{:width$}  {trajectory:score_width$}  {response:score_width$}  {:>8.1} ms  {:>7}  {result}",
                case.id, case.latency_ms, case.usage.total_tokens
            )?;
        }
        let passed = self.report.cases.iter().filter(|c| c.passed).count();
        write!(f, "{passed} of {} cases passed", self.report.cases.len())
    }
}

/// A score and its threshold (`-` when not scored), and its change since the baseline.
fn score(now: Option<f64>, threshold: f64, before: Option<Option<f64>>) -> String {
    let Some(now) = now else {
        return "-".to_owned();
    };
    let mut shown = format!("{now:.2} ≥{threshold:.2}");
    match before {
        Some(Some(was)) if (now - was).abs() >= 0.005 => {
            shown.push_str(&format!(" ({:+.2})", now - was));
        }
        Some(Some(_)) => shown.push_str(" (=)"),
        Some(None) => shown.push_str(" (new)"),
        None => {}
    }
    shown
}
