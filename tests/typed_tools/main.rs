//! Typed tools through the public API: a tool from an async function of an arguments
//! struct, its generated schema, the run's context it receives, invalid arguments the
//! model is told about, and the export in OpenAI's function-calling format.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod end_to_end;
mod invalid_arguments;
mod openai_export;
#[path = "../support/mod.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use support::tool_result;
use tower_adk::{Tool, ToolContext};

/// Where to look the weather up.
#[derive(Debug, Deserialize, JsonSchema)]
struct Location {
    /// The city, e.g. "Oslo".
    city: String,
    /// The country, if the city name is ambiguous.
    country: Option<String>,
}

/// The arguments of the `forecast` tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct ForecastArgs {
    /// Where.
    location: Location,
    /// How many days ahead.
    days: u32,
    /// "celsius" or "fahrenheit"; celsius if absent.
    units: Option<String>,
}

/// Put in the run's extensions by the caller; the model never sees it.
#[derive(Debug, Clone, PartialEq)]
struct Tenant(&'static str);

/// A typed `forecast` tool that counts its calls and describes what it received.
fn forecast_tool(calls: &Arc<AtomicUsize>) -> Tool {
    let calls = Arc::clone(calls);
    Tool::typed(
        "forecast",
        "The weather forecast for a place",
        move |cx: ToolContext, args: ForecastArgs| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                let tenant = cx.extensions().get::<Tenant>().map_or("none", |t| t.0);
                Ok(format!(
                    "{} {}: tenant={tenant} city={} country={:?} days={} units={:?}",
                    cx.tool_name(),
                    cx.call_id(),
                    args.location.city,
                    args.location.country,
                    args.days,
                    args.units,
                ))
            }
        },
    )
}

/// The arguments of a typed tool, derived through the crates `tower_adk` re-exports: a
/// user needs no `serde` or `schemars` of their own, nor to match their versions.
#[derive(tower_adk::serde::Deserialize, tower_adk::schemars::JsonSchema)]
#[serde(crate = "tower_adk::serde")]
#[schemars(crate = "tower_adk::schemars")]
struct Reexported {
    /// A word.
    word: String,
}

#[tokio::test]
async fn a_typed_tool_derives_its_arguments_through_the_reexported_crates() {
    let shout = tower_adk::Tool::typed(
        "shout",
        "Shouts a word",
        |_: tower_adk::ToolContext, args: Reexported| async move { Ok(args.word.to_uppercase()) },
    );

    let output = shout
        .invoke(tower_adk::ToolRequest::new(
            "c1",
            "shout",
            tower_adk::serde_json::json!({"word": "hi"}),
        ))
        .await
        .unwrap();

    assert_eq!(output.content, "HI");
    assert_eq!(
        shout.info().parameters["required"],
        tower_adk::serde_json::json!(["word"])
    );
}
