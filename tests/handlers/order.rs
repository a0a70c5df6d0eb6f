//! Rules 1 and 4: handlers from `HandlerLayer`s (in `ServiceBuilder` order) come first,
//! then the request's own handlers; `before_*` run in that order, `wrap_*` nest with the
//! first outermost, `after_*` unwind innermost first.

use std::convert::Infallible;

use serde_json::json;
use tower::{ServiceBuilder, ServiceExt, service_fn};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, BoxError, HandlerLayer, Hook, Hooks, Message, ModelRequest};
use tower_adk::{Handler, ModelResponse, Tool, ToolCall, ToolInfo, ToolOutput};

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

#[tokio::test]
async fn a_handler_runs_only_at_the_hooks_it_declares_and_the_others_still_nest() {
    let log = Log::default();
    let model = ScriptedModel::new([Turn::call("c1", "tool", json!({})), Turn::text("done")]);
    let tool = Tool::from_fn(ToolInfo::new("tool", "Answers"), |_| async {
        Ok::<_, Infallible>(ToolOutput::new("ok"))
    });
    let agent = Agent::builder(model).tool(tool).build().unwrap();
    let declared = Hooks::only(Hook::BeforeModel).with(Hook::WrapToolInvoke);
    let request = AgentRequest::user("go")
        .with_handler(Probe::new("outer", &log))
        .with_handler(Probe::declaring("declared", &log, declared))
        .with_handler(Probe::new("inner", &log));
    let result = agent.run(request).await.unwrap();
    assert_eq!(result.final_message.content(), "done");

    let declared_ran: Vec<String> = log
        .entries()
        .into_iter()
        .filter(|e| e.starts_with("declared."))
        .collect();
    // Two model calls, one tool call; nothing at the undeclared hooks.
    assert_eq!(
        declared_ran,
        [
            "declared.before_model",
            "declared.wrap_tool_invoke",
            "declared.wrap_tool_invoke returned",
            "declared.before_model",
        ]
    );
    // The wrappers it skips still nest around the model, without it.
    let mut one_call = nested(&["outer", "inner"], Hook::WrapModel, "model");
    one_call.retain(|e| e != "model");
    assert_eq!(
        log.of(Hook::WrapModel),
        [one_call.clone(), one_call].concat()
    );
    assert_eq!(
        log.of(Hook::WrapToolInvoke),
        [
            "outer.wrap_tool_invoke",
            "declared.wrap_tool_invoke",
            "inner.wrap_tool_invoke",
            "inner.wrap_tool_invoke returned",
            "declared.wrap_tool_invoke returned",
            "outer.wrap_tool_invoke returned",
        ]
    );
    assert_eq!(Probe::new("all", &log).hooks(), Hooks::ALL);
    assert_eq!(None::<Probe>.hooks(), Hooks::NONE);
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
