//! A tool derived through a renamed `toolloop` dependency.

#![allow(clippy::unused_async)] // tool handlers are async by contract

/// Greet someone by name.
#[derive(tl::Tool)]
#[tool(crate = "tl")]
pub struct Greet {
    /// Who to greet.
    pub name: String,
}

impl Greet {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("Hello, {}!", self.name))
    }
}

#[cfg(test)]
mod tests {
    use tl::{CancellationToken, Tool, ToolCall, ToolSet};

    use super::Greet;

    #[tokio::test]
    async fn derived_tool_works_through_a_renamed_crate() {
        assert_eq!(Greet::definition().name, "greet");
        let mut tools = ToolSet::new();
        tools.add::<Greet>().unwrap();
        let call = ToolCall::new("1", "greet", tl::__private::serde_json::json!({"name": "Ada"}));
        let execution = tools.execute(&call, &CancellationToken::new()).await.unwrap();
        assert_eq!(execution.result.content, "Hello, Ada!");
    }
}
