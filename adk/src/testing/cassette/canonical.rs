//! The canonical form of a request: what a provider is asked, as stable JSON; and the
//! readable difference of two.

use std::fmt::Write;

use serde_json::{Map, Number, Value, json};

use super::error::CassetteError;
use crate::model::{ModelOptions, ModelRequest, ToolChoice};

/// The request as JSON: the messages with their parts, the tools (name, description,
/// schema, strictness), and the options that are set. The run's extensions are not part
/// of it: a provider never sees them.
pub(crate) fn canonical(request: &ModelRequest) -> Result<Value, CassetteError> {
    let messages = serde_json::to_value(&request.messages).map_err(CassetteError::Json)?;
    let tools = (request.tools.iter())
        .map(|tool| serde_json::to_value(&**tool))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CassetteError::Json)?;
    Ok(json!({
        "messages": messages,
        "tools": tools,
        "options": options(&request.options),
    }))
}

/// The options that are set, floats as they were written (`0.2`, not `0.20000000298...`).
fn options(options: &ModelOptions) -> Value {
    let mut set = Map::new();
    let mut put = |key: &str, value: Value| {
        if !value.is_null() {
            set.insert(key.to_owned(), value);
        }
    };
    put(
        "temperature",
        options.temperature.map_or(Value::Null, float),
    );
    put("max_tokens", json!(options.max_tokens));
    put(
        "tool_choice",
        match &options.tool_choice {
            ToolChoice::Auto => Value::Null,
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({ "tool": name }),
        },
    );
    put("parallel_tool_calls", json!(options.parallel_tool_calls));
    put("top_p", options.top_p.map_or(Value::Null, float));
    if !options.stop.is_empty() {
        put("stop", json!(options.stop));
    }
    put("seed", json!(options.seed));
    if let Some(format) = &options.response_format {
        let format = json!({"name": format.name, "schema": format.schema, "strict": format.strict});
        put("response_format", format);
    }
    Value::Object(set)
}

/// An `f32` as the decimal it was written as.
fn float(value: f32) -> Value {
    (value.to_string().parse::<f64>().ok())
        .and_then(Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// The path of the first place where two values differ (`messages[1].content`), or
/// `None` when they are equal.
pub(crate) fn first_difference(recorded: &Value, requested: &Value) -> Option<String> {
    let mut path = String::new();
    difference_at(recorded, requested, &mut path).then_some(path)
}

fn difference_at(a: &Value, b: &Value, path: &mut String) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().any(|key| {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                let differs = match (a.get(key), b.get(key)) {
                    (Some(a), Some(b)) => difference_at(a, b, path),
                    // In one of them only.
                    _ => true,
                };
                if !differs {
                    path.truncate(len);
                }
                differs
            })
        }
        (Value::Array(a), Value::Array(b)) => {
            let len = path.len();
            for i in 0..a.len().max(b.len()) {
                let _ = write!(path, "[{i}]");
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) if !difference_at(x, y, path) => path.truncate(len),
                    _ => return true,
                }
            }
            false
        }
        (a, b) => a != b,
    }
}

/// A unified diff of the two requests' pretty JSON: the recorded one `-`, this one `+`.
pub(crate) fn diff(recorded: &Value, requested: &Value) -> String {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    let (recorded, requested) = (pretty(recorded), pretty(requested));
    similar::TextDiff::from_lines(&recorded, &requested)
        .unified_diff()
        .context_radius(3)
        .header("recorded", "requested")
        .to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::first_difference;

    #[test]
    fn the_first_difference_is_named_by_its_path() {
        let a = json!({"messages": [{"role": "user", "content": "Paris"}], "tools": []});
        let b = json!({"messages": [{"role": "user", "content": "Rome"}], "tools": []});
        assert_eq!(
            first_difference(&a, &b).as_deref(),
            Some("messages[0].content")
        );
        assert_eq!(first_difference(&a, &a), None);
        let longer = json!({"messages": [{"role": "user", "content": "Paris"}, {"role": "user", "content": "x"}], "tools": []});
        assert_eq!(
            first_difference(&a, &longer).as_deref(),
            Some("messages[1]")
        );
        let with_option = json!({"messages": [{"role": "user", "content": "Paris"}], "tools": [], "options": {"seed": 1}});
        assert_eq!(
            first_difference(&a, &with_option).as_deref(),
            Some("options")
        );
    }
}
