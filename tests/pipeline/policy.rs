//! The policy gate: allow, deny, rewrite, ask, for invoked and streamed calls.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tower_adk::handlers::{Approval, Decision, policy, policy_async};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, BoxHandler, ToolErrorKind, ToolRequest};

use crate::{counted_tool, one_call, streamed_echo, tool_result};

#[tokio::test]
async fn a_denied_call_never_reaches_the_tool_and_the_model_sees_the_reason() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = one_call("wipe", json!({"n": 1}));
    let agent = Agent::builder(model.clone())
        .tool(counted_tool("wipe", &calls))
        .build()
        .unwrap();
    let gate = policy(|call| Decision::deny(format!("`{}` is off limits", call.name)));

    let result = agent
        .run(AgentRequest::user("go").with_handler(gate))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Denied);
    assert_eq!(error.message(), "`wipe` is off limits");
    assert_eq!(
        tool_result(&model.requests()[1], "c1"),
        ("error (denied): `wipe` is off limits".to_owned(), true)
    );
}

#[tokio::test]
async fn a_denied_streamed_call_never_reaches_the_tool() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("feed", json!({"n": 1})))
        .tool(streamed_echo("feed", &calls))
        .build()
        .unwrap();
    let gate = policy(|_| Decision::deny("no feeds today"));

    let result = agent
        .run(AgentRequest::user("go").with_handler(gate))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(
        result.tool_records[0].content,
        "error (denied): no feeds today"
    );
}

#[tokio::test]
async fn an_allowed_call_runs_unchanged() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("t", json!({"n": 1})))
        .tool(counted_tool("t", &calls))
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("go").with_handler(policy(|_| Decision::Allow)))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(result.tool_records[0].content, r#"{"n":1}"#);
}

#[tokio::test]
async fn a_rewrite_reaches_the_tool_in_place_of_the_models_arguments() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = one_call("t", json!({"n": 1000}));
    let agent = Agent::builder(model.clone())
        .tool(counted_tool("t", &calls))
        .build()
        .unwrap();
    let clamp = policy(|call| match call.arguments["n"].as_i64() {
        Some(n) if n > 10 => Decision::rewrite(json!({"n": 10})),
        _ => Decision::Allow,
    });

    let result = agent
        .run(AgentRequest::user("go").with_handler(clamp))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(result.tool_records[0].content, r#"{"n":10}"#);
    // The record keeps what the model sent.
    assert_eq!(result.tool_records[0].arguments, r#"{"n":1000}"#);
}

#[tokio::test]
async fn a_rewrite_reaches_a_streamed_tool_too() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("s", json!({"n": 1})))
        .tool(streamed_echo("s", &calls))
        .build()
        .unwrap();
    let gate = policy(|_| Decision::rewrite(json!({"n": 2})));

    let result = agent
        .run(AgentRequest::user("go").with_handler(gate))
        .await
        .unwrap();

    assert_eq!(result.tool_records[0].content, r#"{"n":2}"#);
}

#[tokio::test]
async fn an_invalid_rewrite_is_answered_with_invalid_arguments_and_the_tool_is_not_called() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = one_call("t", json!({"n": 1}));
    let agent = Agent::builder(model.clone())
        .tool(counted_tool("t", &calls))
        .build()
        .unwrap();
    let gate = policy(|_| Decision::rewrite(json!({"n": "ten"})));

    let result = agent
        .run(AgentRequest::user("go").with_handler(gate))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    assert!(error.message().contains("the policy"), "{error}");
    assert!(error.message().contains("/n"), "{error}");
    let (seen, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(
        is_error && seen.starts_with("error (invalid_arguments): "),
        "{seen}"
    );
}

/// A gate that asks about every call, and an approver that logs what it was asked and
/// answers `answer`.
fn asking_gate(answer: Approval, asked: &Arc<Mutex<Vec<String>>>) -> BoxHandler {
    let asked = Arc::clone(asked);
    policy(|call| Decision::ask(format!("`{}` spends money", call.name)))
        .approver(move |call: &ToolRequest, reason: &str| {
            asked
                .lock()
                .unwrap()
                .push(format!("{} {} {reason}", call.name, call.arguments));
            let answer = answer.clone();
            async move {
                tokio::task::yield_now().await;
                answer
            }
        })
        .into()
}

#[tokio::test]
async fn ask_and_approve_runs_the_call_after_the_approver_saw_it() {
    let calls = Arc::new(AtomicUsize::new(0));
    let asked = Arc::default();
    let agent = Agent::builder(one_call("buy", json!({"n": 3})))
        .tool(counted_tool("buy", &calls))
        .build()
        .unwrap();

    let request = AgentRequest::user("go").with_handler(asking_gate(Approval::Approve, &asked));
    let result = agent.run(request).await.unwrap();

    assert_eq!(
        *asked.lock().unwrap(),
        [r#"buy {"n":3} `buy` spends money"#]
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(result.tool_records[0].content, r#"{"n":3}"#);
}

#[tokio::test]
async fn ask_and_reject_denies_the_call_with_the_approvers_reason() {
    let calls = Arc::new(AtomicUsize::new(0));
    let asked = Arc::default();
    let model = one_call("buy", json!({"n": 3}));
    let agent = Agent::builder(model.clone())
        .tool(counted_tool("buy", &calls))
        .build()
        .unwrap();

    let gate = asking_gate(Approval::reject("over budget"), &asked);
    let result = agent
        .run(AgentRequest::user("go").with_handler(gate))
        .await
        .unwrap();

    assert_eq!(asked.lock().unwrap().len(), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Denied);
    assert!(error.message().contains("over budget"), "{error}");
    assert!(
        tool_result(&model.requests()[1], "c1")
            .0
            .contains("over budget")
    );
}

#[tokio::test]
async fn ask_and_edit_runs_the_call_with_the_edited_arguments() {
    let calls = Arc::new(AtomicUsize::new(0));
    let asked = Arc::default();
    let agent = Agent::builder(one_call("buy", json!({"n": 3})))
        .tool(counted_tool("buy", &calls))
        .build()
        .unwrap();

    let edit = asking_gate(Approval::Edit(json!({"n": 1})), &asked);
    let result = agent
        .run(AgentRequest::user("go").with_handler(edit))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(result.tool_records[0].content, r#"{"n":1}"#);
}

#[tokio::test]
async fn ask_and_an_edit_that_breaks_the_schema_is_refused_before_the_tool() {
    let calls = Arc::new(AtomicUsize::new(0));
    let asked = Arc::default();
    let agent = Agent::builder(one_call("buy", json!({"n": 3})))
        .tool(counted_tool("buy", &calls))
        .build()
        .unwrap();

    let bad_edit = asking_gate(Approval::Edit(json!({})), &asked);
    let result = agent
        .run(AgentRequest::user("go").with_handler(bad_edit))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let error = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    assert!(error.message().contains("the approver"), "{error}");
}

#[tokio::test]
async fn ask_without_an_approver_interrupts_the_run_and_nothing_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = one_call("buy", json!({"n": 3}));
    let agent = Agent::builder(model.clone())
        .tool(counted_tool("buy", &calls))
        .build()
        .unwrap();
    let gate = policy(|_| Decision::ask("spends money"));

    let result = agent
        .run(AgentRequest::user("go").with_handler(gate))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(result.status, tower_adk::RunStatus::Interrupted);
    let payload = &result.interrupts[0].payload;
    assert_eq!(
        *payload,
        json!({"kind": "policy", "tool": "buy", "arguments": {"n": 3}, "reason": "spends money"})
    );
    assert_eq!(model.calls(), 1, "the model waits for the person too");
}

#[derive(Clone, Debug, PartialEq)]
enum Role {
    Admin,
    Viewer,
}

#[tokio::test]
async fn the_decision_follows_the_callers_role_from_the_request_extensions() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::per_run([
        Turn::call("c1", "wipe", json!({"n": 1})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(counted_tool("wipe", &calls))
        .build()
        .unwrap();
    // An async policy, as one that looks the role up somewhere would be.
    let gate = || {
        policy_async(|call| {
            let role = call.extensions().get::<Role>().cloned();
            async move {
                tokio::task::yield_now().await;
                match role {
                    Some(Role::Admin) => Decision::Allow,
                    _ => Decision::deny("admins only"),
                }
            }
        })
    };

    let viewer = AgentRequest::user("go")
        .with_extension(Role::Viewer)
        .with_handler(gate());
    let admin = AgentRequest::user("go")
        .with_extension(Role::Admin)
        .with_handler(gate());
    let nobody = AgentRequest::user("go").with_handler(gate());
    let (viewer, admin, nobody) =
        tokio::join!(agent.run(viewer), agent.run(admin), agent.run(nobody));

    assert_eq!(
        viewer.unwrap().tool_records[0].content,
        "error (denied): admins only"
    );
    assert_eq!(admin.unwrap().tool_records[0].content, r#"{"n":1}"#);
    assert_eq!(
        nobody.unwrap().tool_records[0].content,
        "error (denied): admins only"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
