//! Typed tools: a tool from an async function of an arguments struct.
//!
//! [`Tool::typed`] takes a name, a description and an async function of a
//! [`ToolContext`] and an arguments type that derives `serde::Deserialize` and
//! `schemars::JsonSchema`. The parameter schema is generated from the type once, when
//! the tool is made; the loop validates each call's arguments against it (see
//! [`Tool::validate`]) and the tool deserializes them into the type before calling the
//! function. The context carries what the model does not supply: the run's extensions
//! (request id, user, tenant, anything a hook inserted) and the call's id and tool name.
//!
//! # Example
//!
//! ```
//! use tower_adk::{Agent, AgentRequest, Tool, ToolContext};
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct WeatherArgs {
//!     /// The city, e.g. "Oslo".
//!     city: String,
//!     /// Days ahead; today if absent.
//!     days: Option<u8>,
//! }
//!
//! #[derive(Clone)]
//! struct Tenant(&'static str);
//!
//! let weather = Tool::typed(
//!     "get_weather",
//!     "Current weather for a city",
//!     |cx: ToolContext, args: WeatherArgs| async move {
//!         let tenant = cx.extensions().get::<Tenant>().map_or("?", |t| t.0);
//!         let days = args.days.unwrap_or(0);
//!         Ok(format!("{tenant}: sunny in {} in {days} days", args.city))
//!     },
//! );
//! assert_eq!(weather.info().parameters["required"], json!(["city"]));
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new([
//!     Turn::call("c1", "get_weather", json!({"city": "Oslo", "days": 2})),
//!     Turn::text("Sunny."),
//! ]);
//! let agent = Agent::builder(model).tool(weather).build()?;
//! let result = agent.run(AgentRequest::user("Weather?").with_extension(Tenant("acme"))).await?;
//! assert_eq!(result.tool_records[0].content, "acme: sunny in Oslo in 2 days");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::future::Future;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tower::BoxError;

use super::{Tool, ToolError, ToolInfo, ToolOutput, ToolRequest};
use crate::context::{LocalsGuard, Scope};

/// What a [typed tool](Tool::typed) gets besides its arguments: the call's id, the
/// tool's name and the run's extensions. None of it comes from the model.
#[derive(Clone)]
pub struct ToolContext {
    call_id: crate::message::SmolStr,
    tool_name: crate::message::SmolStr,
    scope: Scope,
}

impl ToolContext {
    /// The id of the model's call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The run's extensions, with anything the tool wrappers of this call inserted.
    pub fn extensions(&self) -> &http::Extensions {
        &self.scope.extensions
    }

    /// The run's run-local values, locked for this call (see [`LocalsGuard`]).
    pub fn locals(&self) -> LocalsGuard<'_> {
        self.scope.locals()
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .field("tool_name", &self.tool_name)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool from an async function of a [`ToolContext`] and a typed arguments struct.
    ///
    /// The parameter schema is generated from `A` with schemars (JSON Schema 2020-12,
    /// subschemas inlined so the model sees one flat schema; only a recursive type keeps
    /// a `$ref` into `$defs`). Doc comments on `A`'s fields become the properties'
    /// descriptions. `A` should be a struct: models expect an object of arguments.
    ///
    /// The function returns `Result<O, BoxError>` where `O` converts into a
    /// [`ToolOutput`] (a `String`, a `&str`, a `serde_json::Value`, or a `ToolOutput`; use
    /// [`ToolOutput::json`] for any `Serialize` type). The error type is fixed so that
    /// `Ok(output)` needs no annotation, and `?` takes any error; a [`ToolError`] (given
    /// as `Err(error.into())` or with `?`) reaches the model as it is.
    ///
    /// Arguments that do not deserialize into `A` (possible when validation is switched
    /// off with [`AgentBuilder::validate_arguments`](crate::AgentBuilder::validate_arguments),
    /// or when the schema accepts more than `A` does) are answered with a
    /// [`ToolErrorKind::InvalidArguments`](crate::ToolErrorKind::InvalidArguments) error
    /// carrying serde's message; the function is not called.
    ///
    /// Chain [`Tool::strict`] to show the model the strict form of the schema and to
    /// reject fields `A` does not have.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::{Tool, ToolContext, ToolErrorKind, ToolOutput, ToolRequest};
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    /// use serde_json::json;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct AddArgs {
    ///     a: i64,
    ///     b: i64,
    /// }
    ///
    /// #[derive(Serialize)]
    /// struct Sum {
    ///     sum: i64,
    /// }
    ///
    /// let add = Tool::typed("add", "Adds two integers", |_: ToolContext, args: AddArgs| async move {
    ///     Ok(ToolOutput::json(&Sum { sum: args.a + args.b })?)
    /// })
    /// .strict();
    ///
    /// assert_eq!(add.info().parameters["additionalProperties"], false);
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let output = add.invoke(ToolRequest::new("c1", "add", json!({"a": 2, "b": 3}))).await?;
    /// assert_eq!(output.content, r#"{"sum":5}"#);
    ///
    /// // Called directly, nothing validated the arguments; deserialization still fails cleanly.
    /// let error = add.invoke(ToolRequest::new("c2", "add", json!({"a": 2}))).await.unwrap_err();
    /// let error = error.downcast::<tower_adk::ToolError>().unwrap();
    /// assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    /// assert!(error.message().contains("missing field `b`"), "{error}");
    /// # Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    /// # }).unwrap();
    /// ```
    pub fn typed<A, F, Fut, O>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Tool
    where
        A: DeserializeOwned + JsonSchema,
        F: Fn(ToolContext, A) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<O, BoxError>> + Send + 'static,
        O: Into<ToolOutput>,
    {
        let info = ToolInfo::new(name, description).parameters(arguments_schema::<A>());
        Tool::from_fn(info, move |request: ToolRequest| {
            let call = split::<A>(request).map(|(cx, args)| f(cx, args));
            async move {
                match call {
                    Ok(call) => call.await.map(Into::into),
                    Err(error) => Err(BoxError::from(error)),
                }
            }
        })
    }
}

/// The schema of `A` as a tool's parameters: inlined, without `$schema` or `title`.
pub(crate) fn arguments_schema<A: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("title");
    }
    schema
}

/// Deserializes the arguments and builds the context, moving out of the request.
fn split<A: DeserializeOwned>(request: ToolRequest) -> Result<(ToolContext, A), ToolError> {
    let args = serde_json::from_value(request.arguments).map_err(|e| {
        ToolError::invalid_arguments(format!("the arguments do not fit the parameters: {e}"))
    })?;
    let cx = ToolContext {
        call_id: request.call_id,
        tool_name: request.name,
        scope: request.scope,
    };
    Ok((cx, args))
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::arguments_schema;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Inner {
        x: i32,
    }

    /// Outer.
    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Outer {
        inner: Inner,
        maybe: Option<Inner>,
    }

    #[test]
    fn the_generated_schema_inlines_nested_structs_and_has_no_title_or_meta_schema() {
        let inner = json!({
            "type": "object",
            "properties": {"x": {"type": "integer", "format": "int32"}},
            "required": ["x"]
        });
        let mut maybe = inner.clone();
        maybe["type"] = json!(["object", "null"]);
        assert_eq!(
            arguments_schema::<Outer>(),
            json!({
                "description": "Outer.",
                "type": "object",
                "properties": {"inner": inner, "maybe": maybe},
                "required": ["inner"]
            })
        );
    }
}
