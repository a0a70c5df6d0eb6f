//! [`ResponseFormat`]: the shape a model's text answer must take, for providers that can
//! hold a model to it (OpenAI's `response_format` with a JSON Schema).

use serde_json::Value;

/// The shape a model's text answer must take: a JSON value that matches a JSON Schema.
///
/// Set it in [`ModelOptions::response_format`](super::ModelOptions::response_format). A
/// provider that can constrain its output sends it (the OpenAI provider as
/// `response_format: {type: "json_schema", json_schema: {name, schema, strict}}`); the
/// others ignore it, as they ignore every option their API does not have. A typed agent
/// ([`output`](crate::output)) sets it for you, and checks the answer either way.
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use tower_adk::model::{ModelOptions, ResponseFormat};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}},
///     "required": ["city"],
///     "additionalProperties": false
/// });
/// let mut options = ModelOptions::default();
/// options.response_format = Some(Arc::new(ResponseFormat::json_schema("place", schema).strict(true)));
/// assert!(options.response_format.as_ref().is_some_and(|f| f.strict));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResponseFormat {
    /// A name for the schema (`^[a-zA-Z0-9_-]{1,64}$` for OpenAI).
    pub name: String,
    /// The JSON Schema the answer must match.
    pub schema: Value,
    /// Whether the provider must follow the schema exactly (OpenAI's strict mode, which
    /// needs every object closed, `additionalProperties: false`, with every property
    /// required; see [`strict_schema`](crate::tool::openai::strict_schema)).
    pub strict: bool,
}

impl ResponseFormat {
    /// JSON that matches `schema`, not strict.
    pub fn json_schema(name: impl Into<String>, schema: Value) -> Self {
        ResponseFormat {
            name: name.into(),
            schema,
            strict: false,
        }
    }

    /// Makes the format strict, or not.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}
