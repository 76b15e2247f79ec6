//! Saving a conversation, resuming it later, and switching provider
//! mid-conversation: `cargo run --example resume_and_switch`.
//!
//! 1. A first run, then the conversation is saved to a JSON file and
//!    dropped.
//! 2. A later run loads the file and carries on where the first one ended.
//! 3. The same conversation continues on a model of another provider. Tool
//!    calls are tied to the provider that made them (ids, argument
//!    encodings), so the request for the new provider is a view of the
//!    history in which the first provider's tool calls and results are
//!    text ([`Conversation::view_for`]). The raw history is never rewritten.
//!
//! The first provider is the environment's when one is configured
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and a scripted model playing provider "alpha" otherwise. The second is a
//! scripted model playing provider "beta", which records its requests, so
//! the example can show exactly what that provider was sent.

use std::convert::Infallible;

use serde_json::json;
use toolloop::prelude::*;
use toolloop::testing::ScriptedModel;

/// Today's weather in a city.
#[derive(toolloop::Tool)]
struct Weather {
    /// The city, e.g. "Paris".
    city: String,
}

impl Weather {
    #[allow(clippy::unused_async)] // a real lookup would call a weather service
    async fn run(self) -> Result<String, Infallible> {
        Ok(match self.city.as_str() {
            "Paris" => "sunny, 21 °C".to_owned(),
            "Oslo" => "rain, 9 °C".to_owned(),
            other => format!("no station in {other}"),
        })
    }
}

/// The first model: the environment's, or a script playing provider "alpha".
fn first_model() -> Result<Box<dyn Model>, toolloop::BuildError> {
    if let Some(model) = toolloop::providers::from_env()? {
        println!("first model: {} ({})\n", model.name(), model.provider());
        return Ok(model);
    }
    println!("first model: scripted, playing provider \"alpha\" (set ANTHROPIC_API_KEY, ... for a real one)\n");
    let call =
        |id: &str, city: &str| ModelResponse::from_tool_calls([ToolCall::new(id, "weather", json!({"city": city}))]);
    Ok(Box::new(
        ScriptedModel::from_responses([
            call("alpha_1", "Paris").with_usage(Usage::new(300, 20)),
            ModelResponse::from_text("Sunny in Paris, 21 °C.").with_usage(Usage::new(360, 12)),
            call("alpha_2", "Oslo").with_usage(Usage::new(400, 20)),
            ModelResponse::from_text("Rain in Oslo, 9 °C.").with_usage(Usage::new(450, 12)),
        ])
        .with_provider("alpha"),
    ))
}

/// One line per message: its role, who produced it, and its blocks.
fn print_messages(messages: &[Message]) {
    for message in messages {
        let blocks: Vec<String> = message
            .content
            .iter()
            .map(|block| match block {
                ContentBlock::Text { text } => format!("text {text:?}"),
                ContentBlock::ToolCall(call) => format!("tool_call {} {}({})", call.id, call.name, call.input),
                ContentBlock::ToolResult(result) => format!("tool_result {} {:?}", result.call_id, result.content),
                other => format!("{other:?}"),
            })
            .collect();
        let by = message.provider.as_deref().map(|p| format!(" by {p}")).unwrap_or_default();
        println!("    {:?}{by}: {}", message.role, blocks.join(" | "));
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::builder()
        .model(first_model()?)
        .system("You answer weather questions with the weather tool. One sentence.")
        .tool::<Weather>()
        .build()?;
    let path = std::env::temp_dir().join(format!("toolloop-conversation-{}.json", std::process::id()));

    println!("1. first run, then save");
    let mut conversation = Conversation::new();
    conversation.push_user("What's the weather in Paris?");
    println!("  answer: {}", agent.run(&mut conversation).await?.output);
    std::fs::write(&path, serde_json::to_string_pretty(&conversation)?)?;
    println!(
        "  saved {} messages to {} ({} bytes)\n",
        conversation.len(),
        path.display(),
        std::fs::metadata(&path)?.len()
    );
    drop(conversation);

    println!("2. a later run resumes from the file");
    let mut conversation: Conversation = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    std::fs::remove_file(&path)?;
    conversation.push_user("And in Oslo?");
    println!("  answer: {}", agent.run(&mut conversation).await?.output);
    println!("  the conversation now holds {} messages\n", conversation.len());

    println!("3. switching to provider \"beta\"");
    // The second provider: a test model that plays "beta" and records what it was sent.
    let beta = ScriptedModel::new()
        .respond(
            ModelResponse::from_text("Paris had the nicer day: sunny and 21 °C against rain in Oslo.")
                .with_usage(Usage::new(500, 18)),
        )
        .with_provider("beta");
    let switched = Agent::builder()
        .model(beta.clone())
        .system("You answer weather questions with the weather tool. One sentence.")
        .tool::<Weather>()
        .build()?;
    conversation.push_user("Which city had the nicer day?");
    let view = conversation.view_for("beta").into_owned();
    println!("  answer: {}", switched.run(&mut conversation).await?.output);

    println!("\n  what provider \"beta\" was sent: the first provider's tool calls and results as text");
    let requests = beta.requests();
    print_messages(&requests[0].messages);
    assert_eq!(requests[0].messages, view, "the request is the conversation's view for \"beta\"");
    println!("\n  the raw history still holds the first provider's tool calls as tool calls:");
    print_messages(conversation.messages());
    Ok(())
}
