//! A typed agent with a helper tool and reflection: `cargo run --example quickstart`.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline on a scripted model otherwise, and says which. It prints each
//! iteration (the tool calls and their results), the validated output and
//! the usage.

use serde_json::json;
use toolloop::prelude::*;
use toolloop::testing::ScriptedModel;

/// Look up the population of a city, in millions.
#[derive(toolloop::Tool)]
struct Population {
    /// The city's name.
    city: String,
}

impl Population {
    #[allow(clippy::unused_async)] // a real lookup would await a database
    async fn run(self) -> Result<f64, String> {
        match self.city.as_str() {
            "Paris" => Ok(2.1),
            "Berlin" => Ok(3.7),
            other => Err(format!("no data for {other}")),
        }
    }
}

/// The report the agent must produce.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    /// A one-line title.
    #[schemars(length(min = 5))]
    title: String,
    /// The largest city compared.
    largest: String,
    /// How confident the agent is, from 1 to 5.
    #[schemars(range(min = 1, max = 5))]
    confidence: u8,
}

/// The environment's model (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, `OLLAMA_HOST`), or a script.
fn model() -> Result<Box<dyn Model>, toolloop::BuildError> {
    let model = toolloop::providers::from_env_or(scripted())?;
    println!("using {} ({})\n", model.name(), model.provider());
    Ok(model)
}

/// A script of what a model would say.
fn scripted() -> ScriptedModel {
    let call = |id: &str, name: &str, input| ToolCall::new(id, name, input);
    ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([
            call("t1", "population", json!({"city": "Paris"})),
            call("t2", "population", json!({"city": "Berlin"})),
        ])
        .with_usage(Usage::new(420, 38)),
        ModelResponse::from_tool_calls([call(
            "t3",
            "final_output",
            json!({"title": "Berlin vs Paris", "largest": "Paris", "confidence": 4}),
        )])
        .with_usage(Usage::new(510, 41)),
        ModelResponse::from_tool_calls([call(
            "t4",
            "final_output",
            json!({"title": "Berlin vs Paris", "largest": "Berlin", "confidence": 5}),
        )])
        .with_usage(Usage::new(580, 40)),
        ModelResponse::from_tool_calls([call("t5", "submit", json!({}))]).with_usage(Usage::new(640, 12)),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::builder()
        .model(model()?)
        .system("You compare cities. Use the tools, then give your report.")
        .tool::<Population>()
        .output::<Report>()
        .reflection(|report| format!("Draft: {report:?}. Check it against the data, then submit."))
        .validator(
            |report| {
                if ["Paris", "Berlin"].contains(&report.largest.as_str()) { Ok(()) } else { Err("unknown city") }
            },
        )
        .on_iteration_finished(|response| {
            let calls: Vec<_> = response.tool_calls().map(|call| format!("{}({})", call.name, call.input)).collect();
            println!("model: {}", if calls.is_empty() { response.text() } else { calls.join(", ") });
        })
        .on_tool_execution_finished(|call, result| {
            let mark = if result.is_error() { "error" } else { "ok" };
            println!("  {} -> [{mark}] {}", call.name, result.content);
        })
        .build()?;

    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let done = agent.run(&mut conversation).await?;

    let report = &done.output;
    println!("\noutput: {} (largest: {}, confidence {}/5)", report.title, report.largest, report.confidence);
    let meta = &done.metadata;
    println!(
        "usage: {} input + {} output tokens over {} iterations, {} tool calls",
        meta.usage.input_tokens, meta.usage.output_tokens, meta.iterations, meta.tool_calls
    );
    Ok(())
}
