use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::handlers::{CallLimitExceeded, CallLimits, OnLimit};
use tower_adk::model::ToolChoice;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentError, AgentRequest, Hook, RunStatus, ToolErrorKind};

use crate::counting_tool;

fn limit_error(error: &AgentError) -> &CallLimitExceeded {
    let handler = error.as_handler().expect("a handler error");
    assert_eq!(handler.handler(), "call_limits");
    let source = std::error::Error::source(handler).expect("a source");
    source
        .downcast_ref::<CallLimitExceeded>()
        .expect("a CallLimitExceeded")
}

#[tokio::test]
async fn model_call_limit_ending_the_run_makes_the_last_call_without_tools() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::call("c1", "work", json!({})),
        // Asks for a tool again on its last allowed call: not obeyed.
        Turn::call("c2", "work", json!({})).with_text("Here is what I have."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("work", &calls))
        .build()
        .unwrap();
    let limits = CallLimits::new().model_calls(2).on_limit(OnLimit::EndRun);

    let result = agent
        .run(AgentRequest::user("go").with_handler(limits))
        .await
        .unwrap();

    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(result.final_message.content(), "Here is what I have.");
    assert!(result.final_message.tool_calls().is_empty());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].tool_names().collect::<Vec<_>>(), ["work"]);
    assert_eq!(
        requests[1].tools.len(),
        0,
        "the last allowed call offers no tools"
    );
    assert_eq!(requests[1].options.tool_choice, ToolChoice::None);
}

#[tokio::test]
async fn model_call_limit_as_an_error_fails_the_run_before_the_extra_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::call("c1", "work", json!({})),
        Turn::call("c2", "work", json!({})),
        Turn::text("never reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("work", &calls))
        .build()
        .unwrap();
    let limits = CallLimits::new().model_calls(2).on_limit(OnLimit::Error);

    let error = agent
        .run(AgentRequest::user("go").with_handler(limits))
        .await
        .unwrap_err();

    assert_eq!(error.as_handler().unwrap().hook(), Hook::BeforeModel);
    assert_eq!(
        limit_error(&error),
        &CallLimitExceeded {
            what: "model calls".into(),
            limit: 2
        }
    );
    assert_eq!(model.calls(), 2);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn tool_call_limit_answering_the_model_refuses_only_the_calls_over_it() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::call("c1", "work", json!({}))
            .with_call("c2", "work", json!({}))
            .with_call("c3", "work", json!({})),
        Turn::text("two done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("work", &calls))
        .parallel_tool_calls(1)
        .build()
        .unwrap();
    let limits = CallLimits::new()
        .tool_calls(2)
        .on_limit(OnLimit::AnswerModel);

    let result = agent
        .run(AgentRequest::user("go").with_handler(limits))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let kinds: Vec<_> = result
        .tool_records
        .iter()
        .map(|r| r.error.as_ref().map(|e| e.kind()))
        .collect();
    assert_eq!(kinds, [None, None, Some(ToolErrorKind::LimitReached)]);
    assert_eq!(result.final_message.content(), "two done");
    // The model was still offered tools afterwards: answering the model does not end the run.
    assert_eq!(
        model.requests()[1].tool_names().collect::<Vec<_>>(),
        ["work"]
    );
}

#[tokio::test]
async fn per_tool_limit_as_an_error_fails_the_run_and_skips_the_call() {
    let (search, other) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let model = ScriptedModel::new([
        Turn::call("c1", "search", json!({})).with_call("c2", "other", json!({})),
        Turn::call("c3", "search", json!({})),
        Turn::text("never reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("search", &search))
        .tool(counting_tool("other", &other))
        .build()
        .unwrap();
    let limits = CallLimits::new()
        .per_tool("search", 1)
        .on_limit(OnLimit::Error);

    let error = agent
        .run(AgentRequest::user("go").with_handler(limits))
        .await
        .unwrap_err();

    assert_eq!(error.as_handler().unwrap().hook(), Hook::WrapToolInvoke);
    assert_eq!(
        limit_error(&error),
        &CallLimitExceeded {
            what: "calls of tool `search`".into(),
            limit: 1
        }
    );
    assert_eq!(search.load(Ordering::SeqCst), 1);
    assert_eq!(other.load(Ordering::SeqCst), 1);
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn tool_call_limit_ending_the_run_asks_for_a_final_answer_without_tools() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::call("c1", "work", json!({})),
        Turn::call("c2", "work", json!({})),
        Turn::text("Stopping here."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("work", &calls))
        .build()
        .unwrap();
    let limits = CallLimits::new().tool_calls(1);

    let result = agent
        .run(AgentRequest::user("go").with_handler(limits))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        result.tool_records[1].error.as_ref().unwrap().kind(),
        ToolErrorKind::LimitReached
    );
    assert_eq!(result.final_message.content(), "Stopping here.");
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].tools.len(), 1);
    assert_eq!(
        requests[2].tools.len(),
        0,
        "the call after the limit offers no tools"
    );
}

/// A model's turns: two calls of `work` at once, then the answer.
fn two_work_calls() -> [Turn; 2] {
    [
        Turn::call("c1", "work", json!({})).with_call("c2", "work", json!({})),
        Turn::text("done"),
    ]
}

/// An agent with this model and the `work` tool, which counts its calls in `calls`.
fn work_agent(model: ScriptedModel, calls: &Arc<AtomicUsize>) -> Agent {
    Agent::builder(model)
        .tool(counting_tool("work", calls))
        .build()
        .unwrap()
}

#[tokio::test]
async fn limits_count_per_run() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = work_agent(ScriptedModel::per_run(two_work_calls()), &calls);
    let limits = CallLimits::new()
        .tool_calls(1)
        .on_limit(OnLimit::AnswerModel);

    for run in 1..=3 {
        let result = agent
            .run(AgentRequest::user("go").with_handler(limits.clone()))
            .await
            .unwrap();
        assert_eq!(
            result
                .tool_records
                .iter()
                .filter(|r| r.is_success())
                .count(),
            1
        );
        assert_eq!(
            calls.load(Ordering::SeqCst),
            run,
            "each run gets its own budget"
        );
    }
}

/// The counts are the run's own data, in its run-local values: a checkpoint of the run
/// keeps them, and no cell outside the run holds them.
#[tokio::test]
async fn the_counts_are_kept_in_the_runs_own_values() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = work_agent(ScriptedModel::new(two_work_calls()), &calls);
    let limits = CallLimits::new().tool_calls(5);

    let result = agent
        .run(AgentRequest::user("go").with_handler(limits))
        .await
        .unwrap();

    let counts = result.locals.get_value(CallLimits::LOCALS_KEY).cloned();
    let counts = counts.unwrap_or_default();
    assert_eq!(counts["model_calls"], 2);
    assert_eq!(counts["tool_calls"], 2);
    assert_eq!(counts["per_tool"]["work"], 2);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
