//! Round trips against the real APIs. They are `#[ignore]`d, so a plain
//! `cargo test` reports them as ignored rather than passed; run one with
//! its provider's usual variable set (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
//! `GEMINI_API_KEY`, `OLLAMA_HOST`):
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo test --test live_providers -- --ignored anthropic
//! ```
//!
//! A live test run without its variable fails, saying which one is missing.
//! `TOOLLOOP_LIVE_ANTHROPIC_MODEL`, `..._OPENAI_MODEL`, `..._GEMINI_MODEL`
//! and `..._OLLAMA_MODEL` choose the model.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::convert::Infallible;

use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::gemini::Gemini;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::OpenAi;
use toolloop::reasoning::ReasoningEffort;
use toolloop::{CancellationToken, Conversation, Message, Model, ModelRequest, Tool, ToolSet};

/// Current weather for a city.
#[derive(Tool)]
struct Weather {
    /// The city.
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("{}: 21°C and sunny", self.city))
    }
}

fn require(variable: &str) {
    assert!(std::env::var(variable).is_ok(), "this live test needs {variable}; set it, or run without --ignored");
}

fn model_name(variable: &str) -> Option<String> {
    std::env::var(variable).ok().filter(|v| !v.is_empty())
}

/// Asks for the weather, runs the tool calls, and expects a text answer that uses the result.
async fn round_trip(model: &dyn Model) {
    let mut tools = ToolSet::new();
    tools.add::<Weather>().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("What is the weather in Paris? Use the weather tool, then answer in one sentence.");
    let cancel = CancellationToken::new();
    for _ in 0..4 {
        let view = conversation.view_for(model.provider());
        let request = ModelRequest::new(&view).with_tools(tools.definitions()).with_max_tokens(512);
        let response = model.complete(request).await.unwrap();
        assert!(response.usage.input_tokens + response.usage.cache_read_tokens > 0);
        conversation.push(response.to_message(model.provider()));
        if !response.has_tool_calls() {
            assert!(response.text().contains("21"), "{}", response.text());
            return;
        }
        let mut results = Vec::new();
        for call in response.tool_calls() {
            results.push(tools.execute(call, &cancel).await.unwrap().result);
        }
        conversation.push(Message::from_tool_results(results));
    }
    panic!("no final answer after 4 model calls: {conversation:#?}");
}

#[tokio::test]
#[ignore = "live: calls the real API; run with --ignored and ANTHROPIC_API_KEY set"]
async fn anthropic_live_round_trip() {
    require("ANTHROPIC_API_KEY");
    let mut builder = Anthropic::builder_from_env();
    if let Some(name) = model_name("TOOLLOOP_LIVE_ANTHROPIC_MODEL") {
        builder = builder.model(name);
    }
    round_trip(&builder.build().unwrap()).await;
}

#[tokio::test]
#[ignore = "live: calls the real API; run with --ignored and OPENAI_API_KEY set"]
async fn openai_live_round_trip() {
    require("OPENAI_API_KEY");
    let mut builder = OpenAi::builder_from_env();
    if let Some(name) = model_name("TOOLLOOP_LIVE_OPENAI_MODEL") {
        builder = builder.model(name);
    }
    round_trip(&builder.build().unwrap()).await;
}

#[tokio::test]
#[ignore = "live: calls the real API; run with --ignored and OLLAMA_HOST set"]
async fn ollama_live_round_trip() {
    require("OLLAMA_HOST");
    let mut builder = Ollama::builder_from_env();
    if let Some(name) = model_name("TOOLLOOP_LIVE_OLLAMA_MODEL") {
        builder = builder.model(name);
    }
    round_trip(&builder.build().unwrap()).await;
}

/// The weather report a typed agent produces.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    /// The city.
    city: String,
    /// The temperature in °C.
    celsius: f64,
}

/// A typed agent in `mode` that must call the weather tool, then give its report.
async fn typed_round_trip(model: impl Model + 'static, mode: toolloop::agent::OutputMode) {
    use toolloop::agent::OutputMode;
    let builder = toolloop::Agent::builder()
        .model(model)
        .system("Use the weather tool before you answer.")
        .tool::<Weather>()
        .max_tokens(1024)
        .output::<Report>();
    let agent = match mode {
        OutputMode::Native => builder.native_output().build(),
        OutputMode::Prompted => builder.prompted_output().build(),
        _ => builder.build(),
    }
    .unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Report the weather in Paris.");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!((done.output.city.as_str(), done.output.celsius), ("Paris", 21.0), "{:?}", done.output);
    assert!(done.metadata.tool_calls >= 1, "the tool was called");
}

#[tokio::test]
#[ignore = "live: calls the real API; run with --ignored and ANTHROPIC_API_KEY set"]
async fn anthropic_live_native_output() {
    require("ANTHROPIC_API_KEY");
    let mut builder = Anthropic::builder_from_env();
    if let Some(name) = model_name("TOOLLOOP_LIVE_ANTHROPIC_MODEL") {
        builder = builder.model(name);
    }
    typed_round_trip(builder.build().unwrap(), toolloop::agent::OutputMode::Native).await;
}

#[tokio::test]
#[ignore = "live: calls the real API; run with --ignored and OPENAI_API_KEY set"]
async fn openai_live_native_output() {
    require("OPENAI_API_KEY");
    let mut builder = OpenAi::builder_from_env();
    if let Some(name) = model_name("TOOLLOOP_LIVE_OPENAI_MODEL") {
        builder = builder.model(name);
    }
    typed_round_trip(builder.build().unwrap(), toolloop::agent::OutputMode::Native).await;
}

#[tokio::test]
#[ignore = "live: calls the real API; run with --ignored and OLLAMA_HOST set"]
async fn ollama_live_prompted_output() {
    require("OLLAMA_HOST");
    let mut builder = Ollama::builder_from_env();
    if let Some(name) = model_name("TOOLLOOP_LIVE_OLLAMA_MODEL") {
        builder = builder.model(name);
    }
    typed_round_trip(builder.build().unwrap(), toolloop::agent::OutputMode::Prompted).await;
}

/// Gemini 3 thinking at a low level, then at the minimal one (which still
/// signs its calls): the loop sends each call's thought signature back, or
/// the second request of a round trip is rejected.
#[tokio::test]
#[ignore = "live: calls the real API; run with --ignored and GEMINI_API_KEY set"]
async fn gemini_live_round_trip() {
    require("GEMINI_API_KEY");
    let mut builder = Gemini::builder_from_env().reasoning(ReasoningEffort::Low);
    if let Some(name) = model_name("TOOLLOOP_LIVE_GEMINI_MODEL") {
        builder = builder.model(name);
    }
    let model = builder.build().unwrap();
    round_trip(&model).await;
    round_trip(&model.with_reasoning(ReasoningEffort::Off)).await;
}

/// Gemini 3 follows a response schema while it calls the weather tool.
#[tokio::test]
#[ignore = "live: calls the real API; run with --ignored and GEMINI_API_KEY set"]
async fn gemini_live_native_output() {
    require("GEMINI_API_KEY");
    let mut builder = Gemini::builder_from_env();
    if let Some(name) = model_name("TOOLLOOP_LIVE_GEMINI_MODEL") {
        builder = builder.model(name);
    }
    typed_round_trip(builder.build().unwrap(), toolloop::agent::OutputMode::Native).await;
}
