//! The evaluator: cases against agents, concurrently, each on a thread of its own;
//! thresholds; the judge; tokens and latency; the report's JSON, table and HTML.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tower::ServiceExt;
use tower_adk::eval::{
    Criteria, EvalCase, EvalReport, EvalSet, EvalTurn, Evaluator, ExpectedCall, Judge,
    ResponseMatcher, Trajectory, TrajectoryMatch,
};
use tower_adk::model::Usage;
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, BoxError, ModelResponse, Tool, ToolInfo, ToolOutput};

/// A case of one turn that expects a call of `lookup` and an answer containing `text`.
fn lookup_case(id: &str, text: &str) -> EvalCase {
    EvalCase::new(id).turn(
        EvalTurn::user("Where is order 7?")
            .tool_uses(Trajectory::new(TrajectoryMatch::Exact).call(ExpectedCall::new("lookup")))
            .response(ResponseMatcher::Contains(text.into())),
    )
}

/// An agent that looks up, then says it shipped; its model reports 100 + 20 tokens a call.
fn lookup_agent() -> Result<Agent, BoxError> {
    let model = ScriptedModel::new([
        Turn::call("c1", "lookup", json!({"id": 7})),
        Turn::text("Order 7 has shipped."),
    ])
    .map_response(|response: ModelResponse| {
        response.with_usage(Some("scripted".into()), Usage::new(100, 20, 120))
    });
    Ok(Agent::builder(model)
        .tool(text_tool("lookup", "shipped"))
        .build()?)
}

#[tokio::test]
async fn a_case_under_its_threshold_fails_and_one_at_it_passes() {
    let set = EvalSet::new("orders")
        .case(lookup_case("shipped", "shipped"))
        .case(lookup_case("delivered", "delivered"))
        .case(lookup_case("lenient", "delivered").criteria(Criteria::new(1.0, 0.0)));
    let report = Evaluator::new(&set)
        .run_with(|_| async { lookup_agent() })
        .await;

    let ids: Vec<_> = report
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.passed))
        .collect();
    assert_eq!(
        ids,
        [("shipped", true), ("delivered", false), ("lenient", true)]
    );
    let delivered = report.case("delivered").unwrap();
    assert_eq!(delivered.trajectory_score, Some(1.0));
    assert_eq!(delivered.response_score, Some(0.0));
    assert_eq!(
        delivered.turns[0].response_checks[0].detail,
        "lacks `delivered`"
    );
    assert!(!report.passed());
    assert_eq!(report.failures().count(), 1);
}

#[tokio::test]
async fn tokens_and_model_calls_come_from_the_runs_usage() {
    let set = EvalSet::new("orders").case(lookup_case("shipped", "shipped"));
    let report = Evaluator::new(&set)
        .run_with(|_| async { lookup_agent() })
        .await;
    let case = &report.cases[0];
    assert_eq!(case.model_calls, 2);
    assert_eq!(case.usage, Usage::new(200, 40, 240));
    assert!(case.latency_ms > 0.0);
    assert_eq!(case.turns[0].tool_calls[0].args, json!({"id": 7}));
}

#[tokio::test]
async fn cases_run_concurrently_up_to_the_limit() {
    // Each case's tool waits at a barrier for three: it opens only when three cases
    // run at once.
    let barrier = Arc::new(tokio::sync::Barrier::new(3));
    let wait = {
        let barrier = Arc::clone(&barrier);
        Tool::from_fn(ToolInfo::new("wait", "waits for the others"), move |_| {
            let barrier = Arc::clone(&barrier);
            async move {
                barrier.wait().await;
                Ok::<_, std::convert::Infallible>(ToolOutput::new("all here"))
            }
        })
    };
    let mut set = EvalSet::new("together");
    for id in ["a", "b", "c"] {
        set = set.case(
            EvalCase::new(id)
                .turn(EvalTurn::user("go").response(ResponseMatcher::Exact("done".into()))),
        );
    }
    let make = |_: &EvalCase| {
        let wait = wait.clone();
        async move {
            let model =
                ScriptedModel::new([Turn::call("w", "wait", json!({})), Turn::text("done")]);
            Ok::<_, BoxError>(Agent::builder(model).tool(wait).build()?)
        }
    };
    let report = tokio::time::timeout(
        Duration::from_secs(30),
        Evaluator::new(&set).concurrency(3).run_with(make),
    )
    .await
    .expect("three cases at once pass the barrier");
    assert!(report.passed(), "{}", report.table(None));

    // One at a time, the first case waits for ever.
    let one = tokio::time::timeout(
        Duration::from_millis(300),
        Evaluator::new(&set).concurrency(1).run_with(make),
    )
    .await;
    assert!(
        one.is_err(),
        "one case at a time cannot pass a barrier for three"
    );
}

#[tokio::test]
async fn each_case_runs_its_turns_on_a_thread_of_its_own() {
    // One agent for every case: the threads keep the conversations apart.
    let model = ScriptedModel::per_run([Turn::text("first answer"), Turn::text("second answer")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let two_turns = |id: &str| {
        EvalCase::new(id)
            .turn(
                EvalTurn::user(format!("{id} one"))
                    .response(ResponseMatcher::Exact("first answer".into())),
            )
            .turn(
                EvalTurn::user(format!("{id} two"))
                    .response(ResponseMatcher::Exact("second answer".into())),
            )
    };
    let set = EvalSet::new("threads")
        .case(two_turns("a"))
        .case(two_turns("b"));
    let report = Evaluator::new(&set).concurrency(1).run(agent).await;
    assert!(report.passed(), "{}", report.table(None));

    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    let users = |i: usize| -> Vec<String> {
        requests[i]
            .messages
            .iter()
            .filter(|m| matches!(m, tower_adk::Message::User { .. }))
            .map(|m| m.content().to_owned())
            .collect()
    };
    // The second turn sees the first; the second case starts afresh.
    assert_eq!(users(1), ["a one", "a two"]);
    assert_eq!(users(2), ["b one"]);
}

#[tokio::test]
async fn a_failed_run_fails_its_case_and_the_turns_after_it_score_zero() {
    let set = EvalSet::new("broken").case(
        EvalCase::new("errors")
            .turn(EvalTurn::user("one").response(ResponseMatcher::Contains("x".into())))
            .turn(EvalTurn::user("two").tool_uses(Trajectory::new(TrajectoryMatch::Exact))),
    );
    let report = Evaluator::new(&set)
        .run_with(|_| async {
            let model = ScriptedModel::new([Turn::error("the provider is down")]);
            Ok::<_, BoxError>(Agent::builder(model).build()?)
        })
        .await;
    let case = &report.cases[0];
    assert!(!case.passed);
    assert!(
        case.error.as_deref().unwrap().starts_with("turn 1:"),
        "{:?}",
        case.error
    );
    assert!(case.turns.is_empty());
    assert_eq!(case.trajectory_score, Some(0.0));
    assert_eq!(case.response_score, Some(0.0));

    // An agent that cannot be made fails its case the same way.
    let report = Evaluator::new(&set)
        .run_with(|_| async { Err::<Agent, BoxError>("no such model".into()) })
        .await;
    assert_eq!(
        report.cases[0].error.as_deref(),
        Some("the agent could not be made: no such model")
    );
}

#[tokio::test]
async fn a_judge_scores_against_its_rubric_and_sees_the_conversation() {
    let judge_model = ScriptedModel::per_run([Turn::call(
        "v",
        "final_answer",
        json!({"score": 0.6, "reason": "Polite, but vague."}),
    )]);
    let judge = Judge::new(judge_model.clone()).unwrap();
    let set = EvalSet::new("judged")
        .criteria(Criteria::new(1.0, 0.5))
        .case(
            EvalCase::new("polite").turn(
                EvalTurn::user("Where is order 7?")
                    .response(ResponseMatcher::judge("Says where the order is, politely."))
                    .response(ResponseMatcher::Contains("shipped".into())),
            ),
        );
    let report = Evaluator::new(&set)
        .judge(judge)
        .run_with(|_| async { lookup_agent() })
        .await;

    let case = &report.cases[0];
    let judged = &case.turns[0].response_checks[0];
    assert_eq!((judged.kind.as_str(), judged.score), ("judge", 0.6));
    assert_eq!(judged.detail, "Polite, but vague.");
    assert!((case.response_score.unwrap() - 0.8).abs() < 1e-9);
    assert!(case.passed);

    let asked = judge_model.requests()[0].messages[1].content().to_owned();
    assert!(
        asked.contains("Says where the order is, politely."),
        "{asked}"
    );
    assert!(asked.contains("user: Where is order 7?"), "{asked}");
    assert!(
        asked.contains("Answer to grade:\nOrder 7 has shipped."),
        "{asked}"
    );
}

#[tokio::test]
async fn a_judge_out_of_range_or_missing_scores_zero_and_says_why() {
    let judge = Judge::new(ScriptedModel::per_run([Turn::call(
        "v",
        "final_answer",
        json!({"score": 7, "reason": "Great!"}),
    )]))
    .unwrap();
    let set = EvalSet::new("judged").case(
        EvalCase::new("c").turn(EvalTurn::user("hi").response(ResponseMatcher::judge("Good?"))),
    );
    let report = Evaluator::new(&set)
        .judge(judge)
        .run_with(|_| async { lookup_agent() })
        .await;
    let check = &report.cases[0].turns[0].response_checks[0];
    assert_eq!(check.score, 0.0);
    assert_eq!(check.detail, "the judge's score 7 is outside 0 to 1");

    let report = Evaluator::new(&set)
        .run_with(|_| async { lookup_agent() })
        .await;
    let check = &report.cases[0].turns[0].response_checks[0];
    assert_eq!(check.detail, "no judge was given to the evaluation");
    assert!(!report.passed());
}

#[tokio::test]
async fn the_report_round_trips_as_json_and_compares_with_a_baseline() {
    let set = EvalSet::new("orders")
        .case(lookup_case("shipped", "shipped"))
        .case(lookup_case("delivered", "delivered"));
    let report = Evaluator::new(&set)
        .run_with(|_| async { lookup_agent() })
        .await;
    let json = serde_json::to_string(&report).unwrap();
    let baseline: EvalReport = serde_json::from_str(&json).unwrap();
    assert_eq!(baseline, report);

    // The next run: `delivered` now passes, `shipped` now fails.
    let next = EvalSet::new("orders")
        .case(lookup_case("shipped", "delivered"))
        .case(lookup_case("delivered", "shipped"))
        .case(lookup_case("new", "shipped"));
    let now = Evaluator::new(&next)
        .run_with(|_| async { lookup_agent() })
        .await;
    let table = now.table(Some(&baseline)).to_string();
    let line = |id: &str| {
        table
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap()
            .to_owned()
    };
    assert!(line("shipped").contains("0.00 ≥1.00 (-1.00)"), "{table}");
    assert!(line("delivered").contains("1.00 ≥1.00 (+1.00)"), "{table}");
    assert!(line("delivered").contains("1.00 ≥1.00 (=)"), "{table}");
    assert!(line("new").contains("(new)"), "{table}");
    assert!(table.ends_with("2 of 3 cases passed"), "{table}");

    let page = now.html(Some(&baseline));
    for id in [
        "scores",
        "latency",
        "tokens",
        "baseline-scores",
        "baseline-latency",
    ] {
        assert!(page.contains(&format!("<svg id=\"{id}\"")), "no plot {id}");
    }
    // The baseline's bars: `shipped` scored 1 then, 0 now.
    assert!(
        page.contains("<title>shipped: response, baseline 1</title>"),
        "{page}"
    );
    assert!(
        page.contains("<title>shipped: response, now 0</title>"),
        "{page}"
    );
    assert!(
        page.contains("<title>shipped: prompt 200</title>"),
        "{page}"
    );
    assert!(!now.html(None).contains("baseline-scores"));
}
