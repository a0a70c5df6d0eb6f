//! Evaluation: run a set of cases against an agent and score what it did, to see
//! whether a change made it better or worse, and to gate CI on it.
//!
//! - An [`EvalSet`] lists [`EvalCase`]s, each a conversation of [`EvalTurn`]s: the user's
//!   message, the tool calls expected ([`Trajectory`]: [exact, in order or in any
//!   order](TrajectoryMatch), each call's arguments checked by [`ArgMatcher`]s), and what
//!   the answer must satisfy ([`ResponseMatcher`]: exact, contains, regex, JSON Schema,
//!   or an LLM [`Judge`] with a rubric). It is serde data, so JSON works as it is; YAML
//!   files are read by `tower_adk::file::EvalSetFile` (features `config` and `eval`) with
//!   each problem at its line and column. `adk eval` runs one from the command line.
//! - An [`Evaluator`] runs the cases concurrently, each on a thread of its own, against
//!   any agent service: an [`Agent`](crate::Agent), an agent from a file, or one whose
//!   model replays recorded traffic.
//! - Each case gets two scores: the **trajectory score** (the share of its turns whose
//!   calls matched) and the **response score** (the mean of its response matchers'
//!   scores), each held to a threshold of its [`Criteria`] (Google ADK's names:
//!   `tool_trajectory_avg_score`, `response_match_score`). A case passes when both meet
//!   their thresholds and every run completed.
//! - The [`EvalReport`] is serde data (write it as JSON, read last run's back as a
//!   baseline), a [table](EvalReport::table), and an [HTML page](EvalReport::html) with
//!   plots.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use tower_adk::eval::{EvalSet, Evaluator};
//! use tower_adk::testing::{text_tool, ScriptedModel, Turn};
//! use tower_adk::Agent;
//!
//! let set: EvalSet = serde_json::from_value(json!({
//!     "name": "orders",
//!     "criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5},
//!     "cases": [{
//!         "id": "where_is_7",
//!         "conversation": [{
//!             "user": "Where is order 7?",
//!             "tool_uses": {"match": "in_order", "calls": [{"name": "lookup_order", "args": {"id": {"$regex": "^7$"}}}]},
//!             "response": [{"contains": "shipped"}, {"regex": "(?i)tracking"}]
//!         }]
//!     }]
//! }))?;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // Every case plays the script from its start, on an agent of its own.
//! let report = Evaluator::new(&set)
//!     .concurrency(8)
//!     .run_with(|_case| async {
//!         let model = ScriptedModel::new([
//!             Turn::call("c1", "lookup_order", json!({"id": "7"})),
//!             Turn::text("Order 7 has shipped."),
//!         ]);
//!         Ok::<_, tower_adk::BoxError>(Agent::builder(model).tool(text_tool("lookup_order", "shipped")).build()?)
//!     })
//!     .await;
//!
//! let case = &report.cases[0];
//! assert_eq!(case.trajectory_score, Some(1.0));
//! assert_eq!(case.response_score, Some(0.5)); // "shipped" found, no tracking number
//! assert!(report.passed());
//! println!("{}", report.table(None));
//! let json = serde_json::to_string(&report)?; // a baseline for the next run
//! # let _ = json;
//! # Ok::<_, serde_json::Error>(())
//! # }).unwrap();
//! # Ok::<_, serde_json::Error>(())
//! ```

mod html;
mod judge;
mod matcher;
mod report;
mod run;
mod set;

pub use self::judge::{INSTRUCTION, Judge, Verdict};
pub use self::matcher::{
    ArgMatcher, CalledTool, Check, ExpectedCall, ResponseMatcher, Trajectory, TrajectoryMatch,
};
pub use self::report::{CaseResult, EvalReport, Table, TurnResult};
pub use self::run::{DEFAULT_CONCURRENCY, Evaluator};
pub use self::set::{Criteria, EvalCase, EvalSet, EvalTurn};
