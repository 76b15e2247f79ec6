//! What `build()` rejects because types cannot: a tool you add that takes
//! the name of a tool the agent adds itself (the output tool, `submit`), an
//! empty output-tool description, an output type whose schema is not an
//! object. Each error says why and what to change.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

mod common;

use common::*;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, BuildError, Tool};

/// Hands in a form.
#[derive(Tool)]
#[tool(name = "final_output")]
struct FinalOutput {
    /// The form.
    form: String,
}

impl FinalOutput {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.form)
    }
}

#[test]
fn a_tool_named_like_the_output_tool_is_rejected_saying_what_to_rename() {
    let error =
        Agent::builder().model(ScriptedModel::new()).tool::<FinalOutput>().output::<Report>().build().unwrap_err();
    assert_eq!(error, BuildError::OutputToolNameTaken("final_output".into()));
    let message = error.to_string();
    assert!(message.contains("has the name of this agent's output tool"), "{message}");
    assert!(message.contains("#[tool(name = \"...\")]") && message.contains(".output_tool_name(\"...\")"), "{message}");

    // Either fix builds: renaming the output tool, or a text agent (no output tool).
    let renamed = Agent::builder()
        .model(ScriptedModel::new())
        .tool::<FinalOutput>()
        .output::<Report>()
        .output_tool_name("report");
    assert!(renamed.build().is_ok());
    assert!(Agent::builder().model(ScriptedModel::new()).tool::<FinalOutput>().build().is_ok());
}

#[test]
fn an_output_tool_named_submit_on_a_reflection_agent_is_rejected_saying_why() {
    let error = Agent::builder()
        .model(ScriptedModel::new())
        .output::<Report>()
        .output_tool_name("submit")
        .reflection(|report: &Report| report.title.clone())
        .build()
        .unwrap_err();
    assert_eq!(error, BuildError::SubmitNameTaken { output_tool: true });
    let message = error.to_string();
    assert!(
        message.contains("adds a `submit` tool of its own") && message.contains(".output_tool_name(..)"),
        "{message}"
    );
    // Without reflection there is no `submit` tool, so the name is free.
    assert!(Agent::builder().model(ScriptedModel::new()).output::<Report>().output_tool_name("submit").build().is_ok());
}

#[test]
fn an_empty_output_tool_description_is_rejected() {
    for description in ["", "  \n"] {
        let error = Agent::builder()
            .model(ScriptedModel::new())
            .output::<Report>()
            .output_tool_description(description)
            .build()
            .unwrap_err();
        assert_eq!(error, BuildError::EmptyOutputToolDescription);
        assert!(error.to_string().contains("leave `.output_tool_description(..)` out"), "{error}");
    }
    let described =
        Agent::builder().model(ScriptedModel::new()).output::<Report>().output_tool_description("The report.");
    assert!(described.build().is_ok());
}

#[test]
fn an_output_type_whose_schema_is_not_an_object_is_rejected_saying_to_wrap_it() {
    let error = Agent::builder().model(ScriptedModel::new()).output::<String>().build().unwrap_err();
    assert_eq!(error, BuildError::OutputNotAnObject("string".into()), "schemars' name for `String`");
    assert!(error.to_string().contains("wrap it in a struct"), "{error}");
    let error = Agent::builder().model(ScriptedModel::new()).output::<Vec<Report>>().build().unwrap_err();
    assert!(matches!(error, BuildError::OutputNotAnObject(ref name) if name.contains("Report")), "{error:?}");
}

/// A tool defined at run time, with the input schema it is given.
struct Hand(toolloop::tool::ToolDefinition);

impl toolloop::tool::DynTool for Hand {
    fn definition(&self) -> &toolloop::tool::ToolDefinition {
        &self.0
    }

    fn call<'a>(
        &'a self,
        _: &'a serde_json::Value,
    ) -> toolloop::model::BoxFuture<'a, Result<toolloop::ToolOutput, toolloop::ToolError>> {
        Box::pin(async { Ok(toolloop::ToolOutput::from("done")) })
    }
}

#[test]
fn a_run_time_tool_whose_input_is_not_an_object_is_rejected_naming_it() {
    // An MCP server or hand-written tool with a string schema: providers
    // reject it at the first request, so `build()` rejects it first.
    for schema in [serde_json::json!({"type": "string"}), serde_json::json!({})] {
        let tool = Hand(toolloop::tool::ToolDefinition::from_schema("lookup", "Look something up.", schema.clone()));
        let error =
            Agent::builder().model(ScriptedModel::new()).tool_dyn(std::sync::Arc::new(tool)).build().unwrap_err();
        assert_eq!(error, BuildError::ToolInputNotAnObject { tool: "lookup".into(), schema: schema.to_string() });
        let message = error.to_string();
        assert!(message.contains("tool `lookup`") && message.contains("must be a JSON object"), "{message}");
    }

    let object = serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}});
    let tool = Hand(toolloop::tool::ToolDefinition::from_schema("lookup", "Look something up.", object));
    let agent = Agent::builder().model(ScriptedModel::new()).tool_dyn(std::sync::Arc::new(tool)).output::<Report>();
    assert!(agent.build().is_ok());
}
