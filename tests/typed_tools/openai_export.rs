//! Typed tools exported in OpenAI's function-calling format, strict and not.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tower_adk::{Tool, ToolContext};

/// A place.
#[derive(Debug, Deserialize, JsonSchema)]
struct Place {
    city: String,
    country: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct LookupArgs {
    /// Where to look.
    place: Place,
    limit: Option<u32>,
}

fn lookup() -> Tool {
    Tool::typed(
        "lookup",
        "Finds shops near a place",
        |_: ToolContext, args: LookupArgs| async move {
            let Place { city, country } = args.place;
            Ok(format!("{city} {country:?} {:?}", args.limit))
        },
    )
}

#[test]
fn a_typed_tool_exports_its_schema_as_an_openai_function() {
    assert_eq!(
        lookup().info().to_openai_function(false),
        json!({
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Finds shops near a place",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "place": {
                            "description": "Where to look.",
                            "type": "object",
                            "properties": {
                                "city": {"type": "string"},
                                "country": {"type": ["string", "null"]}
                            },
                            "required": ["city"]
                        },
                        "limit": {
                            "type": ["integer", "null"],
                            "format": "uint32",
                            "minimum": 0
                        }
                    },
                    "required": ["place"]
                },
                "strict": false
            }
        })
    );
}

#[test]
fn a_strict_export_closes_every_object_and_requires_every_property() {
    let strict = json!({
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Finds shops near a place",
            "parameters": {
                "type": "object",
                "properties": {
                    "place": {
                        "description": "Where to look.",
                        "type": "object",
                        "properties": {
                            "city": {"type": "string"},
                            "country": {"type": ["string", "null"]}
                        },
                        "required": ["city", "country"],
                        "additionalProperties": false
                    },
                    "limit": {
                        "type": ["integer", "null"],
                        "format": "uint32",
                        "minimum": 0
                    }
                },
                "required": ["place", "limit"],
                "additionalProperties": false
            },
            "strict": true
        }
    });

    assert_eq!(lookup().info().to_openai_function(true), strict);
    // A strict tool exports the same, and its own schema is the strict one.
    let strict_tool = lookup().strict();
    assert_eq!(strict_tool.info().to_openai_function(true), strict);
    assert_eq!(
        strict_tool.info().parameters,
        strict["function"]["parameters"]
    );
}
