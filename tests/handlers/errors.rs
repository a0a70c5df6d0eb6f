//! Rule 2: a failing hook stops the run with `AgentError::Handler`, naming the hook and
//! the handler; no later handler of that hook runs; no model call after a failed
//! `before_*`.

use std::error::Error as _;

use serde_json::json;
use tower_adk::handlers::wrap_tool_invoke;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentError, AgentRequest, Handler, Hook, Message, ToolError};
use tower_adk::{ToolErrorKind, ToolNext, ToolOutput, ToolRequest};

use crate::support::{Calls, Log, Probe, counting_stream_tool, counting_tool};

/// What a run with handlers `first`, `fails` and `last` (in that order), where `fails`
/// fails in `hook`, left behind.
struct Failed {
    error: AgentError,
    log: Log,
    model_calls: usize,
    tool_calls: usize,
}

/// Runs an agent whose model calls `work` once, then answers; `work` streams if
/// `streaming`.
async fn run_failing_in(hook: Hook, streaming: bool) -> Failed {
    let log = Log::default();
    let model = ScriptedModel::new([Turn::call("c1", "work", json!({})), Turn::text("done")]);
    let work = Calls::default();
    let tool = if streaming {
        counting_stream_tool("work", &work)
    } else {
        counting_tool("work", &work)
    };
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();

    let request = AgentRequest::user("go")
        .with_handler(Probe::new("first", &log))
        .with_handler(Probe::failing_at("fails", &log, hook))
        .with_handler(Probe::new("last", &log));
    let error = agent.run(request).await.unwrap_err();

    Failed {
        error,
        log,
        model_calls: model.calls(),
        tool_calls: work.get(),
    }
}

/// The run failed with a handler error naming `hook` and the `fails` handler, carrying
/// the hook's own error.
fn assert_named(failed: &Failed, hook: Hook) {
    let Some(error) = failed.error.as_handler() else {
        panic!("expected AgentError::Handler, got {:?}", failed.error);
    };
    assert_eq!(error.hook(), hook);
    assert_eq!(error.handler(), "fails");
    let source = error.source().map(ToString::to_string);
    assert_eq!(
        source.as_deref(),
        Some(&*format!("fails refused in {hook}"))
    );
    assert!(matches!(failed.error, AgentError::Handler(_)));
}

#[tokio::test]
async fn before_agent_error_stops_the_run_before_any_model_call() {
    let failed = run_failing_in(Hook::BeforeAgent, false).await;

    assert_named(&failed, Hook::BeforeAgent);
    assert_eq!(failed.model_calls, 0, "the model must not be called");
    assert_eq!(failed.tool_calls, 0);
    // `last` never ran, and no other hook of the run did either.
    assert_eq!(
        failed.log.entries(),
        ["first.before_agent", "fails.before_agent"]
    );
}

#[tokio::test]
async fn before_model_error_stops_the_run_before_the_model_call() {
    let failed = run_failing_in(Hook::BeforeModel, false).await;

    assert_named(&failed, Hook::BeforeModel);
    assert_eq!(failed.model_calls, 0, "the model must not be called");
    assert_eq!(
        failed.log.entries(),
        [
            "first.before_agent",
            "fails.before_agent",
            "last.before_agent",
            "first.before_model",
            "fails.before_model",
        ]
    );
}

#[tokio::test]
async fn wrap_model_error_stops_the_run_without_calling_inner_wrappers_or_the_model() {
    let failed = run_failing_in(Hook::WrapModel, false).await;

    assert_named(&failed, Hook::WrapModel);
    assert_eq!(failed.model_calls, 0);
    assert_eq!(
        failed.log.of(Hook::WrapModel),
        [
            "first.wrap_model",
            "fails.wrap_model",
            "first.wrap_model returned"
        ]
    );
    assert!(failed.log.of(Hook::AfterModel).is_empty());
    assert!(failed.log.of(Hook::AfterAgent).is_empty());
}

#[tokio::test]
async fn after_model_error_stops_the_run_before_the_tools_and_outer_handlers() {
    let failed = run_failing_in(Hook::AfterModel, false).await;

    assert_named(&failed, Hook::AfterModel);
    // after_model unwinds innermost first: `last` ran, `first` comes after `fails`.
    assert_eq!(
        failed.log.of(Hook::AfterModel),
        ["last.after_model", "fails.after_model"]
    );
    assert_eq!(failed.model_calls, 1);
    assert_eq!(failed.tool_calls, 0, "the reply's tool call must not run");
    assert!(failed.log.of(Hook::WrapToolInvoke).is_empty());
}

#[tokio::test]
async fn after_agent_error_fails_the_run_and_skips_outer_handlers() {
    let failed = run_failing_in(Hook::AfterAgent, false).await;

    assert_named(&failed, Hook::AfterAgent);
    assert_eq!(
        failed.log.of(Hook::AfterAgent),
        ["last.after_agent", "fails.after_agent"]
    );
    assert_eq!(failed.model_calls, 2);
    assert_eq!(failed.tool_calls, 1);
}

#[tokio::test]
async fn tool_invoke_wrapper_error_stops_the_run_without_running_the_tool() {
    let failed = run_failing_in(Hook::WrapToolInvoke, false).await;

    assert_named(&failed, Hook::WrapToolInvoke);
    assert_eq!(failed.tool_calls, 0);
    assert_eq!(
        failed.log.of(Hook::WrapToolInvoke),
        [
            "first.wrap_tool_invoke",
            "fails.wrap_tool_invoke",
            "first.wrap_tool_invoke returned"
        ]
    );
    assert_eq!(failed.model_calls, 1, "no model call after the failure");
    assert!(failed.log.of(Hook::AfterAgent).is_empty());
}

#[tokio::test]
async fn tool_stream_wrapper_error_stops_the_run_without_running_the_tool() {
    let failed = run_failing_in(Hook::WrapToolStream, true).await;

    assert_named(&failed, Hook::WrapToolStream);
    assert_eq!(failed.tool_calls, 0);
    assert_eq!(
        failed.log.of(Hook::WrapToolStream),
        [
            "first.wrap_tool_stream",
            "fails.wrap_tool_stream",
            "first.wrap_tool_stream returned"
        ]
    );
    assert_eq!(failed.model_calls, 1, "no model call after the failure");
}

#[tokio::test]
async fn tool_wrapper_returning_a_tool_error_answers_the_model_and_the_run_goes_on() {
    let model = ScriptedModel::new([
        Turn::call("c1", "work", json!({})),
        Turn::text("Understood."),
    ]);
    let work = Calls::default();
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("work", &work))
        .build()
        .unwrap();
    let deny = wrap_tool_invoke(|_: ToolRequest, _: ToolNext| async {
        Err::<ToolOutput, _>(ToolError::denied("not during maintenance").into())
    });

    let result = agent
        .run(AgentRequest::user("go").with_handler(deny))
        .await
        .unwrap();

    assert_eq!(work.get(), 0);
    let kind = result.tool_records[0].error.as_ref().map(ToolError::kind);
    assert_eq!(kind, Some(ToolErrorKind::Denied));
    assert!(matches!(
        model.requests()[1].messages.last(),
        Some(Message::Tool { is_error: true, content, .. }) if content.contains("not during maintenance")
    ));
    assert_eq!(result.final_message.content(), "Understood.");
}

#[tokio::test]
async fn handler_errors_name_the_handler_by_its_type_unless_it_names_itself() {
    struct Unnamed;
    impl Handler for Unnamed {
        async fn before_agent(
            &self,
            _: &mut tower_adk::RunContext,
            _: tower_adk::AgentConfig,
        ) -> Result<tower_adk::AgentConfig, tower_adk::BoxError> {
            Err("no".into())
        }
    }
    let model = ScriptedModel::new([Turn::text("unused")]);
    let agent = Agent::builder(model.clone()).build().unwrap();

    let error = agent
        .run(AgentRequest::user("go").with_handler(Unnamed))
        .await
        .unwrap_err();
    let error = error.as_handler().unwrap();
    assert!(error.handler().ends_with("Unnamed"), "{}", error.handler());
    assert!(error.to_string().contains("before_agent"), "{error}");

    // The built-in constructors name themselves.
    let failing = tower_adk::handlers::before_model(|_, _| Err("no".into()));
    let error = agent
        .run(AgentRequest::user("go").with_handler(failing))
        .await
        .unwrap_err();
    assert_eq!(error.as_handler().unwrap().handler(), "before_model");
    assert_eq!(model.calls(), 0);
}
