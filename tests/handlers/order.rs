//! Rules 1 and 4: handlers from `HandlerLayer`s (in `ServiceBuilder` order) come first,
//! then the request's own handlers; `before_*` run in that order, `wrap_*` nest with the
//! first outermost, `after_*` unwind innermost first.

use std::convert::Infallible;

use serde_json::json;
use tower::{ServiceBuilder, ServiceExt, service_fn};
use tower_adk::{Agent, AgentRequest, BoxError, HandlerLayer, Hook, Message, ModelRequest};
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
