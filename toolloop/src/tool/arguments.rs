//! Turning a model's JSON arguments into a tool's (or an output's) type.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::definition::ToolDefinition;
use super::error::ToolError;
use super::{constraints, schema};

/// Parses a tool's JSON arguments into `T`, then checks the constraints the
/// model was shown (`#[schemars(range, length, regex...)]`), not only the types.
pub fn parse_arguments<T: DeserializeOwned>(input: &Value, definition: &ToolDefinition) -> Result<T, ToolError> {
    parse_arguments_checked(input, definition, true)
}

/// Whether arguments that deserialised against `definition`'s schema can
/// still break a constraint of it: what a derived tool works out once, for
/// [`parse_arguments_checked`].
#[doc(hidden)]
pub fn has_constraints(definition: &ToolDefinition) -> bool {
    constraints::can_fail(&definition.input_schema)
}

/// [`parse_arguments`], walking the schema for its constraints only when
/// `constrained` ([`has_constraints`] of the same definition: a derived
/// tool's schema is its type's, so the answer is the same for every call).
#[doc(hidden)]
pub fn parse_arguments_checked<T: DeserializeOwned>(
    input: &Value,
    definition: &ToolDefinition,
    constrained: bool,
) -> Result<T, ToolError> {
    let input = normalize(input, &definition.input_schema)?;
    let arguments = deserialize(input.as_ref())?;
    if !constrained {
        return Ok(arguments);
    }
    match &constraints::check(&definition.input_schema, input.as_ref())[..] {
        [] => Ok(arguments),
        [one] => {
            Err(ToolError::invalid_arguments((!one.path.is_empty()).then(|| one.path.clone()), one.message.clone()))
        }
        many => {
            let list: Vec<String> = many.iter().map(ToString::to_string).collect();
            Err(ToolError::invalid_arguments(None, list.join("; ")))
        }
    }
}

/// The arguments as the schema reads them: a JSON object, with `null`s for
/// optional fields (which strict mode makes models send) removed.
pub(crate) fn normalize<'v>(input: &'v Value, input_schema: &Value) -> Result<Cow<'v, Value>, ToolError> {
    let input = match input {
        // Providers keep arguments that were not valid JSON as the raw text;
        // some servers also send valid JSON double-encoded as a string.
        Value::String(raw) => Cow::Owned(
            serde_json::from_str::<Value>(raw)
                .map_err(|error| ToolError::invalid_arguments(None, format!("not valid JSON ({error}): {raw}")))?,
        ),
        other => Cow::Borrowed(other),
    };
    if !input.is_object() {
        return Err(ToolError::invalid_arguments(None, format!("expected a JSON object, got {}", json_kind(&input))));
    }
    Ok(match schema::drop_optional_nulls(&input, input_schema) {
        Some(relaxed) => Cow::Owned(relaxed),
        None => input,
    })
}

/// Deserialises normalised arguments, naming the field path of an error.
pub(crate) fn deserialize<T: DeserializeOwned>(input: &Value) -> Result<T, ToolError> {
    // Tracking the path costs a copy of every key on the way: it is
    // tracked only to name where arguments that failed went wrong (the same
    // input fails the same way again).
    if let Ok(arguments) = T::deserialize(input) {
        return Ok(arguments);
    }
    serde_path_to_error::deserialize(input).map_err(|error| {
        let path = error.path().to_string();
        let path = (path != ".").then_some(path);
        ToolError::invalid_arguments(path, error.into_inner().to_string())
    })
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
