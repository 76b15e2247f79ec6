//! Helper tools that explore data before the agent answers:
//! `cargo run --example explore_data`.
//!
//! The example writes three small CSV files to a temporary directory. The
//! agent lists them, describes them — three tool calls in one response,
//! run in parallel (`parallel_tool_calls`), results kept in call order —
//! and then produces its typed findings. Each call is printed as it starts
//! and ends, with the time since the batch began, so the overlap shows.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline on a scripted model otherwise, and says which.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use toolloop::prelude::*;
use toolloop::testing::ScriptedModel;

/// How many tool calls of one response may run at once.
const PARALLEL: NonZeroUsize = NonZeroUsize::new(3).unwrap();

/// The directory the tools may read.
struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// The path of `file`, refusing anything outside the directory.
    fn path(&self, file: &str) -> Result<PathBuf, String> {
        if file.contains(['/', '\\']) || file.starts_with('.') {
            return Err(format!("`{file}` is not a file name in the data directory"));
        }
        Ok(self.root.join(file))
    }
}

/// List the CSV files in the data directory.
#[derive(toolloop::Tool)]
#[tool(state = DataDir)]
struct ListFiles {
    /// Only files whose name contains this text (all files when absent).
    filter: Option<String>,
}

impl ListFiles {
    async fn run(self, dir: &DataDir) -> Result<Vec<String>, std::io::Error> {
        let mut names = Vec::new();
        let mut entries = tokio::fs::read_dir(&dir.root).await?;
        while let Some(entry) = entries.next_entry().await? {
            let name = entry.file_name().to_string_lossy().into_owned();
            if self.filter.as_deref().is_none_or(|filter| name.contains(filter)) {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }
}

/// Describe one CSV file: its columns, its row count and the sum of each numeric column.
#[derive(toolloop::Tool)]
#[tool(state = DataDir)]
struct DescribeFile {
    /// The file's name, as `list_files` returns it.
    file: String,
}

/// What `describe_file` tells the model.
#[derive(serde::Serialize)]
struct Description {
    columns: Vec<String>,
    rows: usize,
    sums: serde_json::Map<String, serde_json::Value>,
}

impl DescribeFile {
    async fn run(self, dir: &DataDir) -> Result<Description, String> {
        let text = tokio::fs::read_to_string(dir.path(&self.file)?).await.map_err(|e| format!("{}: {e}", self.file))?;
        // Stands for a slow warehouse query: this is what parallel calls save.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut lines = text.lines();
        let columns: Vec<String> = lines.next().unwrap_or_default().split(',').map(str::to_owned).collect();
        let rows: Vec<Vec<&str>> = lines.map(|line| line.split(',').collect()).collect();
        let mut sums = serde_json::Map::new();
        for (index, column) in columns.iter().enumerate() {
            let values: Option<Vec<i64>> = rows.iter().map(|row| row.get(index)?.parse().ok()).collect();
            if let Some(values) = values {
                sums.insert(column.clone(), values.iter().sum::<i64>().into());
            }
        }
        Ok(Description { columns, rows: rows.len(), sums })
    }
}

/// What the agent found.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Findings {
    /// The region with the highest revenue.
    best_region: String,
    /// Revenue over every region.
    total_revenue: i64,
    /// One sentence for the sales team.
    summary: String,
}

/// The environment's model (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, `OLLAMA_HOST`), or a script.
fn model() -> Result<Box<dyn Model>, toolloop::BuildError> {
    let model = toolloop::providers::from_env_or(scripted())?;
    println!("using {} ({})\n", model.name(), model.provider());
    Ok(model)
}

/// List, describe the three files at once, answer.
fn scripted() -> ScriptedModel {
    let call = |id: &str, name: &str, input| ToolCall::new(id, name, input);
    ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([call("l1", "list_files", json!({}))]).with_usage(Usage::new(400, 20)),
        ModelResponse::from_tool_calls([
            call("d1", "describe_file", json!({"file": "north.csv"})),
            call("d2", "describe_file", json!({"file": "south.csv"})),
            call("d3", "describe_file", json!({"file": "west.csv"})),
        ])
        .with_usage(Usage::new(480, 60)),
        ModelResponse::from_tool_calls([call(
            "f1",
            "final_output",
            json!({"best_region": "north", "total_revenue": 830, "summary": "North leads with 390 of 830 k€."}),
        )])
        .with_usage(Usage::new(700, 50)),
    ])
}

/// Writes the dataset: one CSV file per region.
fn write_dataset() -> std::io::Result<PathBuf> {
    let root = std::env::temp_dir().join(format!("toolloop-explore-data-{}", std::process::id()));
    std::fs::create_dir_all(&root)?;
    for (region, [jul, aug, sep]) in [("north", [120, 130, 140]), ("south", [95, 100, 90]), ("west", [40, 55, 60])] {
        let csv = format!("month,revenue\njul,{jul}\naug,{aug}\nsep,{sep}\n");
        std::fs::write(root.join(format!("{region}.csv")), csv)?;
    }
    Ok(root)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = write_dataset()?;
    println!("dataset: {}", root.display());
    let data = Arc::new(DataDir { root: root.clone() });

    // When the current batch started, for the timeline.
    let batch_start = Arc::new(Mutex::new(Instant::now()));
    let (on_response, on_call, on_result) = (batch_start.clone(), batch_start.clone(), batch_start);
    let since = |start: &Mutex<Instant>| start.lock().map_or(0, |start| start.elapsed().as_millis());

    let agent = Agent::builder()
        .model(model()?)
        .system(
            "You analyse sales data. Explore the files with the tools before answering; describe files in parallel.",
        )
        .tool_with_state::<ListFiles>(data.clone())
        .tool_with_state::<DescribeFile>(data)
        .output::<Findings>()
        .parallel_tool_calls(PARALLEL)
        .on_iteration_finished(move |response| {
            *on_response.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
            println!("model asked for {} tool call(s)", response.tool_calls().count());
        })
        .on_tool_execution_started(move |call| {
            println!("  +{:>3}ms start {}({})", since(&on_call), call.name, call.input);
        })
        .on_tool_execution_finished(move |call, result| {
            println!("  +{:>3}ms done  {} -> {}", since(&on_result), call.name, result.content);
        })
        .build()?;

    let mut conversation = Conversation::new();
    conversation.push_user("Which region sold the most this quarter, and what was the total?");
    let outcome = agent.run(&mut conversation).await;
    std::fs::remove_dir_all(&root)?;
    let done = outcome?;

    let findings = &done.output;
    println!("\nfindings: {} leads; total {} k€. {}", findings.best_region, findings.total_revenue, findings.summary);
    let meta = &done.metadata;
    println!(
        "{} iterations, {} tool calls, {} tokens, {:?}",
        meta.iterations,
        meta.tool_calls,
        meta.usage.total(),
        meta.elapsed
    );
    Ok(())
}
