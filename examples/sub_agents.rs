//! Agents as tools: an orchestrator delegates to a researcher and a writer:
//! `cargo run --example sub_agents`.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `OLLAMA_HOST`)
//! and offline on scripted models otherwise, and says which. It streams the
//! run, showing each sub-run's progress under the tool call that started
//! it, then prints the article and the usage of every run, rolled up.

use serde_json::json;
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

/// What the writer is given: a topic and the facts to use.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Brief {
    /// What the article is about.
    topic: String,
    /// The facts the article must use, one per item.
    facts: Vec<String>,
}

/// The article the writer produces.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Article {
    /// A short title.
    title: String,
    /// Two or three sentences.
    body: String,
}

/// The environment's model, or `script` offline.
fn model(script: ScriptedModel) -> Result<Box<dyn Model>, toolloop::BuildError> {
    toolloop::providers::from_env_or(script)
}

fn researcher_script() -> ScriptedModel {
    let call = |id: &str, city: &str| ToolCall::new(id, "population", json!({ "city": city }));
    ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([call("p1", "Paris"), call("p2", "Berlin")]).with_usage(Usage::new(180, 30)),
        ModelResponse::from_text("Paris: 2.1 million people. Berlin: 3.7 million people.")
            .with_usage(Usage::new(260, 18)),
    ])
}

fn writer_script() -> ScriptedModel {
    let article = json!({
        "title": "Berlin outgrows Paris",
        "body": "Berlin is home to 3.7 million people, Paris to 2.1 million. By city limits, Berlin is the larger.",
    });
    ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([ToolCall::new("a1", "final_output", article)]).with_usage(Usage::new(240, 52))
    ])
}

fn orchestrator_script() -> ScriptedModel {
    let research =
        ToolCall::new("r1", "research", json!({ "prompt": "What are the populations of Paris and Berlin?" }));
    let brief = json!({
        "topic": "Which city is larger, Paris or Berlin?",
        "facts": ["Paris: 2.1 million people", "Berlin: 3.7 million people"],
    });
    ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([research]).with_usage(Usage::new(310, 40)),
        ModelResponse::from_tool_calls([ToolCall::new("w1", "write", brief)]).with_usage(Usage::new(420, 64)),
        ModelResponse::from_text("Here is the article: Berlin outgrows Paris.").with_usage(Usage::new(560, 20)),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let orchestrator_model = model(orchestrator_script())?;
    println!("using {} ({})\n", orchestrator_model.name(), orchestrator_model.provider());

    let researcher = Agent::builder()
        .name("researcher")
        .model(model(researcher_script())?)
        .system("You find facts with your tools and report them in one or two sentences.")
        .tool::<Population>()
        .build()?;
    let writer = Agent::builder()
        .name("writer")
        .model(model(writer_script())?)
        .system("You write short, precise articles from a brief. Use only the facts given.")
        .output::<Article>()
        .build()?;
    let orchestrator = Agent::builder()
        .name("orchestrator")
        .model(orchestrator_model)
        .system("You answer questions with an article. Have the researcher find the facts, then the writer write it.")
        .tool_dyn(researcher.as_tool("research", "Find facts. Give it a precise question.").into())
        .tool_dyn(
            writer
                .as_tool("write", "Write an article from a topic and facts.")
                .input::<Brief>()
                .render(|brief: &Brief| format!("Topic: {}\nFacts:\n- {}", brief.topic, brief.facts.join("\n- ")))
                .into(),
        )
        .token_budget(20_000)
        .build()?;

    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin? I want a short article.");
    let mut stream = orchestrator.run_stream(&mut conversation);
    while let Some(event) = stream.next().await {
        match event {
            Event::ToolExecutionStarted { call, .. } => println!("orchestrator -> {}({})", call.name, call.input),
            Event::ToolExecutionFinished { call, result, .. } => {
                let mark = if result.is_error() { "error" } else { "ok" };
                println!("orchestrator <- {} [{mark}] {}", call.name, result.content);
            }
            Event::SubRun { call_id, agent, event } => match *event {
                Event::ToolExecutionFinished { call, result, .. } => {
                    println!("    {agent} ({call_id}): {}({}) = {}", call.name, call.input, result.content);
                }
                Event::IterationFinished { iteration, response, .. } => {
                    println!("    {agent} ({call_id}): iteration {iteration}, {} tokens", response.usage.total());
                }
                _ => {}
            },
            _ => {}
        }
    }
    let done = stream.output().await?;
    println!("\n{}", done.output);
    let meta = &done.metadata;
    for sub_run in &meta.sub_runs {
        println!(
            "  sub-run {} ({}): {}, {} tokens",
            sub_run.agent,
            sub_run.call_id,
            sub_run.termination(),
            sub_run.usage().total()
        );
    }
    println!(
        "usage: {} tokens over {} model calls and {} tool calls, sub-runs included",
        meta.usage.total(),
        meta.model_calls,
        meta.tool_calls
    );
    Ok(())
}
