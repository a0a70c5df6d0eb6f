//! Arguments that do not fit a typed tool are answered with a model-visible
//! invalid-arguments result that gives the path and the reason, and the tool never runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, AgentResult, Tool, ToolErrorKind};

use crate::{forecast_tool, tool_result};

/// Runs one call of the `forecast` tool with `arguments`, then the model's answer.
async fn call_forecast(
    arguments: Value,
    strict: bool,
    validate: bool,
) -> (ScriptedModel, AgentResult, usize) {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut tool = forecast_tool(&calls);
    if strict {
        tool = tool.strict();
    }
    let model = ScriptedModel::new([
        Turn::call("c1", "forecast", arguments),
        Turn::text("Let me fix that."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(tool)
        .validate_arguments(validate)
        .build()
        .unwrap();
    let result = agent.run(AgentRequest::user("go")).await.unwrap();
    (model, result, calls.load(Ordering::SeqCst))
}

/// The model's second request carries an error result for `c1` that the record shares,
/// of kind invalid-arguments, containing each of `parts`.
fn assert_invalid_arguments(model: &ScriptedModel, result: &AgentResult, parts: &[&str]) {
    assert_eq!(result.final_message.content(), "Let me fix that.");
    let record = &result.tool_records[0];
    let error = record.error.as_ref().expect("the call failed");
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);

    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(is_error);
    assert_eq!(content, record.content);
    assert!(
        content.starts_with("error (invalid_arguments): "),
        "{content}"
    );
    for part in parts {
        assert!(content.contains(part), "{part:?} not in {content:?}");
    }
}

#[tokio::test]
async fn a_missing_nested_field_is_reported_with_its_path_and_the_tool_is_not_called() {
    let (model, result, calls) = call_forecast(
        json!({"location": {"country": "NO"}, "days": 2}),
        false,
        true,
    )
    .await;

    assert_invalid_arguments(
        &model,
        &result,
        &["at `/location`", r#""city" is a required property"#],
    );
    assert_eq!(calls, 0);
}

#[tokio::test]
async fn a_wrong_type_is_reported_with_its_path_and_the_tool_is_not_called() {
    let (model, result, calls) = call_forecast(
        json!({"location": {"city": "Oslo"}, "days": "two"}),
        false,
        true,
    )
    .await;

    assert_invalid_arguments(
        &model,
        &result,
        &["at `/days`", r#""two" is not of type "integer""#],
    );
    assert_eq!(calls, 0);
}

#[tokio::test]
async fn an_extra_field_under_strict_is_reported_with_its_path_and_the_tool_is_not_called() {
    let arguments = json!({
        "location": {"city": "Oslo", "country": null, "zip": "0150"},
        "days": 2,
        "units": null,
        "colour": "blue"
    });
    let (model, result, calls) = call_forecast(arguments, true, true).await;

    assert_invalid_arguments(
        &model,
        &result,
        &[
            "at `/`",
            "'colour' was unexpected",
            "at `/location`",
            "'zip' was unexpected",
        ],
    );
    assert_eq!(calls, 0);
}

#[tokio::test]
async fn an_omitted_optional_field_under_strict_is_reported_as_missing() {
    let (model, result, calls) = call_forecast(
        json!({"location": {"city": "Oslo", "country": null}, "days": 2}),
        true,
        true,
    )
    .await;

    assert_invalid_arguments(
        &model,
        &result,
        &["at `/`", r#""units" is a required property"#],
    );
    assert_eq!(calls, 0);
}

#[tokio::test]
async fn without_strict_an_extra_field_is_ignored_and_the_tool_runs() {
    let (_, result, calls) = call_forecast(
        json!({"location": {"city": "Oslo"}, "days": 2, "colour": "blue"}),
        false,
        true,
    )
    .await;

    assert!(
        result.tool_records[0].is_success(),
        "{:?}",
        result.tool_records
    );
    assert_eq!(calls, 1);
}

#[tokio::test]
async fn with_validation_off_arguments_that_do_not_deserialize_are_a_model_visible_error() {
    let (model, result, calls) = call_forecast(
        json!({"location": {"town": "Oslo"}, "days": 2}),
        false,
        false,
    )
    .await;

    assert_invalid_arguments(&model, &result, &["missing field `city`"]);
    assert_eq!(calls, 0);
}

#[tokio::test]
async fn with_validation_off_a_wrong_type_gives_serde_s_reason_to_the_model() {
    let (model, result, calls) = call_forecast(
        json!({"location": {"city": "Oslo"}, "days": "two"}),
        false,
        false,
    )
    .await;

    assert_invalid_arguments(
        &model,
        &result,
        &[r#"invalid type: string "two", expected u32"#],
    );
    assert_eq!(calls, 0);
}

#[tokio::test]
async fn a_typed_tool_called_directly_with_bad_arguments_returns_an_invalid_arguments_error() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tool: Tool = forecast_tool(&calls);

    let error = tool
        .invoke(tower_adk::ToolRequest::new("c1", "forecast", json!(null)))
        .await
        .unwrap_err();

    let error = error.downcast::<tower_adk::ToolError>().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    assert!(error.message().contains("invalid type: null"), "{error}");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a_value_outside_a_long_enum_is_told_every_allowed_value() {
    let tool = Tool::from_fn(
        tower_adk::ToolInfo::new("pick", "Picks a colour").parameters(json!({
            "type": "object",
            "properties": {
                "colour": {"type": "string", "enum": ["red", "green", "blue", "cyan", "magenta"]}
            },
            "required": ["colour"]
        })),
        |_| async { Ok::<_, std::convert::Infallible>("picked") },
    );

    let error = tool.validate(&json!({"colour": "pink"})).unwrap_err();

    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(
        error.message(),
        r#"at `/colour`: "pink" is not one of "red", "green", "blue", "cyan" or "magenta""#
    );
}
