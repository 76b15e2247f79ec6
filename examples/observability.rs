//! Watching a run: `cargo run --example observability`
//! (or `RUST_LOG=toolloop=trace cargo run --example observability`).
//!
//! - `tracing` output through `tracing_subscriber`, filtered by `RUST_LOG`
//!   (`toolloop=debug` when it is unset), on stderr. At debug level the loop
//!   logs a dump of every request it sends — roles, block kinds, tool call ids
//!   and names, never the texts, arguments or API keys — and of every
//!   response; the HTTP providers add one per HTTP call, with retries.
//! - Hooks that print a live progress line per iteration on stdout, and a
//!   last line with the run's metadata.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline on a scripted model otherwise, and says which.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::json;
use toolloop::prelude::*;
use toolloop::run::Event;
use toolloop::testing::ScriptedModel;
use tracing_subscriber::EnvFilter;

/// Look up an order's status.
#[derive(toolloop::Tool)]
struct OrderStatus {
    /// The order's id, e.g. "A-17".
    order_id: String,
}

impl OrderStatus {
    #[allow(clippy::unused_async)] // a real lookup would await the order service
    async fn run(self) -> Result<String, String> {
        match self.order_id.as_str() {
            "A-17" => Ok("shipped on Monday with parcel P-998".to_owned()),
            "A-18" => Ok("waiting for payment".to_owned()),
            other => Err(format!("no order {other}")),
        }
    }
}

/// Track a parcel.
#[derive(toolloop::Tool)]
struct TrackParcel {
    /// The parcel's id, e.g. "P-998".
    parcel_id: String,
}

impl TrackParcel {
    #[allow(clippy::unused_async)] // a real lookup would await the carrier's API
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("{}: out for delivery, arrives today", self.parcel_id))
    }
}

/// The environment's model (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, `OLLAMA_HOST`), or a script.
fn model() -> Result<Box<dyn Model>, toolloop::BuildError> {
    let model = toolloop::providers::from_env_or(scripted())?;
    println!("using {} ({})\n", model.name(), model.provider());
    Ok(model)
}

/// Two orders at once, then the parcel, then the answer.
fn scripted() -> ScriptedModel {
    let call = |id: &str, name: &str, input| ToolCall::new(id, name, input);
    ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([
            call("o1", "order_status", json!({"order_id": "A-17"})),
            call("o2", "order_status", json!({"order_id": "A-18"})),
        ])
        .with_usage(Usage::new(350, 40)),
        ModelResponse::from_tool_calls([call("p1", "track_parcel", json!({"parcel_id": "P-998"}))])
            .with_usage(Usage::new(430, 25)),
        ModelResponse::from_text("A-17 arrives today; A-18 is waiting for your payment.")
            .with_usage(Usage::new(510, 20)),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr, so they do not mix with the program's own output.
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("toolloop=debug"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();

    // One progress line per iteration, printed as the model answers.
    let started = Instant::now();
    let tokens = AtomicU64::new(0);
    let progress = move |event: &Event| match event {
        Event::IterationFinished { attempt, iteration, response } => {
            let total = tokens.fetch_add(response.usage.total(), Ordering::Relaxed) + response.usage.total();
            let calls: Vec<&str> = response.tool_calls().map(|call| call.name.as_str()).collect();
            let next = if calls.is_empty() { "answers".to_owned() } else { format!("calls {}", calls.join(", ")) };
            println!(
                "[attempt {attempt} · iteration {iteration} · {:>5.0?}] model {next} · {total} tokens so far",
                started.elapsed()
            );
        }
        Event::RunFinished { termination } => println!("[stop] {termination:?} after {:.0?}", started.elapsed()),
        _ => {}
    };

    let agent = Agent::builder()
        .model(model()?)
        .system("You answer questions about orders with the tools. Be brief.")
        .tool::<OrderStatus>()
        .tool::<TrackParcel>()
        .on_event(progress)
        .build()?;

    let mut conversation = Conversation::new();
    conversation.push_user("Where are my orders A-17 and A-18?");
    let done = agent.run(&mut conversation).await?;
    println!("\nanswer: {}", done.output);
    println!("metadata: {}", serde_json::to_string(&done.metadata)?);
    Ok(())
}
