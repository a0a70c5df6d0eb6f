//! Tools in OpenAI's function-calling format, and the strict form of a parameter schema.
//!
//! [`ToolInfo::to_openai_function`] gives the JSON that OpenAI's chat completions (and
//! the many servers compatible with it) expect in their `tools` list. With `strict`, the
//! model is held to the schema exactly, which OpenAI only accepts for schemas in the
//! strict form that [`strict_schema`] produces:
//!
//! - every object lists its properties and sets `"additionalProperties": false`;
//! - every property is in `required`; a property that was optional becomes nullable
//!   (`"type": [t, "null"]`, or `"anyOf": [schema, {"type": "null"}]` when the schema has
//!   no plain `type`), so the model sends `null` where it would have left it out;
//! - the same holds, recursively, for nested objects, array items, the branches of
//!   `anyOf` / `oneOf` / `allOf`, and the definitions under `$defs` or `definitions`.
//!
//! An object whose `additionalProperties` is itself a schema (a map such as a
//! `HashMap<String, T>`) is left open: closing it would reject every key. OpenAI's strict
//! mode does not accept such maps; avoid them in a strict tool's arguments.
//!
//! # Example
//!
//! ```
//! use tower_adk::ToolInfo;
//! use serde_json::json;
//!
//! let info = ToolInfo::new("weather", "Current weather in a city").parameters(json!({
//!     "type": "object",
//!     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
//!     "required": ["city"]
//! }));
//!
//! assert_eq!(info.to_openai_function(true), json!({
//!     "type": "function",
//!     "function": {
//!         "name": "weather",
//!         "description": "Current weather in a city",
//!         "parameters": {
//!             "type": "object",
//!             "properties": {
//!                 "city": {"type": "string"},
//!                 "days": {"type": ["integer", "null"]}
//!             },
//!             "required": ["city", "days"],
//!             "additionalProperties": false
//!         },
//!         "strict": true
//!     }
//! }));
//! // Not strict: the schema as written.
//! assert_eq!(info.to_openai_function(false)["function"]["parameters"], info.parameters);
//! assert_eq!(info.to_openai_function(false)["function"]["strict"], false);
//! ```

use serde_json::{Map, Value, json};

use super::ToolInfo;

impl ToolInfo {
    /// The tool in OpenAI's function-calling format:
    /// `{"type": "function", "function": {"name", "description", "parameters", "strict"}}`.
    ///
    /// With `strict`, `parameters` is the [strict form](strict_schema) of the schema (the
    /// schema itself if the info is already [strict](ToolInfo::strict), as the transform
    /// is idempotent) and `"strict"` is `true`; without, `parameters` is the schema as it is and `"strict"` is `false`,
    /// written out because some OpenAI APIs default to strict. A provider usually passes
    /// the tool's own flag: `info.to_openai_function(info.strict)`.
    pub fn to_openai_function(&self, strict: bool) -> Value {
        let parameters = if strict {
            strict_schema(self.parameters.clone())
        } else {
            self.parameters.clone()
        };
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
                "strict": strict,
            }
        })
    }
}

/// The strict form of a JSON Schema, as OpenAI's strict mode requires (see the [module
/// docs](self) for the rules).
///
/// The transform is idempotent: a schema already in strict form comes back unchanged.
///
/// # Example
///
/// ```
/// use tower_adk::tool::openai::strict_schema;
/// use serde_json::json;
///
/// let schema = strict_schema(json!({
///     "type": "object",
///     "properties": {
///         "tags": {"type": "array", "items": {
///             "type": "object",
///             "properties": {"name": {"type": "string"}}
///         }}
///     }
/// }));
/// assert_eq!(schema, json!({
///     "type": "object",
///     "properties": {
///         "tags": {"type": ["array", "null"], "items": {
///             "type": "object",
///             "properties": {"name": {"type": ["string", "null"]}},
///             "required": ["name"],
///             "additionalProperties": false
///         }}
///     },
///     "required": ["tags"],
///     "additionalProperties": false
/// }));
/// assert_eq!(strict_schema(schema.clone()), schema);
/// ```
pub fn strict_schema(mut schema: Value) -> Value {
    make_strict(&mut schema);
    schema
}

/// Keywords whose value is a list of subschemas.
const SCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

/// Keywords whose value maps names to subschemas (definitions).
const SCHEMA_MAPS: [&str; 2] = ["$defs", "definitions"];

/// Rewrites one schema and everything under it into strict form, in place.
fn make_strict(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    for key in SCHEMA_LISTS {
        if let Some(Value::Array(branches)) = map.get_mut(key) {
            branches.iter_mut().for_each(make_strict);
        }
    }
    for key in SCHEMA_MAPS {
        if let Some(Value::Object(definitions)) = map.get_mut(key) {
            definitions.values_mut().for_each(make_strict);
        }
    }
    match map.get_mut("items") {
        Some(Value::Array(items)) => items.iter_mut().for_each(make_strict),
        Some(items) => make_strict(items),
        None => {}
    }
    if let Some(values @ Value::Object(_)) = map.get_mut("additionalProperties") {
        make_strict(values);
    }
    if is_object_schema(map) {
        close_object(map);
    }
}

/// Whether a schema describes objects: its `type` is or includes `"object"`, or it has no
/// `type` but lists `properties`.
fn is_object_schema(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(ty)) => ty == "object",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "object"),
        _ => map.contains_key("properties"),
    }
}

/// Closes an object schema: no extra properties, every property required, the ones that
/// were optional made nullable. A map (`additionalProperties` is a schema) stays open.
fn close_object(map: &mut Map<String, Value>) {
    let is_map = matches!(map.get("additionalProperties"), Some(Value::Object(_)));
    if is_map && !map.contains_key("properties") {
        return;
    }
    if !is_map {
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    let mut required: Vec<Value> = match map.get("required") {
        Some(Value::Array(names)) => names.clone(),
        _ => Vec::new(),
    };
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(properties) = properties else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        make_strict(property);
        if !required.iter().any(|r| r == name.as_str()) {
            make_nullable(property);
            required.push(Value::String(name.clone()));
        }
    }
    map.insert("required".to_owned(), Value::Array(required));
}

/// Makes a schema accept `null` as well: in place when it has a plain `type`, otherwise
/// by wrapping it in `anyOf` with `{"type": "null"}`.
fn make_nullable(schema: &mut Value) {
    if accepts_null(schema) {
        return;
    }
    if let Value::Object(map) = schema {
        let plain = !["anyOf", "oneOf", "allOf", "not", "$ref", "const"]
            .iter()
            .any(|key| map.contains_key(*key));
        let typed = match map.get_mut("type") {
            Some(Value::String(ty)) if plain => {
                let ty = std::mem::take(ty);
                map.insert("type".to_owned(), json!([ty, "null"]));
                true
            }
            Some(Value::Array(types)) if plain => {
                types.push(json!("null"));
                true
            }
            _ => false,
        };
        if typed {
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.push(Value::Null);
            }
            return;
        }
    }
    let description = match schema {
        Value::Object(map) => map.remove("description"),
        _ => None,
    };
    let inner = std::mem::take(schema);
    let mut wrapper = Map::new();
    if let Some(description) = description {
        wrapper.insert("description".to_owned(), description);
    }
    wrapper.insert("anyOf".to_owned(), json!([inner, {"type": "null"}]));
    *schema = Value::Object(wrapper);
}

/// Whether a schema certainly accepts `null`. Conservative: `false` when unsure (a
/// `$ref`, `allOf`, `not`), so the caller adds a null branch that does no harm.
fn accepts_null(schema: &Value) -> bool {
    let map = match schema {
        Value::Bool(accepts) => return *accepts,
        Value::Object(map) => map,
        _ => return false,
    };
    if ["$ref", "allOf", "not"]
        .iter()
        .any(|key| map.contains_key(*key))
    {
        return false;
    }
    if let Some(value) = map.get("const") {
        return value.is_null();
    }
    if let Some(Value::Array(values)) = map.get("enum")
        && !values.contains(&Value::Null)
    {
        return false;
    }
    let by_type = match map.get("type") {
        Some(Value::String(ty)) => ty == "null",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "null"),
        Some(_) => false,
        None => true,
    };
    by_type
        && ["anyOf", "oneOf"]
            .iter()
            .filter_map(|key| map.get(*key).and_then(Value::as_array))
            .all(|branches| branches.iter().any(accepts_null))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::strict_schema;

    #[test]
    fn an_optional_property_becomes_required_and_nullable() {
        let schema = strict_schema(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["b"]
        }));
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "integer"}},
                "required": ["b", "a"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn a_required_property_stays_non_nullable() {
        let schema = strict_schema(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"]
        }));
        assert_eq!(schema["properties"]["a"], json!({"type": "string"}));
    }

    #[test]
    fn an_optional_enum_admits_null_in_its_type_and_its_values() {
        let schema = strict_schema(json!({
            "type": "object",
            "properties": {"unit": {"type": "string", "enum": ["c", "f"]}}
        }));
        assert_eq!(
            schema["properties"]["unit"],
            json!({"type": ["string", "null"], "enum": ["c", "f", null]})
        );
    }

    #[test]
    fn an_already_nullable_property_is_left_as_it_is() {
        let nullable = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
        let schema = strict_schema(json!({
            "type": "object",
            "properties": {"a": nullable.clone(), "b": {"type": ["integer", "null"]}}
        }));
        assert_eq!(schema["properties"]["a"], nullable);
        assert_eq!(
            schema["properties"]["b"],
            json!({"type": ["integer", "null"]})
        );
    }

    #[test]
    fn an_optional_ref_is_wrapped_in_any_of_with_null_and_keeps_its_description() {
        let schema = strict_schema(json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A", "description": "the a"}},
            "$defs": {"A": {"type": "object", "properties": {"x": {"type": "number"}}}}
        }));
        assert_eq!(
            schema["properties"]["a"],
            json!({"description": "the a", "anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]})
        );
        assert_eq!(
            schema["$defs"]["A"],
            json!({
                "type": "object",
                "properties": {"x": {"type": ["number", "null"]}},
                "required": ["x"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn objects_in_any_of_branches_and_nullable_objects_are_closed() {
        let schema = strict_schema(json!({
            "type": "object",
            "properties": {
                "shape": {"oneOf": [
                    {"type": "string", "enum": ["dot"]},
                    {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"]}
                ]},
                "place": {"type": ["object", "null"], "properties": {"city": {"type": "string"}}}
            },
            "required": ["shape", "place"]
        }));
        assert_eq!(
            schema["properties"]["shape"]["oneOf"][1]["additionalProperties"],
            false
        );
        assert_eq!(
            schema["properties"]["place"],
            json!({
                "type": ["object", "null"],
                "properties": {"city": {"type": ["string", "null"]}},
                "required": ["city"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn an_open_object_is_closed_and_a_map_stays_open() {
        let schema = strict_schema(json!({
            "type": "object",
            "properties": {
                "free": {"type": "object", "additionalProperties": true},
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}}
            },
            "required": ["free", "counts"]
        }));
        assert_eq!(
            schema["properties"]["free"],
            json!({
                "type": "object",
                "properties": {},
                "required": [],
                "additionalProperties": false
            })
        );
        assert_eq!(
            schema["properties"]["counts"],
            json!({"type": "object", "additionalProperties": {"type": "integer"}})
        );
    }

    #[test]
    fn the_transform_is_idempotent() {
        let once = strict_schema(json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/A"},
                "b": {"type": "array", "items": {"type": "object", "properties": {"c": {}}}}
            },
            "$defs": {"A": {"type": "string", "const": "x"}}
        }));
        assert_eq!(strict_schema(once.clone()), once);
    }
}
