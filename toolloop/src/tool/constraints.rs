//! Checks the constraints of a JSON schema that deserialisation does not:
//! ranges, lengths, sizes, `pattern`, `enum`/`const`, `multipleOf`,
//! `uniqueItems`. Tool arguments and typed outputs share it, so what the
//! model is told (`#[schemars(range(max = 10))]`) is what is enforced.
//!
//! A small walker over the keywords schemars emits for `#[schemars(range,
//! length, regex, ...)]`, instead of a general JSON-schema validator crate:
//! those pull in URL and date parsers and their own schema compilation for
//! the few keywords a tool or an output declares. `format` is not checked;
//! a `pattern` the `regex` crate cannot compile (look-around,
//! back-references) is not checked either.

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::{Mutex, OnceLock, PoisonError};

use regex::Regex;
use serde_json::{Map, Value};

/// One broken constraint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    /// Where, like `filters[0].limit`; empty for the value as a whole.
    pub(crate) path: String,
    /// What is wrong.
    pub(crate) message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.path, self.message)
        }
    }
}

/// Every constraint `value` breaks, as `"at `path`: ..."` messages (`"at
/// the output: ..."` for the value as a whole), for output validation.
pub(crate) fn violations(schema: &Value, value: &Value) -> Vec<String> {
    check(schema, value)
        .into_iter()
        .map(|v| if v.path.is_empty() { format!("at the output: {}", v.message) } else { v.to_string() })
        .collect()
}

/// Every constraint `value` breaks.
pub(crate) fn check(schema: &Value, value: &Value) -> Vec<Violation> {
    let mut errors = Vec::new();
    walk(schema, schema, value, &mut String::new(), &mut errors);
    errors
}

fn walk(root: &Value, schema: &Value, value: &Value, path: &mut String, errors: &mut Vec<Violation>) {
    let Some(schema) = schema.as_object() else { return };
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        if let Some(resolved) = resolve(root, target) {
            walk(root, resolved, value, path, errors);
        }
        return;
    }
    let mut fail = |message: String| errors.push(Violation { path: path.clone(), message });
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
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
                && matches_pattern(pattern, text) == Some(false)
            {
                fail(format!("{value} does not match the pattern `{pattern}`"));
            }
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
                    walk(root, item_schema, item, path, errors);
                    path.truncate(len);
                }
            }
        }
        Value::Object(fields) => {
            bound(schema, "minProperties", "maxProperties", fields.len() as u64, "properties", &mut fail);
            properties(root, schema, fields, path, errors);
        }
        Value::Null | Value::Bool(_) => {}
    }
    // `Option<T>` and enums put constraints one level down; check the
    // alternative the value is an instance of, when exactly one fits its
    // shape (a tagged enum's variants differ in their tag or their keys).
    for key in ["anyOf", "oneOf"] {
        if let Some(alternatives) = schema.get(key).and_then(Value::as_array) {
            let fitting: Vec<&Value> = alternatives.iter().filter(|alt| fits(root, alt, value)).collect();
            if let [only] = fitting[..] {
                walk(root, only, value, path, errors);
            }
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for part in all {
            walk(root, part, value, path, errors);
        }
    }
}

fn properties(
    root: &Value,
    schema: &Map<String, Value>,
    fields: &Map<String, Value>,
    path: &mut String,
    errors: &mut Vec<Violation>,
) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, field) in fields {
        if let Some(property) = properties.get(name) {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(name);
            walk(root, property, field, path, errors);
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
    if let Some(step) = limit("multipleOf").filter(|step| *step > 0.0 && !is_multiple(n, *step)) {
        fail(format!("{n} is not a multiple of {step}"));
    }
}

/// Whether `n` is a whole number of `step`s, within the rounding error of
/// decimal fractions in binary (`0.3 / 0.1` is `2.9999999999999996`).
fn is_multiple(n: f64, step: f64) -> bool {
    let quotient = n / step;
    (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
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

/// Whether `text` matches `pattern` (anywhere, as JSON schema says); `None`
/// when the pattern is not one the `regex` crate compiles. Patterns are
/// compiled once per process.
fn matches_pattern(pattern: &str, text: &str) -> Option<bool> {
    static COMPILED: OnceLock<Mutex<HashMap<String, Option<Regex>>>> = OnceLock::new();
    let mut compiled = COMPILED.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
    let regex = compiled.entry(pattern.to_owned()).or_insert_with(|| Regex::new(pattern).ok());
    regex.as_ref().map(|regex| regex.is_match(text))
}

/// Whether `schema` is meant for values of `value`'s shape: its JSON type,
/// and for objects the tag or keys that tell an enum's variants apart.
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
    let type_fits = match schema.get("type") {
        Some(Value::String(t)) => matches(t),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).any(matches),
        _ => schema.get("const").is_none_or(|c| c == value),
    };
    let Value::Object(fields) = value else { return type_fits };
    type_fits && object_fits(schema, fields)
}

/// Whether an object has what `schema` requires of its keys: every
/// required key, a tag property's one value, and no key a closed schema
/// does not list.
fn object_fits(schema: &Value, fields: &Map<String, Value>) -> bool {
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    if required.into_iter().any(|key| !fields.contains_key(key)) {
        return false;
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    if schema.get("additionalProperties") == Some(&Value::Bool(false))
        && fields.keys().any(|key| !properties.is_some_and(|p| p.contains_key(key)))
    {
        return false;
    }
    properties.into_iter().flatten().all(|(key, property)| {
        let single = match (property.get("const"), property.get("enum").and_then(Value::as_array)) {
            (Some(constant), _) => Some(constant),
            (None, Some(values)) if values.len() == 1 => values.first(),
            _ => None,
        };
        match (single, fields.get(key)) {
            (Some(expected), Some(actual)) => expected == actual,
            _ => true,
        }
    })
}

fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    root.pointer(target.strip_prefix('#')?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{check, is_multiple, violations};

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
        assert_eq!(violations(&json!({"maximum": 1}), &json!(2)), ["at the output: 2 is greater than the maximum 1"]);
    }

    #[test]
    fn decimal_multiples_are_multiples() {
        for (n, step) in [(0.3, 0.1), (0.7, 0.1), (1.1, 0.1), (2.5, 0.5), (1e6, 0.01), (-0.3, 0.1), (0.0, 0.1)] {
            assert!(is_multiple(n, step), "{n} / {step}");
        }
        for (n, step) in [(0.35, 0.1), (1.0, 0.3), (7.0, 2.0)] {
            assert!(!is_multiple(n, step), "{n} / {step}");
        }
        let schema = json!({"type": "number", "multipleOf": 0.1});
        assert!(check(&schema, &json!(0.3)).is_empty());
        assert_eq!(check(&schema, &json!(0.35))[0].message, "0.35 is not a multiple of 0.1");
    }

    #[test]
    fn constraints_inside_tagged_enum_variants_are_checked() {
        // The shapes schemars gives internally, externally and adjacently tagged enums.
        let internally = json!({"oneOf": [
            {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"},
                "radius": {"type": "number", "minimum": 0}}, "required": ["kind", "radius"]},
            {"type": "object", "properties": {"kind": {"type": "string", "const": "square"},
                "side": {"type": "number", "maximum": 10}}, "required": ["kind", "side"]}
        ]});
        assert_eq!(check(&internally, &json!({"kind": "circle", "radius": -1}))[0].path, "radius");
        assert_eq!(check(&internally, &json!({"kind": "square", "side": 11}))[0].path, "side");
        assert!(check(&internally, &json!({"kind": "square", "side": 3})).is_empty());

        let externally = json!({"oneOf": [
            {"type": "string", "enum": ["none"]},
            {"type": "object", "properties": {"circle": {"type": "object",
                "properties": {"radius": {"type": "number", "minimum": 0}}}},
                "required": ["circle"], "additionalProperties": false},
            {"type": "object", "properties": {"square": {"type": "object",
                "properties": {"side": {"type": "number", "maximum": 10}}}},
                "required": ["square"], "additionalProperties": false}
        ]});
        assert_eq!(check(&externally, &json!({"square": {"side": 12}}))[0].path, "square.side");
        assert!(check(&externally, &json!("none")).is_empty());

        let adjacently = json!({"oneOf": [
            {"type": "object", "properties": {"t": {"type": "string", "enum": ["count"]},
                "c": {"type": "integer", "minimum": 1}}, "required": ["t", "c"]},
            {"type": "object", "properties": {"t": {"type": "string", "enum": ["name"]},
                "c": {"type": "string", "minLength": 2}}, "required": ["t", "c"]}
        ]});
        assert_eq!(check(&adjacently, &json!({"t": "count", "c": 0}))[0].path, "c");
        assert_eq!(check(&adjacently, &json!({"t": "name", "c": "x"}))[0].path, "c");
    }

    #[test]
    fn patterns_are_checked_when_the_regex_crate_compiles_them() {
        let schema = json!({"type": "string", "pattern": "^[A-Z]{3}$"});
        assert!(check(&schema, &json!("EUR")).is_empty());
        assert_eq!(check(&schema, &json!("euro"))[0].message, "\"euro\" does not match the pattern `^[A-Z]{3}$`");
        // Unanchored patterns match anywhere, as JSON schema says.
        assert!(check(&json!({"pattern": "[0-9]"}), &json!("a1b")).is_empty());
        // Look-around is not supported by the regex crate: not checked.
        assert!(check(&json!({"pattern": "^(?=a)"}), &json!("b")).is_empty());
    }
}
