//! A report agent whose typed output must pass custom validators:
//! `cargo run --example report_validators`.
//!
//! The output type's schema and two validators (one sync, one async) check
//! every proposed report. When one fails, the run feeds every error back to
//! the model and starts the next attempt in the same conversation. The
//! offline script gets it wrong on the first attempt and right on the
//! second; the example prints each attempt's errors and the feedback the
//! model was sent.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline on a scripted model otherwise, and says which.

use std::time::Duration;

use serde_json::json;
use toolloop::prelude::*;
use toolloop::testing::ScriptedModel;

/// A quarterly sales report.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SalesReport {
    /// The title; it must name the quarter, e.g. "Q3 2026 sales".
    title: String,
    /// Revenue per region, in thousands of euros.
    #[schemars(length(min = 1))]
    regions: Vec<RegionLine>,
    /// The sum of the regions' revenue.
    total: u64,
}

/// One region's revenue.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct RegionLine {
    /// The region's name, as the sales system spells it.
    region: String,
    /// Revenue, in thousands of euros.
    revenue: u64,
}

/// Validator: the total must be the sum of the regions.
fn total_adds_up(report: &SalesReport) -> Result<(), String> {
    let sum: u64 = report.regions.iter().map(|line| line.revenue).sum();
    if sum == report.total {
        Ok(())
    } else {
        Err(format!("`total` is {} but the regions add up to {sum}", report.total))
    }
}

/// Validator: the title must name the quarter.
fn title_names_the_quarter(report: &SalesReport) -> Result<(), &'static str> {
    if report.title.contains("Q3") { Ok(()) } else { Err("the title must name the quarter (Q3)") }
}

/// Async validator: every region must exist in the sales system (a lookup
/// that would go over the network). The future owns what it checks.
fn regions_exist(report: &SalesReport) -> impl Future<Output = Result<(), String>> + Send + use<> {
    let regions: Vec<String> = report.regions.iter().map(|line| line.region.clone()).collect();
    async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let unknown: Vec<_> = regions.iter().filter(|r| !["North", "South", "West"].contains(&r.as_str())).collect();
        if unknown.is_empty() { Ok(()) } else { Err(format!("unknown regions {unknown:?}; use North, South, West")) }
    }
}

/// The environment's model (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, `OLLAMA_HOST`), or a script.
fn model() -> Result<Box<dyn Model>, toolloop::BuildError> {
    let model = toolloop::providers::from_env_or(scripted())?;
    println!("using {} ({})\n", model.name(), model.provider());
    Ok(model)
}

/// A first report with three mistakes, then a correct one.
fn scripted() -> ScriptedModel {
    let output = |id: &str, report| ToolCall::new(id, "final_output", report);
    ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([output(
            "o1",
            json!({"title": "Sales report", "total": 245, "regions": [
                {"region": "North", "revenue": 120}, {"region": "Sout", "revenue": 95}, {"region": "West", "revenue": 40}
            ]}),
        )])
        .with_usage(Usage::new(700, 80)),
        ModelResponse::from_tool_calls([output(
            "o2",
            json!({"title": "Q3 2026 sales", "total": 255, "regions": [
                {"region": "North", "revenue": 120}, {"region": "South", "revenue": 95}, {"region": "West", "revenue": 40}
            ]}),
        )])
        .with_usage(Usage::new(900, 80)),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::builder()
        .model(model()?)
        .system("You write sales reports. Answer by calling `final_output`.")
        .output::<SalesReport>()
        .validator(total_adds_up)
        .validator(title_names_the_quarter)
        .async_validator(regions_exist)
        .max_attempts(3)
        .on_attempt_started(|attempt| println!("attempt {attempt}"))
        .on_validation_failed(|attempt, errors: &[String]| {
            println!("  attempt {attempt} failed validation with {} error(s):", errors.len());
            for error in errors {
                println!("    - {error}");
            }
        })
        .build()?;

    let mut conversation = Conversation::new();
    conversation.push_user("Q3 2026 revenue in k€: North 120, South 95, West 40. Write the report.");
    let done = agent.run(&mut conversation).await?;

    // The feedback is an ordinary user message in the conversation.
    for feedback in conversation.iter().skip(1).filter(|m| m.role == Role::User && !m.text().is_empty()) {
        println!("\nfeedback the model was sent:\n{}", feedback.text());
    }
    let report = &done.output;
    println!("\nvalid output after {} attempt(s): {report:#?}", done.metadata.attempts);
    println!("usage over every attempt: {} tokens", done.metadata.usage.total());
    Ok(())
}
