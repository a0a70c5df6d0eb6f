//! Typed final answers through the public API: the final-answer tool and the native
//! response format, the check of each answer, the problems given back to the model, the
//! bounded retries and the error when they run out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tower::ServiceExt;
use tower_adk::output::{OutputError, OutputMode};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentRequest, Message, RunStatus, ToolCall};

/// A refund decision, the typed answer of the tests.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Refund {
    /// Whether to refund.
    approved: bool,
    /// How much, in cents.
    amount_cents: u32,
    /// Why not, when not approved.
    reason: Option<String>,
}

#[tokio::test]
async fn a_tool_answer_that_fails_twice_is_given_back_with_its_problems_then_passes() {
    let model = ScriptedModel::new([
        Turn::call("c0", "lookup", json!({})),
        // Not an integer, and a field missing.
        Turn::call(
            "c1",
            "final_answer",
            json!({"approved": true, "amount_cents": "12"}),
        ),
        // Negative: not a u32 (the schema says minimum 0).
        Turn::call(
            "c2",
            "final_answer",
            json!({"approved": true, "amount_cents": -5, "reason": null}),
        ),
        Turn::call(
            "c3",
            "final_answer",
            json!({"approved": true, "amount_cents": 1250, "reason": null}),
        ),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("lookup", "order 7: 12.50 EUR"))
        .output::<Refund>()
        .retries(2)
        .build()
        .unwrap();

    let answer = agent
        .oneshot(AgentRequest::user("Refund order 7?"))
        .await
        .unwrap();

    assert_eq!(
        answer.output,
        Refund {
            approved: true,
            amount_cents: 1250,
            reason: None
        }
    );
    assert_eq!(answer.result.status, RunStatus::Completed);
    // One model call for the lookup turn, three for the answer (two retries).
    assert_eq!(answer.result.model_calls, 4);
    assert_eq!(answer.result.iterations, 2);
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    // The tool is offered, and the model must call a tool.
    assert!(requests[0].tool_names().any(|n| n == "final_answer"));
    let offered = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "final_answer")
        .unwrap();
    assert!(offered.strict);
    assert_eq!(offered.parameters["additionalProperties"], false);
    assert_eq!(
        requests[0].options.tool_choice,
        tower_adk::model::ToolChoice::Required
    );

    // The first failure, as the model read it: its call, then the error result.
    let first = &requests[2].messages;
    let fed_back = first.last().unwrap();
    assert_eq!(fed_back.tool_call_id(), Some("c1"));
    assert!(fed_back.is_error());
    let text = fed_back.content();
    assert!(text.contains("at `/amount_cents`"), "{text}");
    assert!(text.contains(r#""12" is not of type "integer""#), "{text}");
    assert!(
        text.contains("at `/`: \"reason\" is a required property"),
        "{text}"
    );
    assert!(text.contains("Call `final_answer` again"), "{text}");
    assert_eq!(first[first.len() - 2].tool_calls()[0].id, "c1");

    // The second: the first attempt stays in the call's request, the second follows.
    let second = &requests[3].messages;
    assert_eq!(second.len(), first.len() + 2);
    let text = second.last().unwrap().content();
    assert!(text.contains("at `/amount_cents`"), "{text}");
    assert!(text.contains("-5 is less than the minimum of 0"), "{text}");

    // The history keeps only the answer that passed, and every call has its result.
    let history = &answer.result.messages;
    assert!(
        history
            .iter()
            .all(|m| !m.content().contains("invalid arguments"))
    );
    assert_eq!(
        history
            .iter()
            .filter(|m| !m.tool_calls().is_empty())
            .count(),
        2
    );
    let mut repaired = history.clone();
    assert_eq!(repaired.repair_tool_calls(), 0);
    assert_eq!(
        answer.result.final_message.content(),
        r#"{"amount_cents":1250,"approved":true,"reason":null}"#
    );
}

#[tokio::test]
async fn a_native_answer_is_asked_for_with_the_response_format_and_checked() {
    let model = ScriptedModel::new([
        Turn::text("Sure! The refund is approved."),
        Turn::text(r#"{"approved": "yes", "amount_cents": 100, "reason": null}"#),
        Turn::text(
            "```json\n{\"approved\": false, \"amount_cents\": 0, \"reason\": \"late\"}\n```",
        ),
    ]);
    let agent = Agent::builder(model.clone())
        .output::<Refund>()
        .native()
        .build()
        .unwrap();

    let answer = agent.oneshot(AgentRequest::user("Refund?")).await.unwrap();

    assert_eq!(answer.output.reason.as_deref(), Some("late"));
    assert!(!answer.output.approved);
    let requests = model.requests();
    let format = requests[0].options.response_format.as_ref().unwrap();
    assert_eq!(format.name, "final_answer");
    assert!(format.strict);
    assert_eq!(
        format.schema["required"],
        json!(["approved", "amount_cents", "reason"])
    );
    assert_eq!(
        requests[0].tools.len(),
        0,
        "no final-answer tool in native mode"
    );

    let not_json = requests[1].messages.last().unwrap();
    assert!(matches!(not_json, Message::User { .. }));
    assert!(
        not_json.content().contains("at `/`: not JSON"),
        "{}",
        not_json.content()
    );
    let wrong_type = requests[2].messages.last().unwrap().content();
    assert!(
        wrong_type.contains(r#"at `/approved`: "yes" is not of type "boolean""#),
        "{wrong_type}"
    );
    assert!(wrong_type.contains("Answer again with only the corrected JSON"));
}

#[tokio::test]
async fn when_the_retries_run_out_the_run_fails_with_the_last_problems() {
    let model = ScriptedModel::new([
        Turn::call("c1", "final_answer", json!({"approved": 1})),
        Turn::call("c2", "final_answer", json!({"approved": true})),
        Turn::text("never asked"),
    ]);
    let agent = Agent::builder(model.clone())
        .output::<Refund>()
        .retries(1)
        .strict(false)
        .build()
        .unwrap();

    let error = agent
        .oneshot(AgentRequest::user("Refund?"))
        .await
        .unwrap_err();

    let OutputError::Invalid(invalid) = &error else {
        panic!("{error:?}");
    };
    assert_eq!(invalid.attempts, 2);
    assert_eq!(invalid.problems.len(), 1, "{:?}", invalid.problems);
    assert_eq!(invalid.problems[0].path, "/");
    assert!(
        invalid.problems[0]
            .reason
            .contains("\"amount_cents\" is a required property")
    );
    assert_eq!(error.problems(), invalid.problems.as_slice());
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn a_reply_without_the_final_answer_tool_is_asked_to_call_it() {
    let model = ScriptedModel::new([
        Turn::text("It is approved."),
        Turn::calls([ToolCall::new(
            "c1",
            "decide",
            json!({"approved": true, "amount_cents": 5, "reason": null}),
        )]),
    ]);
    let agent = Agent::builder(model.clone())
        .output::<Refund>()
        .mode(OutputMode::Tool)
        .name("decide")
        .build()
        .unwrap();

    let answer = agent.oneshot(AgentRequest::user("Refund?")).await.unwrap();

    assert_eq!(answer.output.amount_cents, 5);
    let asked = model.requests()[1]
        .messages
        .last()
        .unwrap()
        .content()
        .to_owned();
    assert_eq!(
        asked,
        "Give your final answer by calling the `decide` tool."
    );
}

#[tokio::test]
async fn an_interrupted_or_degraded_run_has_no_answer() {
    let model = ScriptedModel::new([Turn::call("c1", "fail", json!({}))]);
    let failing = tower_adk::Tool::from_fn(tower_adk::ToolInfo::new("fail", "fails"), |_| async {
        Err::<tower_adk::ToolOutput, _>(tower_adk::ToolError::denied("down"))
    });
    let agent = Agent::builder(model)
        .tool(failing)
        .on_tool_failure(tower_adk::ToolFailurePolicy::EndDegraded)
        .output::<Refund>()
        .build()
        .unwrap();

    let error = agent
        .oneshot(AgentRequest::user("Refund?"))
        .await
        .unwrap_err();

    let OutputError::NoAnswer(result) = error else {
        panic!("{error:?}");
    };
    assert_eq!(result.status, RunStatus::Degraded);
}

#[test]
fn a_final_answer_tool_name_that_is_taken_fails_the_build() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(text_tool("final_answer", "x"))
        .output::<Refund>()
        .build();
    assert!(
        matches!(agent, Err(tower_adk::BuildError::DuplicateTool(name)) if name == "final_answer")
    );
}

#[test]
fn the_public_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<tower_adk::TypedAgent<Refund>>();
    send_sync::<tower_adk::TypedResult<Refund>>();
    send_sync::<OutputError>();
    send_sync::<tower_adk::handlers::Summarizer>();
    send_sync::<tower_adk::handlers::ToolResultOffload>();
    send_sync::<tower_adk::handlers::Fallback<ScriptedModel>>();
    let mut agent = Agent::builder(ScriptedModel::new([]))
        .output::<Refund>()
        .build()
        .unwrap();
    send(&tower::Service::call(&mut agent, AgentRequest::user("hi")));
}
