//! One typed agent, its output taken three ways: `cargo run --example structured_output`.
//!
//! - the output tool (the default): the model calls `final_output`;
//! - native: the provider holds the final answer to the output type's
//!   schema (OpenAI `response_format`, Responses `text.format`, Anthropic
//!   `output_config.format`, Ollama `format`, Gemini `responseJsonSchema`);
//! - prompted: the schema is in the system prompt and the JSON is read from
//!   the answer.
//!
//! In every mode the model may call the helper tool first, and the output
//! is validated the same way. It runs on a real model when the environment
//! configures one (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or
//! `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`), offline on scripted
//! models otherwise.

use serde_json::json;
use toolloop::AgentBuilder;
use toolloop::agent::OutputMode;
use toolloop::prelude::*;
use toolloop::run::Event;
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

/// The comparison of two cities.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Comparison {
    /// The larger city.
    larger: String,
    /// How sure, from 1 to 5.
    #[schemars(range(min = 1, max = 5))]
    confidence: u8,
}

/// What a model would say in `mode`: look up Berlin, then answer.
fn scripted(mode: OutputMode) -> ScriptedModel {
    let lookup = ModelResponse::from_tool_calls([ToolCall::new("t1", "population", json!({"city": "Berlin"}))]);
    let answer = json!({"larger": "Berlin", "confidence": 5});
    let final_answer = match mode {
        OutputMode::Tool => ModelResponse::from_tool_calls([ToolCall::new("t2", "final_output", answer)]),
        OutputMode::Prompted => ModelResponse::from_text(format!("Berlin it is.\n```json\n{answer}\n```")),
        _ => ModelResponse::from_text(answer.to_string()),
    };
    // Streamed in small pieces, as a real model streams.
    ScriptedModel::from_responses([lookup, final_answer]).with_chunk_size(8)
}

/// The environment's model, or the script for `mode`.
fn model(mode: OutputMode) -> Result<Box<dyn Model>, toolloop::BuildError> {
    toolloop::providers::from_env_or(scripted(mode))
}

fn builder(model: Box<dyn Model>) -> AgentBuilder<toolloop::agent::state::WithModel, Comparison> {
    Agent::builder()
        .model(model)
        .system("You compare cities. Look up what you need with the tools.")
        .tool::<Population>()
        .output::<Comparison>()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let probe = model(OutputMode::Tool)?;
    println!("using {} ({})", probe.name(), probe.provider());
    // Auto takes the native output where the model supports it with tools.
    let auto = builder(probe).auto_output().build()?;
    println!("auto mode picks {:?}\n", auto.output_mode());

    for mode in [OutputMode::Tool, OutputMode::Native, OutputMode::Prompted] {
        let agent = match mode {
            OutputMode::Native => builder(model(mode)?).native_output().build(),
            OutputMode::Prompted => builder(model(mode)?).prompted_output().build(),
            _ => builder(model(mode)?).build(),
        };
        let agent = match agent {
            Ok(agent) => agent,
            // Say, native output on a model that cannot give it.
            Err(error) => {
                println!("{mode:?}: {error}\n");
                continue;
            }
        };
        let mut conversation = Conversation::new();
        conversation.push_user("Which is larger, Paris or Berlin?");
        // Streamed, to watch the output form.
        let mut stream = agent.run_stream(&mut conversation);
        let mut forming = 0;
        while let Some(event) = stream.next().await {
            match event {
                Event::ToolExecutionFinished { call, result, .. } => {
                    println!("{mode:?}: {} -> {}", call.name, result.content);
                }
                Event::OutputDelta { .. } => forming += 1,
                _ => {}
            }
        }
        let done = stream.output().await?;
        let Comparison { larger, confidence } = &done.output;
        println!("{mode:?}: {larger} (confidence {confidence}/5), seen forming in {forming} deltas");
        println!("{mode:?}: {} model calls, {} tokens\n", done.metadata.model_calls, done.metadata.usage.total());
    }
    Ok(())
}
