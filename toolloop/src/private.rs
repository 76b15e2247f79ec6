//! Support for the code `#[derive(Tool)]` generates. Not public API.

pub use schemars;
pub use serde;
pub use serde_json;

use std::fmt::Display;

use serde::Serialize;

pub use crate::tool::arguments::parse_arguments;
use crate::tool::{ToolDefinition, ToolError, ToolOutput};

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
