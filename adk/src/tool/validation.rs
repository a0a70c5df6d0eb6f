//! Checking a call's arguments against the tool's JSON Schema (feature `validation`, on
//! by default).

use jsonschema::Validator;
use serde_json::Value;

use super::{Tool, ToolError, ToolErrorKind};

impl Tool {
    /// Checks arguments against the tool's JSON Schema.
    ///
    /// The loop does this for every call before any wrapper or the tool sees it (see
    /// [`AgentBuilder::validate_arguments`](crate::AgentBuilder::validate_arguments)); a
    /// wrapper that changes the arguments can check them again with it.
    ///
    /// # Errors
    ///
    /// A [`ToolErrorKind::InvalidArguments`] error listing each problem with its path in
    /// the arguments, e.g. ``at `/city`: 42 is not of type "string"``; or a
    /// [`ToolErrorKind::Failed`] error if the tool's own schema is not a valid JSON Schema.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::testing::text_tool;
    /// use tower_adk::{ToolErrorKind, ToolInfo};
    /// use serde_json::json;
    ///
    /// let tool = tower_adk::Tool::from_fn(
    ///     ToolInfo::new("weather", "Weather in a city").parameters(json!({
    ///         "type": "object",
    ///         "properties": {"city": {"type": "string"}},
    ///         "required": ["city"]
    ///     })),
    ///     |_| async { Ok::<_, std::convert::Infallible>("sunny") },
    /// );
    /// assert!(tool.validate(&json!({"city": "Oslo"})).is_ok());
    /// let error = tool.validate(&json!({"city": 42})).unwrap_err();
    /// assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    /// assert!(error.message().contains("/city"), "{error}");
    /// ```
    pub fn validate(&self, arguments: &Value) -> Result<(), ToolError> {
        let validator = self.validator().map_err(|reason| {
            ToolError::new(
                ToolErrorKind::Failed,
                format!(
                    "the parameter schema of tool `{}` is invalid: {reason}",
                    self.name()
                ),
            )
        })?;
        // The common case, valid arguments, without collecting errors.
        if validator.takes_any_object && arguments.is_object() || validator.is_valid(arguments) {
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .map(|error| {
                let path = error.instance_path().as_str();
                let path = if path.is_empty() { "/" } else { path };
                format!("at `{path}`: {}", reason(&error))
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ToolError::invalid_arguments(problems.join("; ")))
        }
    }

    /// The compiled validator, or why the schema does not compile.
    pub(crate) fn validator(&self) -> Result<&Checker, &str> {
        self.0
            .validator
            .get_or_init(|| Checker::new(&self.info().parameters))
            .as_ref()
            .map_err(String::as_str)
    }
}

/// A tool's compiled schema, and whether it takes any object (the schema of a tool with
/// no parameters), which is then checked without the validator.
pub(crate) struct Checker {
    validator: Validator,
    takes_any_object: bool,
}

impl Checker {
    fn new(schema: &Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
        Ok(Checker {
            validator,
            takes_any_object: takes_any_object(schema),
        })
    }
}

impl std::ops::Deref for Checker {
    type Target = Validator;

    fn deref(&self) -> &Validator {
        &self.validator
    }
}

/// Whether a schema says only "an object": `{"type": "object"}`, with no properties or
/// an empty list of them (what [`ToolInfo::new`](super::ToolInfo::new) gives).
fn takes_any_object(schema: &Value) -> bool {
    let Some(schema) = schema.as_object() else {
        return false;
    };
    schema.iter().all(|(key, value)| match key.as_str() {
        "type" => value == "object",
        "properties" => value.as_object().is_some_and(serde_json::Map::is_empty),
        _ => false,
    }) && schema.contains_key("type")
}

/// Why a value failed validation, for the model. A value outside an `enum` is told every
/// allowed value (the validator's own message elides all but a few), so the model can
/// pick one.
pub(crate) fn reason(error: &jsonschema::ValidationError<'_>) -> String {
    let jsonschema::error::ValidationErrorKind::Enum { options } = error.kind() else {
        return error.to_string();
    };
    let Some(options) = options.as_array().filter(|o| !o.is_empty()) else {
        return error.to_string();
    };
    let mut allowed = String::new();
    for (i, option) in options.iter().enumerate() {
        if i > 0 {
            allowed.push_str(if i + 1 == options.len() { " or " } else { ", " });
        }
        allowed.push_str(&option.to_string());
    }
    format!("{} is not one of {allowed}", error.instance())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool::ToolInfo;

    #[test]
    fn only_a_schema_of_any_object_is_checked_without_the_validator() {
        assert!(takes_any_object(&json!({"type": "object"})));
        assert!(takes_any_object(
            &json!({"type": "object", "properties": {}})
        ));
        assert!(!takes_any_object(
            &json!({"type": "object", "properties": {"a": {}}})
        ));
        assert!(!takes_any_object(
            &json!({"type": "object", "required": ["a"]})
        ));
        assert!(!takes_any_object(
            &json!({"type": "object", "additionalProperties": false})
        ));
        assert!(!takes_any_object(&json!({"properties": {}})));
        assert!(!takes_any_object(&json!({"type": "string"})));
    }

    #[test]
    fn a_tool_without_parameters_takes_any_object_and_nothing_else() {
        let tool = Tool::from_fn(ToolInfo::new("t", "No parameters"), |_| async {
            Ok::<_, std::convert::Infallible>("ok")
        });
        assert!(tool.validate(&json!({"anything": [1, 2]})).is_ok());
        let Err(error) = tool.validate(&json!(42)) else {
            panic!("a number is not an object");
        };
        assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
        assert!(error.message().contains("object"), "{error}");
    }
}
