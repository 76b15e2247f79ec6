//! A reasoning model in a tool loop: `cargo run --example reasoning`.
//!
//! The agent looks up two cities' populations (in parallel), then answers
//! with a typed output. With `ANTHROPIC_API_KEY` set it runs on Claude with
//! extended thinking on; with `OPENAI_API_KEY` set, on the OpenAI Responses
//! API with reasoning on and summaries asked for; with `GEMINI_API_KEY` set,
//! on Gemini 3 thinking, its thought summaries shown (base URLs from
//! `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` / `GEMINI_BASE_URL`); otherwise offline on a
//! scripted model that reasons the same way. Each call's reasoning (the
//! thinking text or the summary) is printed as it arrives, and the run's
//! reasoning token count at the end.
//!
//! The thinking blocks, encrypted reasoning items and thought signatures stay in the
//! conversation and go back to the provider byte for byte on every call:
//! that is what lets the model keep reasoning across its tool calls.

use serde_json::json;
use toolloop::prelude::*;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::gemini::Gemini;
use toolloop::providers::openai::OpenAiResponses;
use toolloop::reasoning::{Reasoning, ReasoningConfig, ReasoningEffort, ReasoningSummary};
use toolloop::testing::ScriptedModel;

/// Look up the population of a city, in millions.
#[derive(toolloop::Tool)]
struct Population {
    /// The city's name.
    city: String,
}

impl Population {
    #[allow(clippy::unused_async)] // tool handlers are async by contract
    async fn run(self) -> Result<f64, String> {
        match self.city.as_str() {
            "Paris" => Ok(2.1),
            "Berlin" => Ok(3.7),
            "Madrid" => Ok(3.3),
            other => Err(format!("no data for {other}")),
        }
    }
}

/// The answer.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Comparison {
    /// The most populous city compared.
    largest: String,
    /// Its population, in millions.
    population_millions: f64,
}

/// Claude with thinking, the Responses API with reasoning, Gemini 3
/// thinking, or a script.
fn model() -> Result<Box<dyn Model>, toolloop::BuildError> {
    let env = |name| std::env::var(name).ok().filter(|value: &String| !value.is_empty());
    let model: Box<dyn Model> = if env("ANTHROPIC_API_KEY").is_some() {
        // Claude 4.5 and earlier think with a token budget below max_tokens.
        let thinking = ReasoningConfig::new(ReasoningEffort::Medium).with_budget_tokens(2048);
        Box::new(Anthropic::builder_from_env().model("claude-sonnet-4-5").max_tokens(8192).reasoning(thinking).build()?)
    } else if env("OPENAI_API_KEY").is_some() {
        let reasoning = ReasoningConfig::new(ReasoningEffort::Low).with_summary(ReasoningSummary::Auto);
        Box::new(OpenAiResponses::builder_from_env().model("gpt-5-mini").reasoning(reasoning).build()?)
    } else if env("GEMINI_API_KEY").is_some() {
        // Gemini 3 thinks by levels; its thought summaries are shown when asked for.
        let thinking = ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto);
        Box::new(Gemini::builder_from_env().model("gemini-3-flash-preview").reasoning(thinking).build()?)
    } else {
        Box::new(scripted())
    };
    println!("using {} ({})\n", model.name(), model.provider());
    Ok(model)
}

/// What a reasoning model does: think, look both cities up at once, think
/// again, answer.
fn scripted() -> ScriptedModel {
    let thought = |text: &str| ContentBlock::Reasoning(Reasoning::from_text(text));
    let lookup = |id: &str, city: &str| ContentBlock::ToolCall(ToolCall::new(id, "population", json!({"city": city})));
    let usage = |reasoning_tokens| Usage { reasoning_tokens, ..Usage::new(400, 60 + reasoning_tokens) };
    ScriptedModel::from_responses([
        ModelResponse::new(vec![
            thought("Two cities to compare; I can look both up at once."),
            lookup("c1", "Paris"),
            lookup("c2", "Madrid"),
        ])
        .with_usage(usage(48)),
        ModelResponse::new(vec![thought("Madrid 3.3 > Paris 2.1; Berlin is still to check."), lookup("c3", "Berlin")])
            .with_usage(usage(32)),
        ModelResponse::new(vec![
            thought("Berlin 3.7 is the largest."),
            ContentBlock::ToolCall(ToolCall::new(
                "c4",
                "final_output",
                json!({"largest": "Berlin", "population_millions": 3.7}),
            )),
        ])
        .with_usage(usage(16)),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::builder()
        .model(model()?)
        .system("Compare cities with the population tool, then answer by calling `final_output`.")
        .tool::<Population>()
        .output::<Comparison>()
        .on_iteration_finished(|response: &ModelResponse| {
            let reasoning = response.reasoning_text();
            if !reasoning.is_empty() {
                println!("reasoning: {reasoning}");
            }
            for call in response.tool_calls() {
                println!("  calls {}({})", call.name, call.input);
            }
        })
        .build()?;

    let mut conversation = Conversation::new();
    conversation.push_user("Which is the most populous: Paris, Madrid or Berlin?");
    let done = agent.run(&mut conversation).await?;

    println!("\n{} has {} million people", done.output.largest, done.output.population_millions);
    let usage = done.metadata.usage;
    println!(
        "{} model calls, {} output tokens of which {} reasoning",
        done.metadata.model_calls, usage.output_tokens, usage.reasoning_tokens
    );
    let kept = conversation.iter().map(|message| message.reasoning().count()).sum::<usize>();
    println!("{kept} reasoning blocks kept in the conversation");
    Ok(())
}
