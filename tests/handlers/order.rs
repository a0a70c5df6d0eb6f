//! Rules 1 and 4: handlers from `HandlerLayer`s (in `ServiceBuilder` order) come first,
//! then the request's own handlers; `before_*` run in that order, `wrap_*` nest with the
//! first outermost, `after_*` unwind innermost first.

use std::convert::Infallible;

use serde_json::json;
use tower::{ServiceBuilder, ServiceExt, service_fn};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, BoxError, BoxHandler, Handler, HandlerLayer, Hook, Message, ModelRequest,
};
use tower_adk::{History, RunContext, ToolNext, ToolRequest};
use tower_adk::{ModelResponse, Tool, ToolCall, ToolInfo, ToolOutput};

use crate::support::{Log, Probe};

/// Each name in order, as `"<name>.<hook>"`.
fn each(names: &[&str], hook: Hook) -> Vec<String> {
    names.iter().map(|n| format!("{n}.{hook}")).collect()
}

/// Nested wrappers: every entry, `inner`, then every return in reverse.
fn nested(names: &[&str], hook: Hook, inner: &str) -> Vec<String> {
    let mut entries = each(names, hook);
    entries.push(inner.to_owned());
    entries.extend(names.iter().rev().map(|n| format!("{n}.{hook} returned")));
    entries
}

#[tokio::test]
async fn layer_handlers_run_before_request_handlers_and_after_hooks_unwind_innermost_first() {
    let log = Log::default();
    let model_log = log.clone();
    // Calls `tool` first, then answers once it sees the tool's result.
    let model = service_fn(move |request: ModelRequest| {
        model_log.push("model");
        let reply = match request.messages.last() {
            Some(Message::Tool { .. }) => Message::assistant("done"),
            _ => Message::assistant_with_calls("", vec![ToolCall::new("c1", "tool", json!({}))]),
        };
        async move { Ok::<_, BoxError>(ModelResponse::message(reply)) }
    });
    let tool_log = log.clone();
    let tool = Tool::from_fn(ToolInfo::new("tool", "Logs its call"), move |_| {
        tool_log.push("tool");
        async { Ok::<_, Infallible>(ToolOutput::new("ok")) }
    });
    let agent = Agent::builder(model).tool(tool).build().unwrap();
    let service = ServiceBuilder::new()
        .layer(HandlerLayer::new(Probe::new("layer1", &log)))
        .layer(HandlerLayer::new(Probe::new("layer2", &log)))
        .service(agent);

    let request = AgentRequest::user("go")
        .with_handler(Probe::new("request1", &log))
        .with_handler(Probe::new("request2", &log));
    let run = service.oneshot(request).await.unwrap();
    let result = run.await.unwrap();
    assert_eq!(result.final_message.content(), "done");

    let order = ["layer1", "layer2", "request1", "request2"];
    let unwind = ["request2", "request1", "layer2", "layer1"];
    let mut expected = each(&order, Hook::BeforeAgent);
    // Iteration 1: the model asks for the tool.
    expected.extend(each(&order, Hook::BeforeModel));
    expected.extend(nested(&order, Hook::WrapModel, "model"));
    expected.extend(each(&unwind, Hook::AfterModel));
    expected.extend(nested(&order, Hook::WrapToolInvoke, "tool"));
    // Iteration 2: the model answers.
    expected.extend(each(&order, Hook::BeforeModel));
    expected.extend(nested(&order, Hook::WrapModel, "model"));
    expected.extend(each(&unwind, Hook::AfterModel));
    expected.extend(each(&unwind, Hook::AfterAgent));
    assert_eq!(log.entries(), expected);
}

/// Implements two hooks, logging each call, and leaves the rest to their defaults.
struct Partial(Log);

impl Handler for Partial {
    async fn before_model(&self, _: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        self.0.push("partial.before_model".to_owned());
        Ok(())
    }

    async fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> Result<ToolOutput, BoxError> {
        self.0.push("partial.wrap_tool_invoke".to_owned());
        next.run(request).await
    }
}

#[tokio::test]
async fn a_handler_runs_at_every_hook_it_implements_is_skipped_at_the_others_and_they_still_nest() {
    let log = Log::default();
    let script = || ScriptedModel::new([Turn::call("c1", "tool", json!({})), Turn::text("done")]);
    let tool = || {
        Tool::from_fn(ToolInfo::new("tool", "Answers"), |_| async {
            Ok::<_, Infallible>(ToolOutput::new("ok"))
        })
    };
    let partial = BoxHandler::new(Partial(log.clone()));
    for run in 0..2 {
        let agent = Agent::builder(script()).tool(tool()).build().unwrap();
        let request = AgentRequest::user("go")
            .with_handler(Probe::new("outer", &log))
            .with_handler(partial.clone())
            .with_handler(Probe::new("inner", &log));
        let result = agent.run(request).await.unwrap();
        assert_eq!(result.final_message.content(), "done", "run {run}");

        let partial_ran: Vec<String> = log
            .entries()
            .into_iter()
            .filter(|e| e.starts_with("partial."))
            .collect();
        // Two model calls, one tool call: at its own hooks, every time.
        assert_eq!(
            partial_ran,
            [
                "partial.before_model",
                "partial.wrap_tool_invoke",
                "partial.before_model"
            ],
            "run {run}"
        );
        // The wrappers it passes through still nest around the model, without it.
        let mut one_call = nested(&["outer", "inner"], Hook::WrapModel, "model");
        one_call.retain(|e| e != "model");
        assert_eq!(
            log.of(Hook::WrapModel),
            [one_call.clone(), one_call].concat(),
            "run {run}"
        );
        log.clear();
    }
    // Its own hooks are called; those it passed through are skipped from now on.
    for hook in [Hook::BeforeModel, Hook::WrapToolInvoke] {
        assert!(partial.implements(hook), "{hook}");
    }
    for hook in [
        Hook::BeforeAgent,
        Hook::WrapModel,
        Hook::AfterModel,
        Hook::AfterAgent,
    ] {
        assert!(!partial.implements(hook), "{hook}");
    }
}

/// Calls the logging `Partial`'s wrap_tool_invoke on odd calls and `()`'s pass-through
/// default on even ones: it passes through only sometimes.
struct Sometimes {
    partial: Partial,
    calls: std::sync::atomic::AtomicUsize,
}

impl Handler for Sometimes {
    async fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> Result<ToolOutput, BoxError> {
        let call = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if call.is_multiple_of(2) {
            ().wrap_tool_invoke(request, next).await
        } else {
            self.partial.wrap_tool_invoke(request, next).await
        }
    }
}

#[tokio::test]
async fn a_handler_that_passes_through_another_handlers_default_only_sometimes_is_never_skipped() {
    let log = Log::default();
    let model = ScriptedModel::new([
        Turn::call("c1", "tool", json!({})),
        Turn::call("c2", "tool", json!({})),
        Turn::call("c3", "tool", json!({})),
        Turn::call("c4", "tool", json!({})),
        Turn::text("done"),
    ]);
    let tool = Tool::from_fn(ToolInfo::new("tool", "Answers"), |_| async {
        Ok::<_, Infallible>(ToolOutput::new("ok"))
    });
    let agent = Agent::builder(model).tool(tool).build().unwrap();
    let handler = BoxHandler::new(Sometimes {
        partial: Partial(log.clone()),
        calls: Default::default(),
    });
    let request = AgentRequest::user("go").with_handler(handler.clone());
    agent.run(request).await.unwrap();
    // Calls 1 and 3 passed through `()`'s default; calls 2 and 4 still reached it.
    assert_eq!(
        log.entries(),
        ["partial.wrap_tool_invoke", "partial.wrap_tool_invoke"]
    );
    assert!(handler.implements(Hook::WrapToolInvoke));
}

#[tokio::test]
async fn handler_layer_applies_to_every_request_of_the_wrapped_agent() {
    let log = Log::default();
    let model = tower_adk::testing::ScriptedModel::new([
        tower_adk::testing::Turn::text("one"),
        tower_adk::testing::Turn::text("two"),
    ]);
    let agent = Agent::builder(model).build().unwrap();
    let layer = HandlerLayer::new(Probe::new("layer", &log));
    let service = ServiceBuilder::new().layer(layer.clone()).service(agent);

    for input in ["a", "b"] {
        let run = service
            .clone()
            .oneshot(AgentRequest::user(input))
            .await
            .unwrap();
        run.await.unwrap();
    }

    assert_eq!(
        log.of(Hook::BeforeAgent),
        ["layer.before_agent", "layer.before_agent"]
    );
}
