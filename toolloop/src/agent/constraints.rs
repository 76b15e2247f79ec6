//! Checks the constraints of a JSON schema that deserialisation does not:
//! ranges, lengths, sizes, `enum`/`const`, `multipleOf`, `uniqueItems`.
//!
//! A small walker over the keywords schemars emits for `#[schemars(range,
//! length, ...)]`, instead of a general JSON-schema validator crate: those
//! pull in regex engines, URL and date parsers and their own schema
//! compilation for the few keywords an output type declares. `pattern` is
//! not checked (that would need a regex engine); use a validator for it.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// Every constraint `value` breaks, as `"at `path`: ..."` messages.
pub(crate) fn violations(schema: &Value, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, schema, value, &mut String::new(), &mut errors);
    errors
}

fn check(root: &Value, schema: &Value, value: &Value, path: &mut String, errors: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else { return };
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        if let Some(resolved) = resolve(root, target) {
            check(root, resolved, value, path, errors);
        }
        return;
    }
    let mut fail = |message: String| {
        let at = if path.is_empty() { "the output".to_owned() } else { format!("`{path}`") };
        errors.push(format!("at {at}: {message}"));
    };
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        fail(format!("{value} is not one of {}", Value::Array(allowed.clone())));
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        fail(format!("must be {expected}"));
    }
    match value {
        Value::Number(number) => {
            if let Some(n) = number.as_f64() {
                numeric(schema, n, &mut fail);
            }
        }
        Value::String(text) => {
            let length = text.chars().count() as u64;
            bound(schema, "minLength", "maxLength", length, "characters", &mut fail);
        }
        Value::Array(items) => {
            bound(schema, "minItems", "maxItems", items.len() as u64, "items", &mut fail);
            if schema.get("uniqueItems") == Some(&Value::Bool(true))
                && items.iter().enumerate().any(|(i, item)| items[..i].contains(item))
            {
                fail("items must be unique".to_owned());
            }
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    let len = path.len();
                    let _ = write!(path, "[{index}]");
                    check(root, item_schema, item, path, errors);
                    path.truncate(len);
                }
            }
        }
        Value::Object(fields) => properties(root, schema, fields, path, errors),
        Value::Null | Value::Bool(_) => {}
    }
    // `Option<T>` and enums put constraints one level down; check the
    // alternatives only when exactly one fits the value's shape.
    for key in ["anyOf", "oneOf"] {
        if let Some(alternatives) = schema.get(key).and_then(Value::as_array) {
            let fitting: Vec<&Value> = alternatives.iter().filter(|alt| fits(root, alt, value)).collect();
            if let [only] = fitting[..] {
                check(root, only, value, path, errors);
            }
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for part in all {
            check(root, part, value, path, errors);
        }
    }
}

fn properties(
    root: &Value,
    schema: &Map<String, Value>,
    fields: &Map<String, Value>,
    path: &mut String,
    errors: &mut Vec<String>,
) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, field) in fields {
        if let Some(property) = properties.get(name) {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(name);
            check(root, property, field, path, errors);
            path.truncate(len);
        }
    }
}

fn numeric(schema: &Map<String, Value>, n: f64, fail: &mut impl FnMut(String)) {
    let limit = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(min) = limit("minimum").filter(|min| n < *min) {
        fail(format!("{n} is less than the minimum {min}"));
    }
    if let Some(max) = limit("maximum").filter(|max| n > *max) {
        fail(format!("{n} is greater than the maximum {max}"));
    }
    if let Some(min) = limit("exclusiveMinimum").filter(|min| n <= *min) {
        fail(format!("{n} must be greater than {min}"));
    }
    if let Some(max) = limit("exclusiveMaximum").filter(|max| n >= *max) {
        fail(format!("{n} must be less than {max}"));
    }
    if let Some(step) = limit("multipleOf").filter(|step| *step > 0.0 && ((n / *step).fract().abs() > 1e-9)) {
        fail(format!("{n} is not a multiple of {step}"));
    }
}

fn bound(
    schema: &Map<String, Value>,
    min_key: &str,
    max_key: &str,
    size: u64,
    unit: &str,
    fail: &mut impl FnMut(String),
) {
    if let Some(min) = schema.get(min_key).and_then(Value::as_u64).filter(|min| size < *min) {
        fail(format!("has {size} {unit}, at least {min} required"));
    }
    if let Some(max) = schema.get(max_key).and_then(Value::as_u64).filter(|max| size > *max) {
        fail(format!("has {size} {unit}, at most {max} allowed"));
    }
}

/// Whether `schema` is meant for values of `value`'s JSON type.
fn fits(root: &Value, schema: &Value, value: &Value) -> bool {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(target) => resolve(root, target).unwrap_or(schema),
        None => schema,
    };
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let matches = |t: &str| t == kind || (t == "number" && kind == "integer");
    match schema.get("type") {
        Some(Value::String(t)) => matches(t),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).any(matches),
        _ => schema.get("const").is_none_or(|c| c == value),
    }
}

fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    root.pointer(target.strip_prefix('#')?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::violations;

    #[test]
    fn reports_every_broken_constraint_with_its_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 3},
                "score": {"type": "integer", "minimum": 1, "maximum": 10},
                "tags": {"type": "array", "maxItems": 1, "items": {"type": "string", "enum": ["a", "b"]}},
                "note": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]},
                "inner": {"$ref": "#/$defs/Inner"}
            },
            "$defs": {"Inner": {"type": "object", "properties": {"ratio": {"type": "number", "exclusiveMaximum": 1.0}}}}
        });
        let value = json!({"title": "ab", "score": 11, "tags": ["a", "c"], "note": "long", "inner": {"ratio": 1.0}});
        let errors = violations(&schema, &value);
        assert_eq!(
            errors,
            [
                "at `title`: has 2 characters, at least 3 required",
                "at `score`: 11 is greater than the maximum 10",
                "at `tags`: has 2 items, at most 1 allowed",
                "at `tags[1]`: \"c\" is not one of [\"a\",\"b\"]",
                "at `note`: has 4 characters, at most 2 allowed",
                "at `inner.ratio`: 1 must be less than 1",
            ]
        );
        assert!(violations(&schema, &json!({"title": "abc", "score": 5, "note": null})).is_empty());
    }
}
