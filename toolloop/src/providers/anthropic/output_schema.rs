//! An output type's schema as Anthropic's structured outputs take it.
//!
//! Anthropic's rules (structured outputs, JSON Schema limitations): every
//! object has `additionalProperties: false`; numeric bounds (`minimum`,
//! `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`), string
//! lengths (`minLength`, `maxLength`), array sizes other than `minItems` 0
//! or 1, and recursive schemas are not supported. As Anthropic's SDKs do,
//! the unsupported constraints move into the description, where the model
//! still reads them; the agent checks them on the output anyway.

use serde_json::{Map, Value};

/// Keywords Anthropic rejects, moved into the description.
const MOVED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// `schema` in Anthropic's shape, or why it cannot be.
pub(super) fn anthropic_schema(schema: &Value) -> Result<Value, String> {
    let mut schema = schema.clone();
    rewrite(&mut schema)?;
    Ok(schema)
}

fn rewrite(schema: &mut Value) -> Result<(), String> {
    let Value::Object(object) = schema else { return Ok(()) };
    if object.contains_key("$ref") {
        return Err("the output type is recursive, which Anthropic's structured outputs do not support".to_owned());
    }
    move_constraints(object);
    let is_object = object.contains_key("properties")
        || match object.get("type") {
            Some(Value::String(kind)) => kind == "object",
            Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
            _ => false,
        };
    if is_object {
        if matches!(object.get("additionalProperties"), Some(Value::Object(_) | Value::Bool(true)))
            || object.contains_key("patternProperties")
        {
            return Err("the output type holds a map with free keys, which Anthropic's structured outputs cannot \
                        express (every object must have `additionalProperties: false`)"
                .to_owned());
        }
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for property in properties.values_mut() {
            rewrite(property)?;
        }
    }
    for key in ["items", "not", "if", "then", "else", "contains"] {
        if let Some(child) = object.get_mut(key) {
            rewrite(child)?;
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = object.get_mut(key) {
            for child in children {
                rewrite(child)?;
            }
        }
    }
    Ok(())
}

/// Moves the keywords Anthropic rejects into the description.
fn move_constraints(object: &mut Map<String, Value>) {
    let mut moved = Vec::new();
    for keyword in MOVED {
        if let Some(value) = object.remove(*keyword) {
            moved.push(format!("{keyword}: {value}"));
        }
    }
    if object.get("minItems").and_then(Value::as_u64).is_some_and(|min| min > 1)
        && let Some(value) = object.remove("minItems")
    {
        moved.push(format!("minItems: {value}"));
    }
    if moved.is_empty() {
        return;
    }
    let constraints = format!("({})", moved.join(", "));
    let description = match object.get("description").and_then(Value::as_str) {
        Some(description) => format!("{description} {constraints}"),
        None => constraints,
    };
    object.insert("description".to_owned(), Value::String(description));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::anthropic_schema;

    #[test]
    fn objects_are_closed_and_unsupported_bounds_become_words() {
        let schema = json!({
            "type": "object",
            "properties": {
                "score": {"type": "integer", "minimum": 1, "maximum": 5, "description": "The score."},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 9}}}, "minItems": 1},
            },
            "required": ["score"]
        });
        assert_eq!(
            anthropic_schema(&schema).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "score": {"type": "integer", "description": "The score. (minimum: 1, maximum: 5)"},
                    "tags": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string", "description": "(maxLength: 9)"}}, "additionalProperties": false}, "minItems": 1},
                },
                "required": ["score"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn maps_and_recursion_cannot_be_expressed() {
        let map = json!({"type": "object", "properties": {"counts": {"type": "object", "additionalProperties": {"type": "integer"}}}});
        assert!(anthropic_schema(&map).unwrap_err().contains("map with free keys"));
        let recursive = json!({"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}});
        assert!(anthropic_schema(&recursive).unwrap_err().contains("recursive"));
    }
}
