//! A tool's JSON Schema in the form Gemini's function declarations take: the `Schema`
//! object of the API (a subset of OpenAPI 3.0), which every Gemini model and API version
//! reads.
//!
//! The API's reference for `Schema` lists the keywords it knows: `type` (upper case:
//! `STRING`, `NUMBER`, `INTEGER`, `BOOLEAN`, `ARRAY`, `OBJECT`), `format`, `title`,
//! `description`, `nullable`, `enum`, `items`, `properties`, `required`, `anyOf`,
//! `minItems`, `maxItems`, `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`,
//! `minProperties`, `maxProperties`, `default`, `example`, `propertyOrdering`. Older
//! versions refuse every other keyword (`$schema`, `additionalProperties`, `$ref`,
//! `$defs`, `const`, `oneOf`, ...) with 400 `Invalid JSON payload received. Unknown
//! name`. So:
//!
//! - `$ref`s to `#/$defs/...` (or `#/definitions/...`, as schemars writes nested types)
//!   are replaced by what they point to (a cycle stops at an empty schema);
//! - `"type": ["string", "null"]` becomes `"type": "STRING", "nullable": true`, and an
//!   `anyOf` member `{"type": "null"}` becomes `nullable`;
//! - `const` becomes a one-value `enum`, `oneOf` an `anyOf`, `examples` its first as
//!   `example`; `enum` values are written as strings (the API takes string enums);
//! - everything else not in the list above is dropped (`$schema`, `$id`,
//!   `additionalProperties`, `unevaluatedProperties`, `not`, `if`, ...): the model
//!   still reads the names and descriptions, and the loop checks the arguments against
//!   the tool's full schema before running it.

use serde_json::{Map, Value, json};

/// The keywords the API's `Schema` takes as they are.
const KEPT: [&str; 14] = [
    "format",
    "title",
    "description",
    "nullable",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];

/// How deep `$ref`s are followed before a schema is cut to `{}` (a recursive type).
const MAX_DEPTH: usize = 32;

/// `schema` in the form of the API's `Schema` object.
pub(super) fn to_gemini(schema: &Value) -> Value {
    let defs = Definitions::of(schema);
    convert(schema, &defs, 0)
}

/// The `$defs` (and `definitions`) of the root schema, for `$ref`s to point into.
struct Definitions<'a> {
    root: &'a Value,
}

impl<'a> Definitions<'a> {
    fn of(root: &'a Value) -> Self {
        Definitions { root }
    }

    /// What `#/$defs/Name` (or `#/definitions/Name`) points to.
    fn get(&self, reference: &str) -> Option<&'a Value> {
        let path = reference.strip_prefix('#')?;
        self.root.pointer(path)
    }
}

fn convert(schema: &Value, defs: &Definitions<'_>, depth: usize) -> Value {
    let Value::Object(map) = schema else {
        // `true` (anything) and other shorthands: no constraint.
        return json!({});
    };
    if let Some(target) = map.get("$ref").and_then(Value::as_str) {
        return match defs.get(target) {
            Some(found) if depth < MAX_DEPTH => {
                let mut out = convert(found, defs, depth + 1);
                // Keywords beside a `$ref` (a description) win over the target's.
                if let (Value::Object(out), Some(Value::String(text))) =
                    (&mut out, map.get("description"))
                {
                    out.insert("description".into(), text.clone().into());
                }
                out
            }
            _ => json!({}),
        };
    }
    let mut out = Map::new();
    convert_type(map, &mut out);
    for key in KEPT {
        if let Some(value) = map.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    if let Some(value) = map.get("default") {
        out.insert("default".into(), value.clone());
    }
    let example = map.get("example").or_else(|| map.get("examples")?.get(0));
    if let Some(example) = example {
        out.insert("example".into(), example.clone());
    }
    let values = match (map.get("enum"), map.get("const")) {
        (Some(Value::Array(values)), _) => Some(values.clone()),
        (None, Some(value)) => Some(vec![value.clone()]),
        _ => None,
    };
    if let Some(values) = values {
        let strings: Vec<Value> = (values.iter())
            .filter(|v| !v.is_null())
            .map(|v| match v {
                Value::String(s) => Value::String(s.clone()),
                other => Value::String(other.to_string()),
            })
            .collect();
        if values.iter().any(Value::is_null) {
            out.insert("nullable".into(), true.into());
        }
        out.insert("enum".into(), strings.into());
        // The API takes enums of strings only.
        out.insert("type".into(), "STRING".into());
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        let converted: Map<String, Value> = (properties.iter())
            .map(|(name, schema)| (name.clone(), convert(schema, defs, depth + 1)))
            .collect();
        out.insert("properties".into(), converted.into());
    }
    if let Some(Value::Array(required)) = map.get("required") {
        out.insert("required".into(), required.clone().into());
    }
    match map.get("items") {
        Some(items @ Value::Object(_)) => {
            out.insert("items".into(), convert(items, defs, depth + 1));
        }
        // A tuple (`"items": [...]`, or `prefixItems`): its first member stands for all.
        Some(Value::Array(items)) => {
            if let Some(first) = items.first() {
                out.insert("items".into(), convert(first, defs, depth + 1));
            }
        }
        _ => {
            if let Some(first) = map.get("prefixItems").and_then(|p| p.get(0)) {
                out.insert("items".into(), convert(first, defs, depth + 1));
            }
        }
    }
    let members = map.get("anyOf").or_else(|| map.get("oneOf"));
    if let Some(Value::Array(members)) = members {
        convert_any_of(members, defs, depth, &mut out);
    }
    if let Some(Value::Array(all)) = map.get("allOf") {
        // `allOf` of one schema (schemars' way of adding a description to a `$ref`).
        if let [only] = all.as_slice()
            && let Value::Object(inner) = convert(only, defs, depth + 1)
        {
            for (key, value) in inner {
                out.entry(key).or_insert(value);
            }
        }
    }
    Value::Object(out)
}

/// `type`, upper case; a `null` among several types becomes `nullable`.
fn convert_type(map: &Map<String, Value>, out: &mut Map<String, Value>) {
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let (nulls, named): (Vec<&str>, Vec<&str>) = types.into_iter().partition(|t| *t == "null");
    if !nulls.is_empty() {
        out.insert("nullable".into(), true.into());
    }
    match named.as_slice() {
        [] if !nulls.is_empty() => {
            out.insert("type".into(), "NULL".into());
        }
        [] => {}
        [one] => {
            out.insert("type".into(), one.to_ascii_uppercase().into());
        }
        several => {
            let members: Vec<Value> = (several.iter())
                .map(|t| json!({"type": t.to_ascii_uppercase()}))
                .collect();
            out.insert("anyOf".into(), members.into());
        }
    }
}

/// `anyOf` (or `oneOf`): its members converted, a `{"type": "null"}` member as `nullable`,
/// and a single member left merged into the schema itself.
fn convert_any_of(
    members: &[Value],
    defs: &Definitions<'_>,
    depth: usize,
    out: &mut Map<String, Value>,
) {
    let is_null = |m: &&Value| m.get("type").and_then(Value::as_str) == Some("null");
    if members.iter().any(|m| is_null(&m)) {
        out.insert("nullable".into(), true.into());
    }
    let mut converted: Vec<Value> = (members.iter())
        .filter(|m| !is_null(m))
        .map(|m| convert(m, defs, depth + 1))
        .collect();
    if converted.len() == 1 {
        if let Some(Value::Object(only)) = converted.pop() {
            for (key, value) in only {
                out.entry(key).or_insert(value);
            }
        }
    } else if !converted.is_empty() {
        out.insert("anyOf".into(), converted.into());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::to_gemini;

    #[test]
    fn keywords_older_api_versions_refuse_are_dropped_or_converted() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "city": {"type": "string", "description": "The city"},
                "unit": {"type": ["string", "null"], "enum": ["c", "f", null]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1},
                "kind": {"const": "forecast"},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
            },
            "required": ["city"]
        });
        assert_eq!(
            to_gemini(&schema),
            json!({
                "title": "Args",
                "type": "OBJECT",
                "properties": {
                    "city": {"type": "STRING", "description": "The city"},
                    "unit": {"type": "STRING", "nullable": true, "enum": ["c", "f"]},
                    "days": {"type": "INTEGER", "minimum": 1, "maximum": 7, "default": 1},
                    "kind": {"type": "STRING", "enum": ["forecast"]},
                    "tags": {"type": "ARRAY", "items": {"type": "STRING"}}
                },
                "required": ["city"]
            })
        );
    }

    #[test]
    fn references_are_inlined_and_a_cycle_is_cut() {
        let schema = json!({
            "type": "object",
            "properties": {
                "home": {"$ref": "#/$defs/Place", "description": "Where I live"},
                "work": {"anyOf": [{"$ref": "#/definitions/Place"}, {"type": "null"}]},
                "tree": {"$ref": "#/$defs/Node"}
            },
            "$defs": {
                "Place": {"type": "object", "properties": {"name": {"type": "string"}}},
                "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}
            },
            "definitions": {"Place": {"type": "object", "properties": {"name": {"type": "string"}}}}
        });
        let converted = to_gemini(&schema);
        assert_eq!(
            converted["properties"]["home"],
            json!({"type": "OBJECT", "description": "Where I live", "properties": {"name": {"type": "STRING"}}})
        );
        assert_eq!(
            converted["properties"]["work"],
            json!({"nullable": true, "type": "OBJECT", "properties": {"name": {"type": "STRING"}}})
        );
        assert!(converted.get("$defs").is_none());
        // A recursive type is followed to a depth, then cut to `{}`.
        assert!(!converted.to_string().contains("$ref"));
    }

    #[test]
    fn several_types_become_any_of() {
        assert_eq!(
            to_gemini(&json!({"type": ["string", "integer"]})),
            json!({"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]})
        );
        assert_eq!(
            to_gemini(&json!({"oneOf": [{"type": "string"}, {"type": "number"}]})),
            json!({"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]})
        );
    }
}
