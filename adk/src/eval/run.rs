//! [`Evaluator`]: runs a set's cases against an agent, concurrently, each on a thread of
//! its own, and scores them into an [`EvalReport`].

use std::future::Future;
use std::time::Instant;

use futures::StreamExt;
use serde_json::Value;
use tower::{BoxError, Service, ServiceExt};

use super::judge::Judge;
use super::matcher::{CalledTool, Check, ResponseMatcher};
use super::report::{CaseResult, EvalReport, TurnResult};
use super::set::{EvalCase, EvalSet};
use crate::agent::{AgentRequest, AgentResult, AgentRun};
use crate::model::Usage;

/// How many cases run at once unless told otherwise.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// Runs an [`EvalSet`] against an agent and scores it.
///
/// Each case runs on a new thread (its turns one after the other, each a run whose
/// request is the turn's user message on that thread), up to
/// [`concurrency`](Self::concurrency) cases at once. A case's agent comes from
/// [`run`](Self::run) (a clone of one agent service: live models, or a model that
/// replays recorded traffic) or from [`run_with`](Self::run_with) (a new agent per case:
/// a scripted model whose turns each case plays from the start).
///
/// # Example
///
/// ```
/// use serde_json::json;
/// use tower_adk::eval::{EvalCase, EvalSet, EvalTurn, Evaluator, ExpectedCall, ResponseMatcher, Trajectory, TrajectoryMatch};
/// use tower_adk::testing::{text_tool, ScriptedModel, Turn};
/// use tower_adk::Agent;
///
/// let set = EvalSet::new("weather").case(
///     EvalCase::new("oslo").turn(
///         EvalTurn::user("Weather in Oslo?")
///             .tool_uses(Trajectory::new(TrajectoryMatch::Exact).call(ExpectedCall::new("weather").arg("city", json!("Oslo"))))
///             .response(ResponseMatcher::Contains("sunny".into())),
///     ),
/// );
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let report = Evaluator::new(&set)
///     .run_with(|_case| async {
///         let model = ScriptedModel::new([
///             Turn::call("c1", "weather", json!({"city": "Oslo"})),
///             Turn::text("It is sunny in Oslo."),
///         ]);
///         Ok::<_, tower_adk::BoxError>(Agent::builder(model).tool(text_tool("weather", "sunny")).build()?)
///     })
///     .await;
/// assert!(report.passed());
/// assert_eq!(report.cases[0].trajectory_score, Some(1.0));
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Evaluator<'s> {
    set: &'s EvalSet,
    concurrency: usize,
    judge: Option<Judge>,
}

impl<'s> Evaluator<'s> {
    /// An evaluator of `set`, running [`DEFAULT_CONCURRENCY`] cases at once, with no
    /// judge.
    pub fn new(set: &'s EvalSet) -> Self {
        Evaluator {
            set,
            concurrency: DEFAULT_CONCURRENCY,
            judge: None,
        }
    }

    /// Runs up to `limit` cases at once (at least 1).
    pub fn concurrency(mut self, limit: usize) -> Self {
        self.concurrency = limit.max(1);
        self
    }

    /// Asks this judge for the [`ResponseMatcher::Judge`] scores. Without one, such a
    /// matcher scores 0 and says so.
    pub fn judge(mut self, judge: Judge) -> Self {
        self.judge = Some(judge);
        self
    }

    /// Runs every case against a clone of `agent` (clones share state: a scripted
    /// model's script, a store).
    pub async fn run<S>(self, agent: S) -> EvalReport
    where
        S: Service<AgentRequest, Response = AgentRun> + Clone,
        S::Error: Into<BoxError>,
    {
        self.run_with(|_| std::future::ready(Ok::<_, BoxError>(agent.clone())))
            .await
    }

    /// Runs each case against the agent `make` gives for it; a case whose agent cannot
    /// be made fails with that error.
    pub async fn run_with<F, Fut, S>(self, make: F) -> EvalReport
    where
        F: Fn(&EvalCase) -> Fut,
        Fut: Future<Output = Result<S, BoxError>>,
        S: Service<AgentRequest, Response = AgentRun>,
        S::Error: Into<BoxError>,
    {
        let this = &self;
        let make = &make;
        let cases: Vec<CaseResult> = futures::stream::iter(&self.set.cases)
            .map(|case| async move {
                match make(case).await {
                    Ok(agent) => this.run_case(case, agent).await,
                    Err(error) => {
                        this.failed(case, format!("the agent could not be made: {error}"))
                    }
                }
            })
            .buffered(self.concurrency)
            .collect()
            .await;
        EvalReport {
            set: self.set.name.clone(),
            cases,
        }
    }

    /// Runs a case's turns on a new thread, then scores them.
    async fn run_case<S>(&self, case: &EvalCase, mut agent: S) -> CaseResult
    where
        S: Service<AgentRequest, Response = AgentRun>,
        S::Error: Into<BoxError>,
    {
        let thread = format!("eval/{}/{}", case.id, uuid::Uuid::new_v4());
        let mut result = self.blank(case);
        let mut said: Vec<(&str, String)> = Vec::new();
        for turn in &case.conversation {
            let started = Instant::now();
            let request = AgentRequest::user(turn.user.as_str()).on_thread(thread.clone());
            let outcome = match agent.ready().await {
                Ok(ready) => match ready.call(request).await {
                    Ok(run) => run.await.map_err(BoxError::from),
                    Err(error) => Err(error.into()),
                },
                Err(error) => Err(error.into()),
            };
            let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
            result.latency_ms += latency_ms;
            let run = match outcome {
                Ok(run) => run,
                Err(error) => {
                    result.error = Some(format!("turn {}: {error}", result.turns.len() + 1));
                    break;
                }
            };
            said.push(("user", turn.user.clone()));
            let scored = self.score_turn(turn, &run, &said, latency_ms).await;
            said.push(("assistant", scored.response.clone()));
            result.usage += run.usage.total;
            result.model_calls += run.model_calls;
            result.turns.push(scored);
        }
        self.finish(case, result)
    }

    async fn score_turn(
        &self,
        turn: &super::set::EvalTurn,
        run: &AgentResult,
        said: &[(&str, String)],
        latency_ms: f64,
    ) -> TurnResult {
        let response = run.final_message.content().to_owned();
        let tool_calls: Vec<CalledTool> = run
            .tool_records
            .iter()
            .map(|record| {
                let args = serde_json::from_str(&record.arguments)
                    .unwrap_or_else(|_| Value::String(record.arguments.to_string()));
                CalledTool::new(record.name.as_str(), args)
            })
            .collect();
        let trajectory = turn.tool_uses.as_ref().map(|t| t.check(&tool_calls));
        let mut response_checks = Vec::with_capacity(turn.response.len());
        for matcher in &turn.response {
            let check = match (matcher.check(&response), matcher, &self.judge) {
                (Some(check), _, _) => check,
                (None, ResponseMatcher::Judge { rubric }, Some(judge)) => {
                    let before: Vec<(&str, &str)> = said
                        .iter()
                        .map(|(who, text)| (*who, text.as_str()))
                        .collect();
                    judge.score(rubric, &before, &response).await
                }
                (None, _, _) => Check::new("judge", 0.0, "no judge was given to the evaluation"),
            };
            response_checks.push(check);
        }
        TurnResult {
            user: turn.user.clone(),
            response,
            tool_calls,
            trajectory,
            response_checks,
            latency_ms,
        }
    }

    /// The scores from the turns' checks, and whether they meet the thresholds.
    fn finish(&self, case: &EvalCase, mut result: CaseResult) -> CaseResult {
        let mean = |scores: Vec<f64>| {
            #[allow(clippy::cast_precision_loss)]
            let n = scores.len() as f64;
            (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / n)
        };
        // A turn that did not run scores 0 on what it expects.
        let missing = &case.conversation[result.turns.len()..];
        let mut trajectories: Vec<f64> = result
            .turns
            .iter()
            .filter_map(|t| t.trajectory.as_ref().map(|c| c.score))
            .collect();
        trajectories.extend(
            missing
                .iter()
                .filter(|t| t.tool_uses.is_some())
                .map(|_| 0.0),
        );
        let mut responses: Vec<f64> = result
            .turns
            .iter()
            .flat_map(|t| t.response_checks.iter().map(|c| c.score))
            .collect();
        responses.extend(missing.iter().flat_map(|t| t.response.iter().map(|_| 0.0)));
        result.trajectory_score = mean(trajectories);
        result.response_score = mean(responses);
        let meets = |score: Option<f64>, threshold: f64| score.is_none_or(|s| s >= threshold);
        result.passed = result.error.is_none()
            && meets(
                result.trajectory_score,
                result.criteria.tool_trajectory_avg_score,
            )
            && meets(result.response_score, result.criteria.response_match_score);
        result
    }

    /// A case that failed before its first turn ran.
    fn failed(&self, case: &EvalCase, error: String) -> CaseResult {
        let mut result = self.blank(case);
        result.error = Some(error);
        self.finish(case, result)
    }

    /// A case's result before its first turn.
    fn blank(&self, case: &EvalCase) -> CaseResult {
        CaseResult {
            id: case.id.clone(),
            passed: false,
            trajectory_score: None,
            response_score: None,
            criteria: self.set.criteria_of(case),
            latency_ms: 0.0,
            usage: Usage::default(),
            model_calls: 0,
            turns: Vec::new(),
            error: None,
        }
    }
}
