//! Stopping runs early: `cargo run --example cancellation`.
//!
//! 1. A run cancelled from another task while a slow tool is running.
//! 2. A run that spends its token budget.
//! 3. A run that outlives its `max_duration`.
//!
//! Each stop ends the run promptly with a typed error that says what the
//! run was doing, and leaves a conversation that can be sent to a model
//! again: work done so far is kept, and calls that never ran are answered
//! with `not_executed` results. Each part prints that partial conversation
//! and the usage from the error's metadata.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline on scripted models otherwise, and says which.

use std::convert::Infallible;
use std::time::Duration;

use serde_json::json;
use toolloop::prelude::*;
use toolloop::testing::ScriptedModel;

/// Scan one database table for personal data. The orders table is big and
/// takes a while.
#[derive(toolloop::Tool)]
struct ScanTable {
    /// The table: "users", "orders" or "events".
    table: String,
}

impl ScanTable {
    async fn run(self) -> Result<String, Infallible> {
        let seconds = if self.table == "orders" { 30 } else { 0 };
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        Ok(format!("{}: 2 columns hold personal data", self.table))
    }
}

/// The model for one part: the environment's, or that part's script.
fn model(script: ScriptedModel) -> Result<Box<dyn Model>, toolloop::BuildError> {
    let model = toolloop::providers::from_env_or(script)?;
    println!("using {} ({})", model.name(), model.provider());
    Ok(model)
}

fn scan(id: &str, table: &str) -> ToolCall {
    ToolCall::new(id, "scan_table", json!({ "table": table }))
}

/// Prints each message of the conversation, one line per block.
fn print_conversation(conversation: &Conversation) {
    println!("  partial conversation ({} messages):", conversation.len());
    for message in conversation {
        for block in &message.content {
            let line = match block {
                ContentBlock::Text { text } => format!("text: {text}"),
                ContentBlock::ToolCall(call) => format!("tool call {} {}({})", call.id, call.name, call.input),
                ContentBlock::ToolResult(result) => match result.failure {
                    Some(kind) => format!("tool result {} [{kind}] {}", result.call_id, result.content),
                    None => format!("tool result {} {}", result.call_id, result.content),
                },
                other => format!("{other:?}"),
            };
            println!("    {:?}: {line}", message.role);
        }
    }
    println!("  unanswered tool calls: {:?}", conversation.unanswered_tool_calls());
}

/// Prints how the run ended, the partial conversation and the usage.
fn report(outcome: &Result<String, RunError>, conversation: &Conversation) {
    let error = match outcome {
        Ok(answer) => return println!("  the run finished before it was stopped: {answer}\n"),
        Err(error) => error,
    };
    let metadata = error.metadata();
    println!("  stopped: {error} (termination: {:?})", metadata.termination);
    // `source()` is the error underneath, when there is one (a model error, say).
    if let Some(cause) = std::error::Error::source(error) {
        println!("  because: {cause}");
    }
    print_conversation(conversation);
    let usage = metadata.usage;
    println!(
        "  usage: {} input + {} output tokens, {} model calls, {} tools executed, {:?}\n",
        usage.input_tokens, usage.output_tokens, metadata.model_calls, metadata.tool_calls, metadata.elapsed
    );
}

fn ask(text: &str) -> Conversation {
    let mut conversation = Conversation::new();
    conversation.push_user(text);
    conversation
}

const TASK: &str = "Scan the users, orders and events tables for personal data, one call per table.";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("1. cancelled from another task");
    let script = ScriptedModel::new().respond(
        ModelResponse::from_tool_calls([scan("s1", "users"), scan("s2", "orders")]).with_usage(Usage::new(400, 45)),
    );
    let agent = Agent::builder().model(model(script)?).system("You audit databases.").tool::<ScanTable>().build()?;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        println!("  [other task] cancelling the run");
        trigger.cancel();
    });
    let mut conversation = ask(TASK);
    let outcome = agent.run_with_cancel(&mut conversation, &cancel).await.map(|done| done.output);
    report(&outcome, &conversation);

    println!("2. a token budget of 1000");
    let script = ScriptedModel::new()
        .respond(ModelResponse::from_tool_calls([scan("b1", "users")]).with_usage(Usage::new(400, 30)))
        // This response brings the total to 1200. It is paid for, so its call
        // runs; the budget stops the model call that would come next.
        .respond(ModelResponse::from_tool_calls([scan("b2", "events")]).with_usage(Usage::new(720, 50)));
    let agent = Agent::builder()
        .model(model(script)?)
        .system("You audit databases.")
        .tool::<ScanTable>()
        .token_budget(1_000)
        .build()?;
    let mut conversation = ask(TASK);
    let outcome = agent.run(&mut conversation).await.map(|done| done.output);
    report(&outcome, &conversation);

    println!("3. a max_duration of 500 ms");
    let script = ScriptedModel::new()
        .respond(ModelResponse::from_tool_calls([scan("d1", "users")]).with_usage(Usage::new(400, 30)))
        .respond(ModelResponse::from_tool_calls([scan("d2", "orders")]).with_usage(Usage::new(460, 30)));
    let agent = Agent::builder()
        .model(model(script)?)
        .system("You audit databases.")
        .tool::<ScanTable>()
        .max_duration(Duration::from_millis(500))
        .build()?;
    let mut conversation = ask(TASK);
    let outcome = agent.run(&mut conversation).await.map(|done| done.output);
    report(&outcome, &conversation);
    Ok(())
}
