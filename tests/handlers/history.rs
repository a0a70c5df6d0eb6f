//! History rewrites: `before_model` / `after_model` changes persist and steer the loop;
//! `wrap_model` changes are for one call.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::handlers::{after_model, before_model, wrap_model};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, Message, ToolCall};

use crate::support::{Calls, Log, counting_tool};

#[tokio::test]
async fn before_model_rewrites_persist_into_later_iterations() {
    let model = ScriptedModel::new([Turn::call("c1", "lookup", json!({})), Turn::text("Done.")]);
    let lookup = Calls::default();
    let agent = Agent::builder(model.clone())
        .instruction("Be helpful.")
        .tool(counting_tool("lookup", &lookup))
        .build()
        .unwrap();
    // Redacts the user's message, in the first iteration only.
    let redact = before_model(|cx, state| {
        if cx.iteration() == 1 {
            state.messages.to_mut()[1] = Message::user("my card is [redacted]");
        }
        Ok(())
    });

    let request = AgentRequest::user("my card is 4111").with_handler(redact);
    let result = agent.run(request).await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for (call, request) in requests.iter().enumerate() {
        assert_eq!(
            request.messages[1],
            Message::user("my card is [redacted]"),
            "model call {call}"
        );
        assert!(
            request
                .messages
                .iter()
                .all(|m| !m.content().contains("4111")),
            "model call {call} saw the original"
        );
    }
    // The second call sees the rewritten history plus what happened since.
    assert_eq!(requests[1].messages.len(), 4);
    assert_eq!(result.messages[1], Message::user("my card is [redacted]"));
}

#[tokio::test]
async fn before_model_hooks_each_see_the_previous_ones_rewrite() {
    let model = ScriptedModel::new([Turn::text("ok")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let seen = Log::default();
    let seen_by_second = seen.clone();

    let request = AgentRequest::user("hi")
        .with_handler(before_model(|_, state| {
            state.messages.push(Message::user("first was here"));
            Ok(())
        }))
        .with_handler(before_model(move |_, state| {
            let last = state.messages.last().map(Message::content).unwrap_or("");
            seen_by_second.push(last);
            state.messages.push(Message::user("second was here"));
            Ok(())
        }));
    agent.run(request).await.unwrap();

    assert_eq!(seen.entries(), ["first was here"]);
    assert_eq!(
        model.requests()[0].messages[..],
        [
            Message::user("hi"),
            Message::user("first was here"),
            Message::user("second was here"),
        ]
    );
}

#[tokio::test]
async fn after_model_removing_tool_calls_ends_the_run() {
    let model = ScriptedModel::new([
        Turn::call("c1", "shutdown", json!({})).with_text("Shutting down."),
        Turn::text("never asked for"),
    ]);
    let shutdown = Calls::default();
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("shutdown", &shutdown))
        .build()
        .unwrap();
    let guard = after_model(|_, state| {
        if let Some(calls) = state.messages.last_mut().and_then(|m| m.tool_calls_mut()) {
            calls.retain(|c| c.name != "shutdown");
        }
        Ok(())
    });

    let result = agent
        .run(AgentRequest::user("shut down").with_handler(guard))
        .await
        .unwrap();

    assert_eq!(shutdown.get(), 0, "the removed call must not run");
    assert_eq!(model.calls(), 1, "the run ended after the rewritten reply");
    assert!(result.tool_records.is_empty());
    assert_eq!(result.iterations, 1);
    assert_eq!(result.final_message, Message::assistant("Shutting down."));
    assert_eq!(result.messages.last(), Some(&result.final_message));
}

#[tokio::test]
async fn after_model_adding_a_tool_call_runs_the_tool() {
    let model = ScriptedModel::new([Turn::text("Hi."), Turn::text("Audited.")]);
    let audit = Calls::default();
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("audit", &audit))
        .build()
        .unwrap();
    let force_audit = after_model(|cx, state| {
        if cx.iteration() == 1 {
            let calls = state.messages.last_mut().and_then(|m| m.tool_calls_mut());
            calls
                .ok_or("the last message is not the model's reply")?
                .push(ToolCall::new("added", "audit", json!({})));
        }
        Ok(())
    });

    let result = agent
        .run(AgentRequest::user("hello").with_handler(force_audit))
        .await
        .unwrap();

    assert_eq!(audit.get(), 1, "the added call ran");
    assert_eq!(result.tool_records.len(), 1);
    assert_eq!(result.tool_records[0].call_id, "added");
    assert_eq!(model.calls(), 2, "the loop went back to the model");
    assert_eq!(
        model.requests()[1].messages.last(),
        Some(&Message::tool("added", "audit", "audit ran"))
    );
    assert_eq!(result.final_message.content(), "Audited.");
}

#[tokio::test]
async fn wrap_model_request_changes_are_for_one_call_only() {
    let model = ScriptedModel::new([Turn::call("c1", "lookup", json!({})), Turn::text("Done.")]);
    let lookup = Calls::default();
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("lookup", &lookup))
        .build()
        .unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let hint_first_call = wrap_model(move |mut request, next| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            request.messages.push(Message::system("hint for this call"));
        }
        next.run(request)
    });

    let request = AgentRequest::user("go").with_handler(hint_first_call);
    let result = agent.run(request).await.unwrap();

    let requests = model.requests();
    let has_hint =
        |messages: &[Message]| messages.iter().any(|m| m.content() == "hint for this call");
    assert!(has_hint(&requests[0].messages));
    assert!(
        !has_hint(&requests[1].messages),
        "the hint was for call 1 only"
    );
    assert!(
        !has_hint(&result.messages),
        "the loop's history never had it"
    );
}
