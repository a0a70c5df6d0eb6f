//! A typed tool in a run: typed arguments in, the run's context alongside, and the
//! generated schema shown to the model.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower::ServiceExt;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest};

use crate::{Tenant, forecast_tool, tool_result};

#[tokio::test]
async fn a_typed_tool_gets_its_arguments_as_the_struct_and_the_run_s_extensions() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::call(
            "c1",
            "forecast",
            json!({"location": {"city": "Oslo"}, "days": 2, "units": "celsius"}),
        ),
        Turn::text("Sunny in Oslo."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(forecast_tool(&calls))
        .build()
        .unwrap();

    let request = AgentRequest::user("Weather in Oslo?").with_extension(Tenant("acme"));
    let result = agent.oneshot(request).await.unwrap().await.unwrap();

    let expected =
        r#"forecast c1: tenant=acme city=Oslo country=None days=2 units=Some("celsius")"#;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(result.final_message.content(), "Sunny in Oslo.");
    assert_eq!(result.tool_records[0].content, expected);
    assert!(result.tool_records[0].is_success());
    assert_eq!(
        tool_result(&model.requests()[1], "c1"),
        (expected.to_owned(), false)
    );
}

#[tokio::test]
async fn the_model_is_shown_the_schema_generated_from_the_arguments_struct() {
    let model = ScriptedModel::new([Turn::text("Nothing to look up.")]);
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(model.clone())
        .tool(forecast_tool(&calls))
        .build()
        .unwrap();

    agent.run(AgentRequest::user("hi")).await.unwrap();

    let requests = model.requests();
    let [tool] = &requests[0].tools[..] else {
        panic!("one tool expected: {:?}", requests[0].tools);
    };
    assert_eq!(tool.name, "forecast");
    assert_eq!(tool.description, "The weather forecast for a place");
    assert!(!tool.strict);
    let schema = &tool.parameters;
    assert_eq!(schema["type"], "object");
    let properties: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(properties, ["days", "location", "units"]);
    assert_eq!(schema["required"], json!(["location", "days"]));
    // Nested structs are inlined, doc comments become descriptions, options are nullable.
    assert_eq!(
        schema["properties"]["location"]["required"],
        json!(["city"])
    );
    assert_eq!(
        schema["properties"]["location"]["properties"]["city"]["description"],
        "The city, e.g. \"Oslo\"."
    );
    assert_eq!(
        schema["properties"]["units"]["type"],
        json!(["string", "null"])
    );
    assert!(schema.get("$defs").is_none() && schema.get("$ref").is_none());
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
}

#[tokio::test]
async fn a_strict_typed_tool_shows_the_model_the_strict_schema_and_accepts_nulls_for_options() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::call(
            "c1",
            "forecast",
            json!({"location": {"city": "Oslo", "country": null}, "days": 1, "units": null}),
        ),
        Turn::text("ok"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(forecast_tool(&calls).strict())
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(
        result.tool_records[0].content,
        "forecast c1: tenant=none city=Oslo country=None days=1 units=None"
    );
    let tool = &model.requests()[0].tools[0];
    assert!(tool.strict);
    assert_eq!(tool.parameters["additionalProperties"], false);
    assert_eq!(
        tool.parameters["required"],
        json!(["location", "days", "units"])
    );
    assert_eq!(
        tool.parameters["properties"]["location"]["additionalProperties"],
        false
    );
    assert_eq!(
        tool.parameters["properties"]["location"]["required"],
        json!(["city", "country"])
    );
}
