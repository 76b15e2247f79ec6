//! A tool's JSON Schema as the `OpenAPI` 3.0 subset Gemini's `parameters`
//! field takes (its `Schema` object), for endpoints that do not take full
//! JSON Schema in `parametersJsonSchema`.
//!
//! What the subset cannot say is rewritten to what it can, so that the
//! model is still told the shape: references to `$defs` / `definitions` are
//! inlined (a recursive one becomes a plain object past a few levels), a
//! type list with `null` becomes `nullable`, other type lists and `oneOf`
//! become `anyOf`, `const` a one-value `enum`, a single `allOf` is merged;
//! types are upper case (`STRING`, `OBJECT`); keywords the subset lacks
//! (`additionalProperties`, `$schema`, `examples`, ...) and formats it does
//! not know are left out.

use serde_json::{Map, Value, json};

/// How deep references are inlined before a recursive schema is cut off.
const MAX_DEPTH: usize = 8;

/// Keywords copied as they are.
const KEPT: &[&str] = &[
    "description",
    "title",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
    "nullable",
];

/// `schema` (a tool's input schema, the root of its own `$defs`) in the subset.
pub(super) fn openapi_schema(schema: &Value) -> Value {
    convert(schema, schema, 0)
}

fn convert(schema: &Value, root: &Value, depth: usize) -> Value {
    let Some(object) = schema.as_object() else {
        // `true` (anything) and other shorthands: no constraint the subset can say.
        return json!({});
    };
    if let Some(target) = object.get("$ref").and_then(Value::as_str) {
        return match resolve(root, target) {
            Some(referenced) if depth < MAX_DEPTH => {
                let mut inlined = convert(referenced, root, depth + 1);
                // Keywords beside the reference (a description) win.
                let beside: Map<String, Value> =
                    object.iter().filter(|(k, _)| *k != "$ref").map(|(k, v)| (k.clone(), v.clone())).collect();
                if let (Some(inlined), Value::Object(beside)) =
                    (inlined.as_object_mut(), convert(&Value::Object(beside), root, depth))
                {
                    inlined.extend(beside);
                }
                inlined
            }
            _ => json!({"type": "OBJECT"}),
        };
    }
    let mut out = Map::new();
    for key in KEPT {
        if let Some(value) = object.get(*key) {
            out.insert((*key).to_owned(), value.clone());
        }
    }
    convert_type(object, root, depth, &mut out);
    if let Some(format) = object.get("format").and_then(Value::as_str)
        && matches!(format, "enum" | "date-time" | "int32" | "int64" | "float" | "double")
    {
        out.insert("format".into(), json!(format));
    }
    let values = object
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .or_else(|| object.get("const").map(|one| vec![one.clone()]));
    if let Some(values) = values {
        let strings: Vec<Value> = values.iter().filter(|v| v.is_string()).cloned().collect();
        // The subset's enums are of strings; another type keeps its type, not its values.
        if object.get("type").is_none_or(|kind| kind == "string") && !strings.is_empty() {
            out.insert("enum".into(), Value::Array(strings));
            out.insert("type".into(), json!("STRING"));
        } else if object.get("type").is_none() && !values.is_empty() && values.iter().all(Value::is_number) {
            let integers = values.iter().all(|value| value.is_i64() || value.is_u64());
            out.insert("type".into(), json!(if integers { "INTEGER" } else { "NUMBER" }));
        }
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        let converted: Map<String, Value> =
            properties.iter().map(|(name, schema)| (name.clone(), convert(schema, root, depth))).collect();
        // The API refuses `properties: {}` ("should be non-empty for OBJECT type").
        if !converted.is_empty() {
            out.insert("properties".into(), Value::Object(converted));
        }
        out.entry("type").or_insert(json!("OBJECT"));
    }
    if let Some(required) = object.get("required") {
        out.insert("required".into(), required.clone());
    }
    if let Some(items) = object.get("items") {
        out.insert("items".into(), convert(items, root, depth));
        out.entry("type").or_insert(json!("ARRAY"));
    }
    let any_of = object.get("anyOf").or_else(|| object.get("oneOf")).and_then(Value::as_array);
    if let Some(any_of) = any_of {
        let (nulls, others): (Vec<&Value>, Vec<&Value>) =
            any_of.iter().partition(|schema| schema.get("type") == Some(&json!("null")));
        if !nulls.is_empty() {
            out.insert("nullable".into(), Value::Bool(true));
        }
        match others.as_slice() {
            [] => {}
            [one] => merge(&mut out, convert(one, root, depth)),
            many => {
                out.insert("anyOf".into(), many.iter().map(|schema| convert(schema, root, depth)).collect());
            }
        }
    }
    if let Some(all_of) = object.get("allOf").and_then(Value::as_array) {
        for schema in all_of {
            merge(&mut out, convert(schema, root, depth));
        }
    }
    Value::Object(out)
}

/// The `type` keyword: upper case; a list with `null` as `nullable`, other
/// lists as `anyOf`.
fn convert_type(object: &Map<String, Value>, root: &Value, depth: usize, out: &mut Map<String, Value>) {
    match object.get("type") {
        Some(Value::String(kind)) => {
            out.insert("type".into(), upper(kind));
        }
        Some(Value::Array(kinds)) => {
            let (nulls, others): (Vec<&Value>, Vec<&Value>) = kinds.iter().partition(|kind| *kind == "null");
            if !nulls.is_empty() {
                out.insert("nullable".into(), Value::Bool(true));
            }
            match others.as_slice() {
                [one] => {
                    out.insert("type".into(), upper(one.as_str().unwrap_or("string")));
                }
                many => {
                    let mut one_of_each = Vec::new();
                    for kind in many {
                        let mut alone = object.clone();
                        alone.insert("type".into(), (*kind).clone());
                        one_of_each.push(convert(&Value::Object(alone), root, depth));
                    }
                    if !one_of_each.is_empty() {
                        out.insert("anyOf".into(), Value::Array(one_of_each));
                    }
                }
            }
        }
        _ => {}
    }
}

/// Adds `from`'s keywords to `into`, keeping those `into` has (its own
/// description wins) and joining their properties and required lists.
fn merge(into: &mut Map<String, Value>, from: Value) {
    let Value::Object(from) = from else { return };
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Value::Object(mine)), Value::Object(theirs)) if key == "properties" => mine.extend(theirs),
            (Some(Value::Array(mine)), Value::Array(theirs)) if key == "required" => mine.extend(theirs),
            (Some(_), _) => {}
            (None, value) => {
                into.insert(key, value);
            }
        }
    }
}

/// The schema `#/$defs/Name` (or `#/definitions/Name`) points at in `root`.
fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    let path = target.strip_prefix('#')?;
    root.pointer(path)
}

fn upper(kind: &str) -> Value {
    Value::String(kind.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::openapi_schema;

    #[test]
    fn references_nullables_and_constants_become_the_subset() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "when": {"type": ["string", "null"], "format": "date-time"},
                "unit": {"$ref": "#/$defs/Unit", "description": "The unit."},
                "tags": {"type": "array", "items": {"type": "string", "format": "hostname"}, "maxItems": 3},
                "mode": {"const": "fast"},
                "address": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
                "id": {"type": ["integer", "string"]}
            },
            "required": ["city"],
            "$defs": {
                "Unit": {"type": "string", "enum": ["metric", "imperial"]},
                "Address": {"type": "object", "properties": {"street": {"type": "string"}}, "required": ["street"]}
            }
        });
        assert_eq!(
            openapi_schema(&schema),
            json!({
                "type": "OBJECT",
                "properties": {
                    "city": {"description": "The city.", "type": "STRING"},
                    "when": {"nullable": true, "type": "STRING", "format": "date-time"},
                    "unit": {"type": "STRING", "enum": ["metric", "imperial"], "description": "The unit."},
                    "tags": {"maxItems": 3, "type": "ARRAY", "items": {"type": "STRING"}},
                    "mode": {"enum": ["fast"], "type": "STRING"},
                    "address": {"nullable": true, "type": "OBJECT", "properties": {"street": {"type": "STRING"}}, "required": ["street"]},
                    "id": {"anyOf": [{"type": "INTEGER"}, {"type": "STRING"}]}
                },
                "required": ["city"]
            })
        );
    }

    /// What the API refuses is never written: `properties: {}`, an empty
    /// `anyOf`, an `enum` of no strings.
    #[test]
    fn nothing_the_api_refuses_is_written() {
        assert_eq!(openapi_schema(&json!({"type": "object", "properties": {}})), json!({"type": "OBJECT"}));
        assert_eq!(openapi_schema(&json!({"anyOf": [{"type": "null"}]})), json!({"nullable": true}));
        assert_eq!(openapi_schema(&json!({"enum": [1, 2]})), json!({"type": "INTEGER"}));
        assert_eq!(openapi_schema(&json!({"enum": [1.5, 2]})), json!({"type": "NUMBER"}));
        assert_eq!(openapi_schema(&json!({"enum": ["a", 1]})), json!({"type": "STRING", "enum": ["a"]}));
        assert_eq!(openapi_schema(&json!({"type": "integer", "enum": [1, 2]})), json!({"type": "INTEGER"}));
    }

    #[test]
    fn a_recursive_reference_is_cut_off() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
        });
        let converted = openapi_schema(&schema).to_string();
        assert!(converted.matches("children").count() <= super::MAX_DEPTH + 1, "{converted}");
        assert!(!converted.contains("$ref"));
    }
}
