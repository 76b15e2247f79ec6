//! One tool of an MCP server as a [`DynTool`].

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, ErrorCode, JsonObject, Tool as McpToolInfo};
use serde_json::Value;

use super::connection::ServerLink;
use super::{content, validate};
use crate::model::BoxFuture;
use crate::tool::{DynTool, ToolDefinition, ToolError, ToolOutput, schema};

/// A tool that runs on an MCP server, under a local name.
pub(crate) struct RemoteTool {
    link: Arc<ServerLink>,
    /// The server's name for the tool (the model sees `definition.name`).
    remote_name: String,
    /// The input schema as listed when the tool was built.
    listed_schema: Arc<JsonObject>,
    definition: ToolDefinition,
}

impl RemoteTool {
    pub(crate) fn new(
        link: Arc<ServerLink>,
        info: &McpToolInfo,
        local_name: String,
        timeout: Option<Duration>,
    ) -> Self {
        let description = info.description.as_deref().or(info.title.as_deref()).unwrap_or_default().to_owned();
        let mut definition = ToolDefinition::from_schema(local_name, description, input_schema(&info.input_schema));
        definition.timeout = timeout;
        Self { link, remote_name: info.name.to_string(), listed_schema: Arc::clone(&info.input_schema), definition }
    }

    async fn run(&self, input: &Value) -> Result<ToolOutput, ToolError> {
        let arguments = self.arguments(input)?;
        let server = self.link.name();
        // The server may have changed the tool since the model was told
        // about it: check against what the server accepts now.
        let Some(current) = self.link.listed_schema(&self.remote_name) else {
            return Err(ToolError::Failed(format!(
                "tool `{}` is no longer offered by MCP server `{server}`",
                self.definition.name
            )));
        };
        let changed = !Arc::ptr_eq(&current, &self.listed_schema) && current != self.listed_schema;
        // A copy per call is noise next to the round trip to the server.
        let checked = Value::Object(arguments.clone());
        let violations = if changed {
            validate::violations(&input_schema(&current), &checked)
        } else {
            validate::violations(&self.definition.input_schema, &checked)
        };
        if let Some(error) = validate::argument_error(&violations) {
            return Err(error);
        }
        let connection = self.link.connection_for_call().await.map_err(|error| ToolError::Failed(error.to_string()))?;
        // Dropping this future (timeout, cancellation) makes rmcp send
        // `notifications/cancelled` for the request.
        let request = CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
        match connection.peer.call_tool(request).await {
            Ok(result) => content::tool_outcome(result),
            Err(ServiceError::McpError(error)) if error.code == ErrorCode::INVALID_PARAMS => Err(
                ToolError::invalid_arguments(None, format!("MCP server `{server}` rejected them: {}", error.message)),
            ),
            Err(ServiceError::McpError(error)) => {
                Err(ToolError::Failed(format!("MCP server `{server}` failed the call: {}", error.message)))
            }
            Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => {
                connection.mark_lost();
                Err(ToolError::Failed(format!(
                    "MCP server `{server}` closed the connection before answering (it may have exited)"
                )))
            }
            Err(other) => Err(ToolError::Failed(format!("MCP server `{server}` did not complete the call: {other}"))),
        }
    }

    /// The model's arguments as the JSON object MCP sends.
    fn arguments(&self, input: &Value) -> Result<JsonObject, ToolError> {
        let reparsed;
        let input = match input {
            // Providers keep arguments that were not valid JSON as the raw
            // text; some send valid JSON double-encoded as a string.
            Value::String(raw) => {
                reparsed = serde_json::from_str::<Value>(raw)
                    .map_err(|error| ToolError::invalid_arguments(None, format!("not valid JSON ({error}): {raw}")))?;
                &reparsed
            }
            other => other,
        };
        // In strict mode the model writes `null` for optional fields it
        // leaves out; the server expects them absent.
        let relaxed = schema::drop_optional_nulls(input, &self.definition.input_schema);
        match relaxed.unwrap_or_else(|| input.clone()) {
            Value::Object(arguments) => Ok(arguments),
            Value::Null => Ok(JsonObject::new()),
            other => Err(ToolError::invalid_arguments(None, format!("expected a JSON object, got {other}"))),
        }
    }
}

impl DynTool for RemoteTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(input))
    }
}

/// A server's input schema in the shape derived tools have: an object
/// schema with `properties`, without the `$schema` marker providers do not
/// need.
pub(crate) fn input_schema(schema: &JsonObject) -> Value {
    let mut schema = schema.clone();
    schema.remove("$schema");
    schema.entry("type").or_insert_with(|| Value::from("object"));
    if schema.get("type") == Some(&Value::from("object")) {
        schema.entry("properties").or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    Value::Object(schema)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::input_schema;

    #[test]
    fn schemas_get_the_shape_of_derived_tools() {
        let bare = json!({"$schema": "https://json-schema.org/draft/2020-12/schema"});
        assert_eq!(input_schema(bare.as_object().unwrap()), json!({"type": "object", "properties": {}}));
        let full = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert_eq!(input_schema(full.as_object().unwrap()), full);
    }
}
