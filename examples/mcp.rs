//! Tools over the Model Context Protocol, both ways:
//! `cargo run --features mcp --example mcp`.
//!
//! - `cargo run --features mcp --example mcp -- serve` serves this file's
//!   tools as an MCP server over stdio: point an MCP host (Claude Desktop,
//!   an IDE, another agent) at that command.
//! - Without `serve`, it starts that server as a child process, connects to
//!   it with `McpClient`, and runs an agent whose tools are the server's
//!   (prefixed `travel_`) beside a local derived tool.
//!
//! The agent runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline on a scripted model otherwise, and says which.

use std::convert::Infallible;

use serde_json::json;
use toolloop::FailureKind;
use toolloop::mcp::{McpClient, McpServer, McpTransport, ToolSelection};
use toolloop::prelude::*;
use toolloop::testing::ScriptedModel;

/// The capital city of a country.
#[derive(toolloop::Tool)]
struct CapitalOf {
    /// The country, in English.
    country: String,
}

impl CapitalOf {
    #[allow(clippy::unused_async)] // a real lookup would await a database
    async fn run(self) -> Result<&'static str, String> {
        match self.country.as_str() {
            "Japan" => Ok("Tokyo"),
            "Kenya" => Ok("Nairobi"),
            "Peru" => Ok("Lima"),
            other => Err(format!("I do not know the capital of {other}")),
        }
    }
}

/// Convert a temperature from Celsius to Fahrenheit.
#[derive(toolloop::Tool)]
struct CelsiusToFahrenheit {
    /// Degrees Celsius.
    celsius: f64,
}

impl CelsiusToFahrenheit {
    #[allow(clippy::unused_async)]
    async fn run(self) -> Result<f64, Infallible> {
        Ok(self.celsius * 9.0 / 5.0 + 32.0)
    }
}

/// What the weather is like in a city today (a local tool, not served).
#[derive(toolloop::Tool)]
struct Weather {
    /// The city.
    city: String,
}

impl Weather {
    #[allow(clippy::unused_async)] // a real forecast would await an API
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("{}: sunny, 24 °C", self.city))
    }
}

/// The tools this example serves over MCP.
fn served_tools() -> ToolSet {
    let mut tools = ToolSet::new();
    tools.add::<CapitalOf>().expect("unique names");
    tools.add::<CelsiusToFahrenheit>().expect("unique names");
    tools
}

/// What the offline model does: look up the capital, its weather, convert, answer.
fn scripted() -> ScriptedModel {
    ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([ToolCall::new("m1", "travel_capital_of", json!({"country": "Japan"}))])
            .with_usage(Usage::new(420, 25)),
        ModelResponse::from_tool_calls([ToolCall::new("m2", "weather", json!({"city": "Tokyo"}))])
            .with_usage(Usage::new(470, 20)),
        ModelResponse::from_tool_calls([ToolCall::new("m3", "travel_celsius_to_fahrenheit", json!({"celsius": 24}))])
            .with_usage(Usage::new(510, 25)),
        ModelResponse::from_text("Japan's capital is Tokyo, where it is sunny and 24 °C (75.2 °F) today.")
            .with_usage(Usage::new(560, 30)),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        // stdout carries the protocol: say nothing there.
        McpServer::new(served_tools()).name("toolloop-example", env!("CARGO_PKG_VERSION")).serve_stdio().await?;
        return Ok(());
    }

    // This very program, in `serve` mode, is the MCP server.
    let server = McpTransport::child_process(std::env::current_exe()?).arg("serve");
    let client = McpClient::connect(server).await?;
    let info = client.server_info().map(|info| format!("{} {}", info.name, info.version)).unwrap_or_default();
    println!("connected to MCP server `{}` ({info})", client.name());

    let model: Box<dyn Model> = toolloop::providers::from_env_or(scripted())?;
    println!("using {} ({})\n", model.name(), model.provider());

    let mut builder = Agent::builder()
        .model(model)
        .system("You help travellers. Use the tools; answer in one sentence.")
        .tool::<Weather>()
        .on_tool_execution_finished(|call, result| {
            let kind = result.failure.map_or("ok", FailureKind::as_str);
            println!("  {}({}) -> [{kind}] {}", call.name, call.input, result.content);
        });
    for tool in client.tools(&ToolSelection::all().prefix("travel_"))? {
        builder = builder.tool_dyn(tool);
    }
    let agent = builder.build()?;

    let mut conversation = Conversation::new();
    conversation.push_user("What is the capital of Japan, and how warm is it there today in Fahrenheit?");
    let done = agent.run(&mut conversation).await?;
    println!("\n{}", done.output);
    let meta = &done.metadata;
    println!(
        "usage: {} input + {} output tokens over {} iterations, {} tool calls",
        meta.usage.input_tokens, meta.usage.output_tokens, meta.iterations, meta.tool_calls
    );

    client.close().await;
    Ok(())
}
