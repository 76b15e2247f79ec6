//! Checks a tool call's arguments against an MCP server's input schema
//! before the call is sent, so that the model gets the same kind of
//! argument error (with a field path) as for a derived tool, and a server
//! never sees input its own schema rejects.
//!
//! The walk is the tool layer's schema walker over the whole schema (see
//! `tool::constraints`): types, `properties`, `required`,
//! `additionalProperties`, tuples, `enum`, `const`, the combinators, local
//! `$ref`s, ranges, lengths, sizes and patterns. Unknown keywords and
//! `format` are not checked: the server still is the judge of those.

use crate::tool::ToolError;
pub(crate) use crate::tool::constraints::{Violation, validate as violations};

/// The violations as one argument error that lists them all (a model fixes
/// every field in one go that way); a single one keeps its path.
pub(crate) fn argument_error(violations: &[Violation]) -> Option<ToolError> {
    match violations {
        [] => None,
        [only] => Some(ToolError::invalid_arguments(non_empty(&only.path), only.message.clone())),
        _ => {
            let messages: Vec<String> = violations.iter().map(ToString::to_string).collect();
            Some(ToolError::invalid_arguments(None, messages.join("; ")))
        }
    }
}

fn non_empty(path: &str) -> Option<String> {
    (!path.is_empty()).then(|| path.to_owned())
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
