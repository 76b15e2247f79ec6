//! Checks a tool call's arguments against an MCP server's input schema
//! before the call is sent, so that the model gets the same kind of
//! argument error (with a field path) as for a derived tool, and a server
//! never sees input its own schema rejects.
//!
//! A walker over the JSON-schema keywords tool schemas use (types,
//! `properties`, `required`, `additionalProperties`, `items`, `enum`,
//! `const`, the `anyOf`/`oneOf`/`allOf`/`not` combinators, local `$ref`s,
//! ranges, lengths and sizes) instead of a general validator crate, which
//! would bring regex engines and URL and date parsers for the rest. Unknown
//! keywords, `format` and `pattern` are not checked: the server still is
//! the judge of those.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::tool::ArgumentError;

/// How deep `$ref`s may nest before a schema is taken as recursive beyond reason.
const MAX_DEPTH: usize = 64;

/// One way the arguments break the schema.
#[derive(Debug, PartialEq)]
pub(crate) struct Violation {
    /// Where, like `filters[0].limit`; empty for the arguments as a whole.
    pub(crate) path: String,
    pub(crate) message: String,
}

/// Every way `value` breaks `schema`.
pub(crate) fn violations(schema: &Value, value: &Value) -> Vec<Violation> {
    let mut walker = Walker { root: schema, errors: Vec::new(), path: String::new() };
    walker.check(schema, value, 0);
    walker.errors
}

/// The violations as one argument error that lists them all (a model fixes
/// every field in one go that way); a single one keeps its path.
pub(crate) fn argument_error(violations: &[Violation]) -> Option<ArgumentError> {
    match violations {
        [] => None,
        [only] => Some(ArgumentError::new(non_empty(&only.path), only.message.clone())),
        _ => {
            let messages: Vec<String> = violations
                .iter()
                .map(|v| if v.path.is_empty() { v.message.clone() } else { format!("at `{}`: {}", v.path, v.message) })
                .collect();
            Some(ArgumentError::new(None, messages.join("; ")))
        }
    }
}

fn non_empty(path: &str) -> Option<String> {
    (!path.is_empty()).then(|| path.to_owned())
}

struct Walker<'a> {
    root: &'a Value,
    errors: Vec<Violation>,
    path: String,
}

impl<'a> Walker<'a> {
    fn fail(&mut self, message: String) {
        self.errors.push(Violation { path: self.path.clone(), message });
    }

    fn check(&mut self, schema: &'a Value, value: &Value, depth: usize) {
        let object = match schema {
            Value::Bool(false) => return self.fail("no value is allowed here".to_owned()),
            Value::Object(object) => object,
            _ => return,
        };
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(target) = object.get("$ref").and_then(Value::as_str)
            && let Some(resolved) = resolve(self.root, target)
        {
            self.check(resolved, value, depth + 1);
        }
        if let Some(expected) = object.get("type")
            && !type_matches(expected, value)
        {
            return self.fail(format!("expected {}, got {}", describe_type(expected), kind_phrase(value)));
        }
        if let Some(allowed) = object.get("enum").and_then(Value::as_array)
            && !allowed.iter().any(|a| json_equal(a, value))
        {
            self.fail(format!("{value} is not one of {}", Value::Array(allowed.clone())));
        }
        if let Some(expected) = object.get("const")
            && !json_equal(expected, value)
        {
            self.fail(format!("must be {expected}"));
        }
        match value {
            Value::Number(number) => {
                if let Some(n) = number.as_f64() {
                    self.numeric(object, n);
                }
            }
            Value::String(text) => {
                let length = text.chars().count() as u64;
                self.bound(object, "minLength", "maxLength", length, "characters");
            }
            Value::Array(items) => self.array(object, items, depth),
            Value::Object(fields) => self.object(object, fields, depth),
            Value::Null | Value::Bool(_) => {}
        }
        self.combinators(object, value, depth);
    }

    fn object(&mut self, schema: &'a Map<String, Value>, fields: &Map<String, Value>, depth: usize) {
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(name) {
                    self.at(name, |walker| walker.fail("missing required field".to_owned()));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        for (name, field) in fields {
            match properties.and_then(|p| p.get(name)) {
                Some(property) => self.at(name, |walker| walker.check(property, field, depth + 1)),
                None => match additional {
                    Some(Value::Bool(false)) => {
                        let known: Vec<&str> =
                            properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                        let message = if known.is_empty() {
                            "unknown field; this tool takes no fields".to_owned()
                        } else {
                            format!("unknown field; the fields are: {}", known.join(", "))
                        };
                        self.at(name, |walker| walker.fail(message));
                    }
                    Some(extra @ Value::Object(_)) => self.at(name, |walker| walker.check(extra, field, depth + 1)),
                    _ => {}
                },
            }
        }
        self.bound(schema, "minProperties", "maxProperties", fields.len() as u64, "fields");
    }

    fn array(&mut self, schema: &'a Map<String, Value>, items: &[Value], depth: usize) {
        self.bound(schema, "minItems", "maxItems", items.len() as u64, "items");
        if schema.get("uniqueItems") == Some(&Value::Bool(true))
            && items.iter().enumerate().any(|(i, item)| items[..i].iter().any(|earlier| json_equal(earlier, item)))
        {
            self.fail("items must be unique".to_owned());
        }
        // `prefixItems` (2020-12) or an array `items` (older drafts) fix the
        // first positions; `items` (or `additionalItems`) covers the rest.
        let (prefix, rest) = match (schema.get("prefixItems"), schema.get("items")) {
            (Some(Value::Array(prefix)), rest) => (prefix.as_slice(), rest),
            (None, Some(Value::Array(prefix))) => (prefix.as_slice(), schema.get("additionalItems")),
            (_, rest) => (&[][..], rest),
        };
        for (index, item) in items.iter().enumerate() {
            let item_schema = prefix.get(index).or(rest);
            if let Some(item_schema) = item_schema {
                let len = self.path.len();
                let _ = write!(self.path, "[{index}]");
                self.check(item_schema, item, depth + 1);
                self.path.truncate(len);
            }
        }
    }

    fn combinators(&mut self, schema: &'a Map<String, Value>, value: &Value, depth: usize) {
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            for part in all {
                self.check(part, value, depth + 1);
            }
        }
        for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            let Some(alternatives) = schema.get(key).and_then(Value::as_array) else { continue };
            let outcomes: Vec<Vec<Violation>> =
                alternatives.iter().map(|alternative| self.sub_check(alternative, value, depth)).collect();
            let matching = outcomes.iter().filter(|errors| errors.is_empty()).count();
            if matching == 0 {
                // When only one alternative is meant for this kind of value,
                // its own errors say best what is wrong.
                let fitting: Vec<usize> =
                    (0..alternatives.len()).filter(|&i| fits(self.root, &alternatives[i], value)).collect();
                match fitting[..] {
                    [only] => self.errors.extend(outcomes.into_iter().nth(only).unwrap_or_default()),
                    _ => self.fail(format!("{value} matches none of the allowed alternatives")),
                }
            } else if exactly_one && matching > 1 {
                self.fail(format!("{value} matches more than one of the alternatives, but must match exactly one"));
            }
        }
        if let Some(not) = schema.get("not")
            && self.sub_check(not, value, depth).is_empty()
        {
            self.fail(format!("{value} is not allowed here"));
        }
    }

    /// The violations of `schema` alone, without recording them.
    fn sub_check(&self, schema: &'a Value, value: &Value, depth: usize) -> Vec<Violation> {
        let mut walker = Walker { root: self.root, errors: Vec::new(), path: self.path.clone() };
        walker.check(schema, value, depth + 1);
        walker.errors
    }

    fn at(&mut self, field: &str, then: impl FnOnce(&mut Self)) {
        let len = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(field);
        then(self);
        self.path.truncate(len);
    }

    fn numeric(&mut self, schema: &Map<String, Value>, n: f64) {
        let limit = |key: &str| schema.get(key).and_then(Value::as_f64);
        if let Some(min) = limit("minimum").filter(|min| n < *min) {
            self.fail(format!("{n} is less than the minimum {min}"));
        }
        if let Some(max) = limit("maximum").filter(|max| n > *max) {
            self.fail(format!("{n} is greater than the maximum {max}"));
        }
        if let Some(min) = limit("exclusiveMinimum").filter(|min| n <= *min) {
            self.fail(format!("{n} must be greater than {min}"));
        }
        if let Some(max) = limit("exclusiveMaximum").filter(|max| n >= *max) {
            self.fail(format!("{n} must be less than {max}"));
        }
        if let Some(step) = limit("multipleOf").filter(|step| *step > 0.0 && (n / *step).fract().abs() > 1e-9) {
            self.fail(format!("{n} is not a multiple of {step}"));
        }
    }

    fn bound(&mut self, schema: &Map<String, Value>, min_key: &str, max_key: &str, size: u64, unit: &str) {
        if let Some(min) = schema.get(min_key).and_then(Value::as_u64).filter(|min| size < *min) {
            self.fail(format!("has {size} {unit}, at least {min} required"));
        }
        if let Some(max) = schema.get(max_key).and_then(Value::as_u64).filter(|max| size > *max) {
            self.fail(format!("has {size} {unit}, at most {max} allowed"));
        }
    }
}

/// JSON equality where `1` and `1.0` are the same number, as JSON schema says.
#[allow(clippy::float_cmp)] // exact equality is what JSON schema asks for
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64().zip(y.as_f64()).is_some_and(|(x, y)| x == y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, x)| y.get(key).is_some_and(|y| json_equal(x, y)))
        }
        _ => a == b,
    }
}

fn type_matches(expected: &Value, value: &Value) -> bool {
    match expected {
        Value::String(name) => is_of_type(name, value),
        Value::Array(names) => names.iter().filter_map(Value::as_str).any(|name| is_of_type(name, value)),
        _ => true,
    }
}

fn is_of_type(name: &str, value: &Value) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

fn describe_type(expected: &Value) -> String {
    match expected {
        Value::String(name) => article(name).to_owned(),
        Value::Array(names) => names.iter().filter_map(Value::as_str).map(article).collect::<Vec<_>>().join(" or "),
        other => other.to_string(),
    }
}

fn article(name: &str) -> &str {
    match name {
        "null" => "null",
        "boolean" => "a boolean",
        "number" => "a number",
        "integer" => "an integer",
        "string" => "a string",
        "array" => "an array",
        "object" => "an object",
        other => other,
    }
}

fn kind_phrase(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() <= 40 => format!("the string {value}", value = Value::from(s.as_str())),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// Whether `schema` is meant for values of `value`'s JSON type.
fn fits(root: &Value, schema: &Value, value: &Value) -> bool {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(target) => resolve(root, target).unwrap_or(schema),
        None => schema,
    };
    match schema.get("type") {
        Some(expected) => type_matches(expected, value),
        None => schema.get("const").is_none_or(|c| json_equal(c, value)),
    }
}

/// A local reference (`#/$defs/Name`); remote ones are not followed.
fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    let pointer = target.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{argument_error, violations};

    fn messages(schema: &serde_json::Value, value: &serde_json::Value) -> Vec<String> {
        violations(schema, value).into_iter().map(|v| format!("{}: {}", v.path, v.message)).collect()
    }

    #[test]
    fn reports_types_required_and_unknown_fields_with_paths() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 2},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "units": {"enum": ["metric", "imperial"]},
                "stops": {"type": "array", "items": {"$ref": "#/$defs/Stop"}}
            },
            "required": ["city", "days"],
            "additionalProperties": false,
            "$defs": {"Stop": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]}}
        });
        let value = json!({"city": "X", "units": "kelvin", "stops": [{"lat": 1.5}, {"lat": "north"}, {}], "extra": 1});
        assert_eq!(
            messages(&schema, &value),
            [
                "days: missing required field",
                "city: has 1 characters, at least 2 required",
                "units: \"kelvin\" is not one of [\"metric\",\"imperial\"]",
                "stops[1].lat: expected a number, got the string \"north\"",
                "stops[2].lat: missing required field",
                "extra: unknown field; the fields are: city, days, units, stops",
            ]
        );
        assert!(violations(&schema, &json!({"city": "Oslo", "days": 3.0})).is_empty());
    }

    #[test]
    fn alternatives_report_the_fitting_branch_or_say_none_matched() {
        let schema = json!({"type": "object", "properties": {
            "note": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]},
            "either": {"oneOf": [{"type": "integer"}, {"type": "number"}]}
        }});
        assert_eq!(messages(&schema, &json!({"note": "long"})), ["note: has 4 characters, at most 2 allowed"]);
        assert_eq!(messages(&schema, &json!({"note": 3})), ["note: 3 matches none of the allowed alternatives"]);
        assert_eq!(
            messages(&schema, &json!({"either": 2})),
            ["either: 2 matches more than one of the alternatives, but must match exactly one"]
        );
        assert!(violations(&schema, &json!({"note": null, "either": 2.5})).is_empty());
    }

    #[test]
    fn one_violation_keeps_its_path_and_several_are_joined() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}});
        let one = argument_error(&violations(&schema, &json!({"a": 1}))).unwrap();
        assert_eq!(one.to_string(), "invalid arguments at `a`: expected a string, got the number 1");
        let two = argument_error(&violations(&schema, &json!({"a": 1, "b": true}))).unwrap();
        assert_eq!(
            two.to_string(),
            "invalid arguments: at `a`: expected a string, got the number 1; \
             at `b`: expected a string, got the boolean true"
        );
        assert!(argument_error(&violations(&schema, &json!({"a": "x"}))).is_none());
    }

    #[test]
    fn false_schemas_tuples_and_unique_items() {
        let schema = json!({"type": "object", "properties": {
            "never": false,
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
            "tags": {"type": "array", "uniqueItems": true}
        }});
        assert_eq!(
            messages(&schema, &json!({"never": 1, "pair": ["a", "b", 3], "tags": [1, 1.0]})),
            [
                "never: no value is allowed here",
                "pair[1]: expected an integer, got the string \"b\"",
                "pair[2]: no value is allowed here",
                "tags: items must be unique",
            ]
        );
    }
}
