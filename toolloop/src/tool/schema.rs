//! Input schemas in the shapes providers take.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The plain input schema for `T`: an object schema with subschemas inlined,
/// without the `$schema` and `title` noise providers do not need.
pub(crate) fn input_schema_for<T: JsonSchema>() -> Value {
    input_schema_and_description_for::<T>().0
}

/// [`input_schema_for`] and the type's own description (its doc comment),
/// taken out of the schema: a tool's description lives in its definition,
/// and keeping it in the schema too would send it twice.
pub(crate) fn input_schema_and_description_for<T: JsonSchema>() -> (Value, Option<String>) {
    let generator = SchemaSettings::draft2020_12().with(|settings| settings.inline_subschemas = true).into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    let mut description = None;
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
        root.remove("title");
        description = root.remove("description").and_then(|d| d.as_str().map(str::to_owned));
        root.entry("type").or_insert_with(|| Value::from("object"));
        if root.get("type") == Some(&Value::from("object")) {
            root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
        }
    }
    (schema, description)
}

/// `schema` in OpenAI's strict shape: every object has
/// `additionalProperties: false` and lists every property as required; a
/// property that was optional becomes nullable; `oneOf` becomes `anyOf`;
/// keywords strict mode rejects (`default`, unknown formats) are dropped.
/// `None` when strict mode cannot express the schema: a map with free-form
/// keys, or a value of any type.
pub(crate) fn strict(schema: &Value) -> Option<Value> {
    let mut schema = schema.clone();
    make_strict(&mut schema).then_some(schema)
}

/// The string formats OpenAI's strict mode accepts.
const STRICT_FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// Keywords that say what a value is; a schema without any accepts anything.
const TYPE_KEYWORDS: &[&str] = &["type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "items"];

/// Whether the schema's `type` is `"object"` or a list holding it (`["object", "null"]`).
fn is_object_type(object: &Map<String, Value>) -> bool {
    match object.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => false,
    }
}

/// Rewrites `schema` in place; `false` when it cannot be made strict.
fn make_strict(schema: &mut Value) -> bool {
    // `true` accepts anything, which strict mode cannot say.
    let Value::Object(object) = schema else { return false };
    // Nor can a schema with nothing but annotations (`{}`, or a documented
    // `serde_json::Value`, which is `{"description": ...}`).
    if !TYPE_KEYWORDS.iter().any(|keyword| object.contains_key(*keyword)) {
        return false;
    }

    object.remove("default");
    if object.get("format").and_then(Value::as_str).is_some_and(|f| !STRICT_FORMATS.contains(&f)) {
        object.remove("format");
    }
    if let Some(one_of) = object.remove("oneOf") {
        object.insert("anyOf".to_owned(), one_of);
    }

    let mut representable = true;
    if object.get("properties").is_some_and(Value::is_object) {
        let required: Vec<String> = match object.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        };
        let Some(Value::Object(properties)) = object.get_mut("properties") else { unreachable!() };
        for (name, property) in properties.iter_mut() {
            representable &= make_strict(property);
            if !required.contains(name) {
                make_nullable(property);
            }
        }
        let all: Vec<Value> = properties.keys().cloned().map(Value::from).collect();
        object.insert("required".to_owned(), Value::Array(all));
        representable &= !matches!(object.get("additionalProperties"), Some(Value::Object(_) | Value::Bool(true)));
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    } else if is_object_type(object) {
        // An object without properties is either empty (fine) or a map
        // whose keys are free, which strict mode cannot express.
        if matches!(object.get("additionalProperties"), Some(Value::Object(_) | Value::Bool(true)))
            || object.contains_key("patternProperties")
        {
            return false;
        }
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
        object.entry("properties").or_insert_with(|| Value::Object(Map::new()));
        object.insert("required".to_owned(), Value::Array(Vec::new()));
    }

    for key in ["items", "additionalItems", "not", "if", "then", "else", "contains"] {
        if let Some(child) = object.get_mut(key) {
            representable &= make_strict(child);
        }
    }
    for key in ["anyOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = object.get_mut(key) {
            for child in children {
                representable &= make_strict(child);
            }
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(children)) = object.get_mut(key) {
            for child in children.values_mut() {
                representable &= make_strict(child);
            }
        }
    }
    representable
}

/// Lets `schema` also accept `null`.
fn make_nullable(schema: &mut Value) {
    let Value::Object(object) = schema else { return };
    if accepts_null(object) {
        return;
    }
    match object.get_mut("type") {
        Some(Value::String(single)) => {
            let single = std::mem::take(single);
            object.insert("type".to_owned(), Value::from(vec![single, "null".to_owned()]));
            if let Some(Value::Array(values)) = object.get_mut("enum") {
                values.push(Value::Null);
            }
        }
        Some(Value::Array(types)) => types.push(Value::from("null")),
        _ => {
            let inner = std::mem::take(object);
            object.insert(
                "anyOf".to_owned(),
                Value::from(vec![Value::Object(inner), serde_json::json!({"type": "null"})]),
            );
        }
    }
}

fn accepts_null(object: &Map<String, Value>) -> bool {
    match object.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    ["anyOf", "oneOf"].iter().any(|key| {
        object
            .get(*key)
            .and_then(Value::as_array)
            .is_some_and(|alternatives| alternatives.iter().any(|alt| alt.as_object().is_some_and(accepts_null)))
    })
}

/// Removes `null` values of properties that `schema` does not require, so
/// that input produced under the strict shape (where the model must send
/// every property, writing `null` for the ones it leaves out) deserialises
/// like the plain shape would: an absent field takes its default.
///
/// Returns `None` when nothing had to change, so the common case copies
/// nothing.
pub(crate) fn drop_optional_nulls(input: &Value, schema: &Value) -> Option<Value> {
    if !contains_null(input) {
        return None;
    }
    let mut input = input.clone();
    strip(&mut input, schema);
    Some(input)
}

fn contains_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(contains_null),
        Value::Object(fields) => fields.values().any(contains_null),
        _ => false,
    }
}

fn strip(value: &mut Value, schema: &Value) {
    let Some(schema) = schema.as_object() else { return };
    // `Option<Struct>` and enums put the object schema one level down.
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(alternatives) = schema.get(key).and_then(Value::as_array) {
            let fitting = alternatives.iter().find(|alt| match value {
                Value::Object(_) => alt.get("properties").is_some(),
                Value::Array(_) => alt.get("items").is_some(),
                _ => false,
            });
            if let Some(alternative) = fitting {
                strip(value, alternative);
            }
            return;
        }
    }
    match value {
        Value::Object(fields) => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let properties = schema.get("properties").and_then(Value::as_object);
            fields.retain(|name, field| !field.is_null() || required.contains(&name.as_str()));
            if let Some(properties) = properties {
                for (name, field) in fields.iter_mut() {
                    if let Some(property) = properties.get(name) {
                        strip(field, property);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items.iter_mut() {
                    strip(item, item_schema);
                }
            }
        }
        _ => {}
    }
}
