//! Support for the code `#[derive(Tool)]` generates. Not public API.

pub use schemars;
pub use serde;
pub use serde_json;

use std::fmt::Display;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::tool::{ArgumentError, ToolDefinition, ToolError, ToolOutput, schema};

/// Parses a tool's JSON arguments into its generated argument type.
pub fn parse_arguments<T: DeserializeOwned>(input: &Value, definition: &ToolDefinition) -> Result<T, ArgumentError> {
    let reparsed;
    let input = match input {
        // Providers keep arguments that were not valid JSON as the raw text;
        // some servers also send valid JSON double-encoded as a string.
        Value::String(raw) => {
            reparsed = serde_json::from_str::<Value>(raw)
                .map_err(|error| ArgumentError::new(None, format!("not valid JSON ({error}): {raw}")))?;
            &reparsed
        }
        other => other,
    };
    if !input.is_object() {
        return Err(ArgumentError::new(None, format!("expected a JSON object, got {}", json_kind(input))));
    }
    let relaxed = schema::drop_optional_nulls(input, &definition.input_schema);
    let input = relaxed.as_ref().unwrap_or(input);
    serde_path_to_error::deserialize(input).map_err(|error| {
        let path = error.path().to_string();
        let path = (path != ".").then_some(path);
        ArgumentError::new(path, error.into_inner().to_string())
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

/// Builds a derived tool's definition, once per type.
pub fn definition<T: schemars::JsonSchema>(
    name: &'static str,
    description: &'static str,
    timeout_millis: Option<u64>,
) -> ToolDefinition {
    let definition = ToolDefinition::for_input::<T>(name, description.trim());
    match timeout_millis {
        Some(millis) => definition.with_timeout(std::time::Duration::from_millis(millis)),
        None => definition,
    }
}

/// What a tool's `run` may return.
#[diagnostic::on_unimplemented(
    message = "a tool's `run` must return `Result<T, E>` with `T: Serialize` and `E: Display`, not `{Self}`",
    label = "this tool's `run` returns `{Self}`",
    note = "wrap the value: `Ok(value)`; use `std::convert::Infallible` as `E` when the tool cannot fail"
)]
pub trait IntoToolResult {
    /// Converts the handler's return value.
    fn into_tool_result(self) -> Result<ToolOutput, ToolError>;
}

impl<T: Serialize, E: Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        let output = self.map_err(ToolError::failed)?;
        ToolOutput::from_serialize(&output)
            .map_err(|error| ToolError::failed(format!("the tool's output could not be serialised: {error}")))
    }
}
