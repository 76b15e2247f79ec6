//! An output type's JSON Schema as Gemini's `responseJsonSchema` takes it.
//!
//! The field takes JSON Schema and reads a subset of it (`$id`, `$defs`,
//! `$ref`, `$anchor`, `type`, `format`, `title`, `description`, `enum`,
//! `items`, `prefixItems`, `minItems`, `maxItems`, `minimum`, `maximum`,
//! `anyOf`, `oneOf`, `properties`, `additionalProperties`, `required`,
//! `propertyOrdering`); other keywords are ignored, not rejected, and the
//! agent still checks them on the answer. One rule is stricter than JSON
//! Schema: a subschema with `$ref` may have no keyword beside it but `$`
//! ones, so a reference with a description (as schemars writes a documented
//! field of a struct type) becomes a one-branch `anyOf` holding the
//! reference, the description beside it.

use serde_json::{Map, Value};

/// Keywords whose value is one subschema.
const ONE: &[&str] = &["items", "additionalProperties", "not", "if", "then", "else", "contains"];
/// Keywords whose value is a list of subschemas.
const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &["properties", "$defs", "definitions", "patternProperties"];

/// `schema` with every `$ref` standing alone.
pub(super) fn response_json_schema(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else { return schema.clone() };
    let mut out = Map::with_capacity(object.len());
    for (key, value) in object {
        let converted = if ONE.contains(&key.as_str()) {
            response_json_schema(value)
        } else if LIST.contains(&key.as_str()) {
            value.as_array().map_or_else(|| value.clone(), |list| list.iter().map(response_json_schema).collect())
        } else if MAP.contains(&key.as_str()) {
            value.as_object().map_or_else(
                || value.clone(),
                |map| map.iter().map(|(name, schema)| (name.clone(), response_json_schema(schema))).collect(),
            )
        } else {
            value.clone()
        };
        out.insert(key.clone(), converted);
    }
    if out.contains_key("$ref") && out.keys().any(|key| !key.starts_with('$')) {
        let (reference, beside): (Map<String, Value>, Map<String, Value>) =
            out.into_iter().partition(|(key, _)| key.starts_with('$'));
        let mut wrapped = beside;
        wrapped.insert("anyOf".into(), Value::Array(vec![Value::Object(reference)]));
        return Value::Object(wrapped);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::response_json_schema;

    #[test]
    fn a_reference_with_keywords_beside_it_is_wrapped() {
        let schema = json!({
            "type": "object",
            "properties": {
                "home": {"$ref": "#/$defs/City", "description": "Where they live."},
                "visits": {"type": "array", "items": {"$ref": "#/$defs/City"}}
            },
            "$defs": {"City": {"type": "object", "properties": {"name": {"type": "string"}}}}
        });
        let converted = response_json_schema(&schema);
        assert_eq!(
            converted["properties"]["home"],
            json!({"description": "Where they live.", "anyOf": [{"$ref": "#/$defs/City"}]})
        );
        assert_eq!(converted["properties"]["visits"], schema["properties"]["visits"], "a lone reference stays");
        assert_eq!(converted["$defs"], schema["$defs"]);
    }
}
