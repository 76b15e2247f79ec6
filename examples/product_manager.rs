//! A product-manager agent: `cargo run --example product_manager`.
//!
//! - One conversation is kept across several runs, so the agent remembers
//!   what the user said before (a conversational agent).
//! - A terminal `spec_submit` tool returns the new spec's id; a terminal check
//!   reads it from the tool's structured output and ends the run with it as
//!   the signal.
//! - Each run may make two iterations; an iteration-limit hook asks a shared
//!   budget for more when a run needs them, and stops the run when the
//!   budget is spent.
//!
//! It uses the bare [`ToolLoop`] (no `Agent`), whose signal can be any type.
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline on a scripted model otherwise, and says which.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::json;
use toolloop::prelude::*;
use toolloop::run::{LimitDecision, LoopOutput, ToolLoop};
use toolloop::testing::ScriptedModel;
use toolloop::tool::ToolExecution;

/// The product backlog, as the agent can search it.
struct Backlog {
    tickets: Vec<(&'static str, &'static str)>,
}

/// Search the product backlog for tickets whose title mentions a word.
#[derive(toolloop::Tool)]
#[tool(state = Backlog)]
struct SearchBacklog {
    /// One word to look for, e.g. "export".
    query: String,
}

impl SearchBacklog {
    #[allow(clippy::unused_async)] // a real backlog would be queried over the network
    async fn run(self, backlog: &Backlog) -> Result<Vec<String>, Infallible> {
        let query = self.query.to_lowercase();
        let hits = backlog.tickets.iter().filter(|(_, title)| title.to_lowercase().contains(&query));
        Ok(hits.map(|(id, title)| format!("{id}: {title}")).collect())
    }
}

/// Numbers the specs.
#[derive(Default)]
struct Specs {
    written: AtomicU32,
}

/// Submit the finished spec once the requirements are clear. Returns the spec's id.
#[derive(toolloop::Tool)]
#[tool(state = Specs)]
struct SpecSubmit {
    /// A short title.
    title: String,
    /// What the feature does, and for whom.
    summary: String,
    /// Testable acceptance criteria.
    acceptance_criteria: Vec<String>,
}

/// What `spec_submit` returns: the model reads it as JSON, the terminal check as a value.
#[derive(serde::Serialize)]
struct Submitted {
    spec_id: String,
}

impl SpecSubmit {
    #[allow(clippy::unused_async)] // a real spec store would be written over the network
    async fn run(self, specs: &Specs) -> Result<Submitted, String> {
        if self.acceptance_criteria.is_empty() {
            return Err("a spec needs at least one acceptance criterion".to_owned());
        }
        let spec_id = format!("SPEC-{}", specs.written.fetch_add(1, Ordering::SeqCst) + 1);
        println!("  [spec store] {spec_id}: {} — {}", self.title, self.summary);
        for criterion in &self.acceptance_criteria {
            println!("  [spec store]   - {criterion}");
        }
        Ok(Submitted { spec_id })
    }
}

/// The terminal check: a batch holding a successful `spec_submit` ends the run with its spec id.
fn submitted_spec(batch: &[ToolExecution]) -> Option<String> {
    batch
        .iter()
        .filter(|done| done.call.name == "spec_submit")
        .find_map(|done| done.output.as_ref()?.value()["spec_id"].as_str().map(str::to_owned))
}

/// The environment's model (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, `OLLAMA_HOST`), or a script.
fn model() -> Result<Box<dyn Model>, toolloop::BuildError> {
    let model = toolloop::providers::from_env_or(scripted())?;
    println!("using {} ({})\n", model.name(), model.provider());
    Ok(model)
}

/// What a model would say over the three runs.
fn scripted() -> ScriptedModel {
    let call = |id: &str, name: &str, input| ToolCall::new(id, name, input);
    let usage = Usage::new(600, 60);
    ScriptedModel::from_responses([
        // Run 1: the request is vague, so the agent asks.
        ModelResponse::from_text("Which format do users need, and who may export: everyone, or admins only?")
            .with_usage(usage),
        // Run 2: two searches use up the run's iterations; the hook grants more; then the spec.
        ModelResponse::from_tool_calls([call("c1", "search_backlog", json!({"query": "export"}))]).with_usage(usage),
        ModelResponse::from_tool_calls([call("c2", "search_backlog", json!({"query": "gdpr"}))]).with_usage(usage),
        ModelResponse::from_tool_calls([call(
            "c3",
            "spec_submit",
            json!({
                "title": "Export my data as CSV",
                "summary": "Every user can download their own data as CSV (covers PM-12 and PM-31).",
                "acceptance_criteria": ["a user downloads a CSV of their orders", "no user sees another's data"]
            }),
        )])
        .with_usage(usage),
        // Run 3: the agent remembers the spec and revises it.
        ModelResponse::from_tool_calls([call(
            "c4",
            "spec_submit",
            json!({
                "title": "Export my data as CSV (v2)",
                "summary": "As SPEC-1; exports above 50 MB are emailed as a download link.",
                "acceptance_criteria": ["exports above 50 MB arrive by email as a link"]
            }),
        )])
        .with_usage(usage),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let backlog = Backlog {
        tickets: vec![
            ("PM-12", "Export orders to CSV"),
            ("PM-31", "GDPR: users can download their data"),
            ("PM-40", "Dark mode"),
        ],
    };
    let mut tools = ToolSet::new();
    tools.add_with_state::<SearchBacklog>(backlog)?.add_with_state::<SpecSubmit>(Specs::default())?;

    // Extra iterations the hook may hand out, over all runs.
    let mut budget = 3;
    let ask_for_budget = move |limit: u32| {
        if budget == 0 {
            println!("  iteration limit ({limit}): no budget left, stopping");
            return LimitDecision::MaxIterations;
        }
        let more = budget.min(2);
        budget -= more;
        println!("  iteration limit ({limit}): asked for {more} more iterations ({budget} left in the budget)");
        LimitDecision::Extend(more)
    };

    let mut product_manager = ToolLoop::new(model()?, tools)
        .system(
            "You are a product manager. When a request is unclear, ask one short question. Otherwise search \
             the backlog for related tickets, then submit a spec with `spec_submit`.",
        )
        .max_iterations(2)
        .on_tool_execution_finished(|call, result| println!("  {}({}) -> {}", call.name, call.input, result.content))
        .terminal_check(submitted_spec)
        .on_iteration_limit(ask_for_budget);

    // One conversation for the whole session: each run appends to it.
    let mut conversation = Conversation::new();
    let mut usage = Usage::default();
    for (run, message) in [
        "Users keep asking to export their data. Can you spec this?",
        "CSV is enough, and every user exports only their own data. Go ahead.",
        "One more thing: exports above 50 MB should be emailed as a link. Update the spec.",
    ]
    .into_iter()
    .enumerate()
    {
        println!("run {}: user: {message}", run + 1);
        conversation.push_user(message);
        match product_manager.run(&mut conversation).await {
            Ok(done) => {
                match done.output {
                    LoopOutput::Answer(text) => println!("  agent asks: {text}"),
                    LoopOutput::Signal(spec_id) => println!("  ended by the terminal check with signal {spec_id}"),
                }
                usage += done.metadata.usage;
                println!(
                    "  {} iteration(s); the conversation now holds {} messages\n",
                    done.metadata.iterations,
                    conversation.len()
                );
            }
            Err(error) => {
                usage += error.metadata().usage;
                println!("  run stopped: {error}\n");
            }
        }
    }
    println!("session usage: {} input + {} output tokens", usage.input_tokens, usage.output_tokens);
    Ok(())
}
