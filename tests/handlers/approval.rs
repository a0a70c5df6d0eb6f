//! `HumanApproval` and the policy gate's "ask", through real interrupts and resumes:
//! every decision, predicates by role and on malformed arguments, the per-turn mode,
//! "always approve", and calls that finished never running twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tower_adk::agent::ResumeError;
use tower_adk::handlers::{AlwaysApprove, ApprovalRule, DecisionKind, HumanApproval, policy};
use tower_adk::interrupt::Decision;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentError, AgentRequest, AgentResult, RunStatus, Tool, ToolErrorKind};
use tower_adk::{ToolError, ToolInfo, ToolOutput, ToolRequest};

/// How many times a tool really ran.
#[derive(Clone, Default)]
struct Runs(Arc<AtomicUsize>);

impl Runs {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A tool with an `{order, amount}` schema that counts its runs and answers
/// `NAME(ARGS)`.
fn counted(name: &'static str, runs: &Runs) -> Tool {
    let runs = runs.clone();
    let info = ToolInfo::new(name, "Counts its runs").parameters(json!({
        "type": "object",
        "properties": {"order": {"type": "integer"}, "amount": {"type": "integer"}},
    }));
    Tool::from_fn(info, move |request: ToolRequest| {
        runs.0.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, ToolError>(ToolOutput::new(format!("{name}({})", request.arguments))) }
    })
}

fn refund_script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call("c1", "refund", json!({"order": 7, "amount": 250})),
        Turn::text("Done."),
    ])
}

fn support(model: &ScriptedModel, runs: &Runs) -> Agent {
    Agent::builder(model.clone())
        .name("support")
        .tool(counted("refund", runs))
        .build()
        .unwrap()
}

fn approval() -> HumanApproval {
    HumanApproval::new().tool(
        "refund",
        ApprovalRule::new()
            .describe(|args| format!("Refund {} on order {}?", args["amount"], args["order"])),
    )
}

/// Runs `request` with `handler` to its interrupt.
async fn stop(agent: &Agent, request: AgentRequest, handler: HumanApproval) -> AgentResult {
    let result = agent.run(request.with_handler(handler)).await.unwrap();
    assert_eq!(result.status, RunStatus::Interrupted);
    result
}

/// The resume of `stopped` with one decision for its (only) interrupt.
fn answer(stopped: &AgentResult, decision: Decision, handler: HumanApproval) -> AgentRequest {
    let id = stopped.interrupts[0].id.clone();
    AgentRequest::resume(stopped.checkpoint.clone().unwrap(), [(id, decision)])
        .with_handler(handler)
}

/// The result the model read for `call` on its `nth` request.
fn model_read(model: &ScriptedModel, nth: usize, call: &str) -> String {
    let request = &model.requests()[nth];
    request
        .messages
        .tool_result(call)
        .unwrap()
        .content()
        .to_owned()
}

#[tokio::test]
async fn an_approved_call_asks_with_the_documented_payload_and_runs_once() {
    let (runs, model) = (Runs::default(), refund_script());
    let agent = support(&model, &runs);

    let stopped = stop(&agent, AgentRequest::user("refund 7"), approval()).await;
    assert_eq!(runs.get(), 0);
    assert_eq!(stopped.interrupts[0].id, "agent:support/tool:c1");
    assert_eq!(
        stopped.interrupts[0].payload,
        json!({
            "kind": "approval",
            "tool": "refund",
            "arguments": {"order": 7, "amount": 250},
            "description": "Refund 250 on order 7?",
            "allowed": ["approve", "edit", "reject", "respond"],
        })
    );

    let done = agent
        .run(answer(&stopped, Decision::Approve, approval()))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 1);
    assert_eq!(
        model_read(&model, 1, "c1"),
        r#"refund({"amount":250,"order":7})"#
    );
}

#[tokio::test]
async fn an_edited_call_runs_with_the_persons_arguments() {
    let (runs, model) = (Runs::default(), refund_script());
    let agent = support(&model, &runs);
    let stopped = stop(&agent, AgentRequest::user("refund 7"), approval()).await;

    let edit = Decision::Edit {
        arguments: json!({"order": 7, "amount": 100}),
    };
    let done = agent.run(answer(&stopped, edit, approval())).await.unwrap();
    assert_eq!(runs.get(), 1);
    assert_eq!(
        done.tool_record("c1").unwrap().content,
        r#"refund({"amount":100,"order":7})"#
    );
}

#[tokio::test]
async fn an_invalid_edit_is_refused_and_the_checkpoint_can_still_be_approved() {
    let (runs, model) = (Runs::default(), refund_script());
    let agent = support(&model, &runs);
    let stopped = stop(&agent, AgentRequest::user("refund 7"), approval()).await;

    let edit = Decision::Edit {
        arguments: json!({"order": 7, "amount": "all of it"}),
    };
    let refused = agent.run(answer(&stopped, edit, approval())).await;
    match refused {
        Err(AgentError::Resume(error)) => {
            assert!(matches!(*error, ResumeError::InvalidEdit { .. }), "{error}");
        }
        other => panic!("expected an invalid edit, got {other:?}"),
    }
    assert_eq!(runs.get(), 0);

    let done = agent
        .run(answer(&stopped, Decision::Approve, approval()))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_rejected_call_never_runs_and_the_model_reads_the_reason() {
    let (runs, model) = (Runs::default(), refund_script());
    let agent = support(&model, &runs);
    let stopped = stop(&agent, AgentRequest::user("refund 7"), approval()).await;

    let reject = Decision::Reject {
        reason: "refunds over 200 go to finance".into(),
    };
    let done = agent
        .run(answer(&stopped, reject, approval()))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 0);
    assert!(model_read(&model, 1, "c1").contains("refunds over 200 go to finance"));
}

#[tokio::test]
async fn a_response_is_the_calls_result_and_the_tool_never_runs() {
    let (runs, model) = (Runs::default(), refund_script());
    let agent = support(&model, &runs);
    let stopped = stop(&agent, AgentRequest::user("refund 7"), approval()).await;

    let respond = Decision::Respond {
        answer: json!("refunded by hand"),
    };
    agent
        .run(answer(&stopped, respond, approval()))
        .await
        .unwrap();
    assert_eq!(runs.get(), 0);
    assert_eq!(model_read(&model, 1, "c1"), "refunded by hand");
}

#[tokio::test]
async fn an_approval_the_rule_does_not_allow_does_not_run_the_call() {
    let (runs, model) = (Runs::default(), refund_script());
    let agent = support(&model, &runs);
    let no_approve = || {
        let rule = ApprovalRule::new().allow([DecisionKind::Reject, DecisionKind::Respond]);
        HumanApproval::new().tool("refund", rule)
    };
    let stopped = stop(&agent, AgentRequest::user("refund 7"), no_approve()).await;
    assert_eq!(
        stopped.interrupts[0].payload["allowed"],
        json!(["reject", "respond"])
    );

    let done = agent
        .run(answer(&stopped, Decision::Approve, no_approve()))
        .await
        .unwrap();
    assert_eq!(runs.get(), 0);
    let error = done.tool_record("c1").unwrap().error.clone().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Denied);
    assert!(error.message().contains("not allowed"), "{error}");
}

#[derive(Clone, Debug, PartialEq)]
enum Role {
    Admin,
    Viewer,
}

#[tokio::test]
async fn an_admins_call_runs_without_asking_and_a_viewers_asks() {
    let runs = Runs::default();
    let model = ScriptedModel::per_run([
        Turn::call("c1", "refund", json!({"order": 7, "amount": 250})),
        Turn::text("Done."),
    ]);
    let agent = support(&model, &runs);
    let by_role = HumanApproval::new().when("refund", |_args, ext| {
        Ok(ext.get::<Role>() != Some(&Role::Admin))
    });

    let admin = AgentRequest::user("refund 7").with_extension(Role::Admin);
    let done = agent
        .run(admin.with_handler(by_role.clone()))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 1);

    let viewer = AgentRequest::user("refund 7").with_extension(Role::Viewer);
    let stopped = stop(&agent, viewer, by_role).await;
    assert_eq!(stopped.interrupts[0].payload["tool"], "refund");
    assert_eq!(runs.get(), 1, "the viewer's call waits");
}

#[tokio::test]
async fn a_predicate_that_cannot_read_the_arguments_asks() {
    let runs = Runs::default();
    let model = ScriptedModel::per_run([
        Turn::call("c1", "refund", json!({"order": 7})),
        Turn::text("Done."),
    ]);
    let agent = support(&model, &runs);
    let over_100 = || {
        HumanApproval::new().when("refund", |args: &Value, _| {
            Ok(args["amount"].as_u64().ok_or("no amount")? > 100)
        })
    };

    let stopped = stop(&agent, AgentRequest::user("refund 7"), over_100()).await;
    assert_eq!(runs.get(), 0);
    assert_eq!(
        stopped.interrupts[0].payload["arguments"],
        json!({"order": 7})
    );
}

/// Three calls in one turn: `lookup` needs no approval, `refund` and `close` do.
fn three_calls() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call("c1", "refund", json!({"order": 7, "amount": 250}))
            .with_call("c2", "lookup", json!({"order": 7}))
            .with_call("c3", "close", json!({"order": 7})),
        Turn::text("Done."),
    ])
}

fn per_turn() -> HumanApproval {
    HumanApproval::new()
        .tool("refund", ApprovalRule::new())
        .tool(
            "close",
            ApprovalRule::new().description("Closes the account."),
        )
        .per_turn()
}

#[tokio::test]
async fn per_turn_asks_once_for_two_calls_and_applies_a_different_decision_to_each() {
    let (refunds, lookups, closes) = (Runs::default(), Runs::default(), Runs::default());
    let model = three_calls();
    let agent = Agent::builder(model.clone())
        .name("support")
        .tool(counted("refund", &refunds))
        .tool(counted("lookup", &lookups))
        .tool(counted("close", &closes))
        .build()
        .unwrap();

    let stopped = stop(&agent, AgentRequest::user("sort order 7 out"), per_turn()).await;
    assert_eq!(stopped.interrupts.len(), 1);
    let asked = &stopped.interrupts[0];
    assert_eq!(asked.id, "agent:support/after_model:human_approval");
    assert_eq!(asked.payload["kind"], "approvals");
    let calls = asked.payload["calls"].as_array().unwrap();
    let ids: Vec<&str> = calls
        .iter()
        .map(|c| c["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c1", "c3"]);
    assert_eq!(calls[1]["description"], "Closes the account.");
    assert_eq!(
        refunds.get() + lookups.get() + closes.get(),
        0,
        "nothing ran yet"
    );

    let decisions = Decision::Respond {
        answer: json!({
            "c1": {"type": "edit", "arguments": {"order": 7, "amount": 100}},
            "c3": {"type": "reject", "reason": "accounts are closed by the back office"},
        }),
    };
    let done = agent
        .run(answer(&stopped, decisions, per_turn()))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!((refunds.get(), lookups.get(), closes.get()), (1, 1, 0));
    assert_eq!(
        done.tool_record("c1").unwrap().content,
        r#"refund({"amount":100,"order":7})"#
    );
    let closed = done.tool_record("c3").unwrap().error.clone().unwrap();
    assert_eq!(closed.kind(), ToolErrorKind::Denied);
    assert!(model_read(&model, 1, "c3").contains("back office"));
    // The history shows the arguments the refund ran with.
    let reply = &model.requests()[1].messages;
    let call = reply
        .iter()
        .flat_map(|m| m.tool_calls())
        .find(|c| c.id == "c1")
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&call.arguments).unwrap()["amount"],
        100
    );
}

#[tokio::test]
async fn per_turn_asks_again_when_the_answer_cannot_be_read_and_then_takes_a_response() {
    let runs = Runs::default();
    let model = refund_script();
    let agent = support(&model, &runs);
    let mode = || approval().per_turn();
    let stopped = stop(&agent, AgentRequest::user("refund 7"), mode()).await;

    let garbled = Decision::Respond {
        answer: json!({"c1": {"type": "maybe"}}),
    };
    let again = agent.run(answer(&stopped, garbled, mode())).await.unwrap();
    assert_eq!(again.status, RunStatus::Interrupted);
    assert!(
        again.interrupts[0].payload["error"]
            .as_str()
            .unwrap()
            .contains("c1")
    );
    assert_eq!(runs.get(), 0);

    let respond = Decision::Respond {
        answer: json!({"c1": {"type": "respond", "answer": "refunded by hand"}}),
    };
    agent.run(answer(&again, respond, mode())).await.unwrap();
    assert_eq!(runs.get(), 0);
    assert_eq!(model_read(&model, 1, "c1"), "refunded by hand");
}

#[tokio::test]
async fn always_approve_is_remembered_by_the_thread_and_not_by_another() {
    let runs = Runs::default();
    let model = ScriptedModel::new([
        Turn::call("c1", "refund", json!({"order": 7, "amount": 250})),
        Turn::text("Done."),
        Turn::call("c2", "refund", json!({"order": 8, "amount": 30})),
        Turn::text("Done again."),
        Turn::call("c3", "refund", json!({"order": 9, "amount": 10})),
    ]);
    let agent = support(&model, &runs);
    let mode = || approval().per_turn();

    let first = AgentRequest::user("refund 7").on_thread("alice");
    let stopped = stop(&agent, first, mode()).await;
    let always = Decision::Respond {
        answer: json!({"c1": {"type": "approve", "always": true}}),
    };
    agent.run(answer(&stopped, always, mode())).await.unwrap();
    assert_eq!(runs.get(), 1);

    // The next run on the thread refunds without asking.
    let second = AgentRequest::user("refund 8").on_thread("alice");
    let done = agent.run(second.with_handler(mode())).await.unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 2);

    // Another thread asks.
    let other = AgentRequest::user("refund 9").on_thread("bob");
    stop(&agent, other, mode()).await;
    assert_eq!(runs.get(), 2);
}

#[tokio::test]
async fn always_approve_per_call_comes_with_the_resume_and_holds_for_the_thread() {
    let runs = Runs::default();
    let model = ScriptedModel::new([
        Turn::call("c1", "refund", json!({"order": 7, "amount": 250})),
        Turn::text("Done."),
        Turn::call("c2", "refund", json!({"order": 8, "amount": 30})),
        Turn::text("Done again."),
    ]);
    let agent = support(&model, &runs);

    let stopped = stop(
        &agent,
        AgentRequest::user("refund 7").on_thread("carol"),
        approval(),
    )
    .await;
    let resume = answer(&stopped, Decision::Approve, approval())
        .with_extension(AlwaysApprove::tools(["refund"]));
    agent.run(resume).await.unwrap();
    assert_eq!(runs.get(), 1);

    let second = AgentRequest::user("refund 8").on_thread("carol");
    let done = agent.run(second.with_handler(approval())).await.unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 2);
}

#[tokio::test]
async fn policy_ask_interrupts_and_the_call_runs_once_approved() {
    let runs = Runs::default();
    let model = ScriptedModel::new([
        Turn::call("c1", "refund", json!({"order": 7, "amount": 250})).with_call(
            "c2",
            "lookup",
            json!({"order": 7}),
        ),
        Turn::text("Done."),
    ]);
    let lookups = Runs::default();
    let agent = Agent::builder(model.clone())
        .name("support")
        .tool(counted("refund", &runs))
        .tool(counted("lookup", &lookups))
        .build()
        .unwrap();
    let gate = || {
        policy(|call| match call.name.as_str() {
            "refund" => tower_adk::handlers::Decision::ask("moves money"),
            _ => tower_adk::handlers::Decision::Allow,
        })
    };

    let request = AgentRequest::user("refund 7").with_handler(gate());
    let stopped = agent.run(request).await.unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(
        stopped.interrupts[0].payload,
        json!({"kind": "policy", "tool": "refund", "arguments": {"order": 7, "amount": 250}, "reason": "moves money"})
    );
    assert_eq!((runs.get(), lookups.get()), (0, 1));

    let id = stopped.interrupts[0].id.clone();
    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(id, Decision::Approve)],
    );
    let done = agent.run(resume.with_handler(gate())).await.unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(
        (runs.get(), lookups.get()),
        (1, 1),
        "the finished lookup did not run again"
    );
}

#[tokio::test]
async fn policy_ask_decides_again_on_the_persons_edit() {
    let runs = Runs::default();
    let model = refund_script();
    let agent = support(&model, &runs);
    let gate = || {
        policy(|call| match call.arguments["amount"].as_u64() {
            Some(amount) if amount > 1000 => tower_adk::handlers::Decision::deny("over the limit"),
            _ => tower_adk::handlers::Decision::ask("moves money"),
        })
    };
    let stopped = agent
        .run(AgentRequest::user("refund 7").with_handler(gate()))
        .await
        .unwrap();

    let id = stopped.interrupts[0].id.clone();
    let edit = Decision::Edit {
        arguments: json!({"order": 7, "amount": 5000}),
    };
    let resume = AgentRequest::resume(stopped.checkpoint.clone().unwrap(), [(id, edit)]);
    let done = agent.run(resume.with_handler(gate())).await.unwrap();
    assert_eq!(runs.get(), 0);
    let error = done.tool_record("c1").unwrap().error.clone().unwrap();
    assert_eq!(error.message(), "over the limit");
}

#[tokio::test]
async fn two_calls_of_a_turn_each_ask_and_each_runs_at_most_once_as_decided() {
    let runs = Runs::default();
    let model = ScriptedModel::new([
        Turn::call("c1", "refund", json!({"order": 7, "amount": 250})).with_call(
            "c2",
            "refund",
            json!({"order": 8, "amount": 30}),
        ),
        Turn::text("Done."),
    ]);
    let agent = support(&model, &runs);
    let stopped = stop(&agent, AgentRequest::user("refund both"), approval()).await;
    let ids: Vec<String> = stopped.interrupts.iter().map(|i| i.id.clone()).collect();
    assert_eq!(ids, ["agent:support/tool:c1", "agent:support/tool:c2"]);

    let reject = Decision::Reject {
        reason: "not this one".into(),
    };
    let decisions = [
        (ids[0].clone(), Decision::Approve),
        (ids[1].clone(), reject),
    ];
    let resume = AgentRequest::resume(stopped.checkpoint.clone().unwrap(), decisions);
    let done = agent.run(resume.with_handler(approval())).await.unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 1);
    assert!(done.tool_record("c1").unwrap().is_success());
    assert!(!done.tool_record("c2").unwrap().is_success());

    // The used checkpoint cannot run the approved call a second time.
    let again = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [
            (ids[0].clone(), Decision::Approve),
            (ids[1].clone(), Decision::Approve),
        ],
    );
    assert!(agent.run(again.with_handler(approval())).await.is_err());
    assert_eq!(runs.get(), 1);
}
