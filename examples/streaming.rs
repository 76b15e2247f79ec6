//! Streaming a run: `cargo run --example streaming`.
//!
//! Prints what the run does as it happens: the model's text as it is
//! written, a tool call's arguments forming (each delta completed to a JSON
//! value), the tool running, and the run's result last.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `OLLAMA_HOST`)
//! and offline on a scripted model otherwise (streamed in small chunks).

use std::io::Write as _;

use futures_util::StreamExt as _;
use serde_json::json;
use toolloop::stream::RunEvent;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, Conversation, Model, ModelResponse, ToolCall, Usage};

/// Look up today's weather in a city.
#[derive(toolloop::Tool)]
struct Weather {
    /// The city, e.g. "Paris".
    city: String,
}

impl Weather {
    #[allow(clippy::unused_async)] // a real lookup would call a weather API
    async fn run(self) -> Result<String, String> {
        Ok(format!("{}: 18°C, light rain", self.city))
    }
}

fn offline_model() -> ScriptedModel {
    ScriptedModel::new()
        .with_chunk_size(4)
        .respond(
            ModelResponse::from_tool_calls([ToolCall::new("w1", "weather", json!({"city": "Paris"}))])
                .with_usage(Usage::new(120, 18)),
        )
        .respond(
            ModelResponse::from_text("It is 18°C in Paris with light rain: take an umbrella.")
                .with_usage(Usage::new(160, 15)),
        )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = toolloop::providers::from_env_or(offline_model())?;
    println!("model: {} ({})", model.name(), model.provider());
    let agent = Agent::builder()
        .model(model)
        .system("Answer weather questions with the weather tool. Be brief.")
        .tool::<Weather>()
        .build()?;
    let mut conversation = Conversation::new();
    conversation.push_user("Do I need an umbrella in Paris today?");

    let mut out = std::io::stdout();
    let mut stream = agent.run_stream(&mut conversation);
    while let Some(event) = stream.next().await {
        match event {
            RunEvent::IterationStarted { iteration, .. } => println!("\n— iteration {iteration}"),
            RunEvent::TextDelta { text } => {
                print!("{text}");
                out.flush()?;
            }
            RunEvent::ToolCallStarted { name, id, .. } => println!("\n[tool call {name} ({id})]"),
            RunEvent::ToolCallArgumentsDelta { partial: Some(partial), .. } => {
                println!("  arguments so far: {partial}");
            }
            RunEvent::ModelCallDiscarded { error, .. } => {
                println!("\n[model call failed, output above discarded: {error}]");
            }
            RunEvent::ToolExecutionFinished { call, result } => {
                println!("[{} answered: {}]", call.name, result.content);
            }
            RunEvent::IterationFinished { usage, stop_reason, .. } => {
                println!("\n[{stop_reason:?}; {} in / {} out tokens]", usage.input_tokens, usage.output_tokens);
            }
            RunEvent::Finished(Ok(done)) => {
                println!("\nanswer: {}\n{:?}", done.output, done.metadata.termination);
            }
            RunEvent::Finished(Err(error)) => println!("\nthe run failed: {error}"),
            _ => {}
        }
    }
    Ok(())
}
