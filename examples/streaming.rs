//! Streaming a run: `cargo run --example streaming`.
//!
//! Prints what the run does as it happens: the model's text as it is
//! written, a tool call's arguments forming (each fragment, and the
//! arguments so far completed to a JSON value), the tool running, and the
//! run's result last. `cargo run --example streaming -- --sse` prints the
//! same run as the server-sent events a web handler would send a browser
//! (see `sse_frame`).
//!
//! It streams from a real model when the environment configures one, as
//! the other examples pick it (`toolloop::providers::from_env`):
//! `ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL`), `OPENAI_API_KEY` or
//! `OPENAI_BASE_URL` (OpenAI-compatible servers too), `GEMINI_API_KEY` (and
//! `GEMINI_BASE_URL`; a Gemini 3 model, thinking), `OLLAMA_HOST`; and
//! offline on a scripted model otherwise, which streams its answers in
//! small chunks.

use std::io::Write;

use serde_json::json;
use toolloop::prelude::*;
use toolloop::run::Event;
use toolloop::testing::ScriptedModel;

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
    let sse = std::env::args().any(|arg| arg == "--sse");
    let model = toolloop::providers::from_env_or(offline_model())?;
    if !sse {
        println!("model: {} ({})", model.name(), model.provider());
    }
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
        if sse {
            write!(out, "{}", sse_frame(&event))?;
        } else {
            show(&event, &mut out)?;
        }
        // Each delta reaches the terminal (or the client) as it arrives.
        out.flush()?;
    }
    // What `agent.run` would have returned.
    let result = stream.output().await;
    if sse {
        write!(out, "{}", sse_result(&result))?;
    } else {
        match result {
            Ok(done) => writeln!(out, "\nanswer: {}\n(ended: {:?})", done.output, done.metadata.termination)?,
            Err(error) => writeln!(out, "\nthe run failed: {error}")?,
        }
    }
    Ok(())
}

/// Prints `event` for a person watching the run.
fn show(event: &Event, out: &mut impl Write) -> std::io::Result<()> {
    match event {
        Event::IterationStarted { iteration, .. } => writeln!(out, "\n— iteration {iteration}"),
        Event::TextDelta { text } => write!(out, "{text}"),
        Event::ReasoningDelta { text } => write!(out, "\x1b[2m{text}\x1b[0m"),
        Event::ToolCallStarted { name, id, .. } => writeln!(out, "\n[tool call {name} ({id})]"),
        Event::ToolCallArgumentsDelta { fragment, partial, .. } => {
            let so_far = partial.as_ref().map_or_else(|| "…".to_owned(), ToString::to_string);
            writeln!(out, "  + {:<12} arguments so far: {so_far}", format!("{fragment:?}"))
        }
        Event::ToolCallWritten { call, .. } => writeln!(out, "  = {}({})", call.name, call.input),
        Event::ModelCallDiscarded { error, .. } => {
            writeln!(out, "\n[model call failed, output above discarded: {error}]")
        }
        Event::ToolExecutionFinished { call, result, .. } => {
            writeln!(out, "[{} answered: {}]", call.name, result.content)
        }
        Event::IterationFinished { response, .. } => {
            let (usage, stop_reason) = (response.usage, &response.stop_reason);
            writeln!(out, "\n[{stop_reason:?}; {} in / {} out tokens]", usage.input_tokens, usage.output_tokens)
        }
        _ => Ok(()),
    }
}

/// `event` as one server-sent event: an `event:` line with the event's name
/// and one `data:` line of JSON (JSON text has no raw line breaks, so one
/// line always holds it). A web handler writes these to a
/// `text/event-stream` response (with axum: map the run stream to
/// `Event::default().event(name).data(json)` items of an `Sse` response);
/// a browser reads them with `EventSource`.
fn sse_frame(event: &Event) -> String {
    let data = match event {
        Event::AttemptStarted { attempt } => json!({ "attempt": attempt }),
        Event::IterationStarted { attempt, iteration } => json!({ "attempt": attempt, "iteration": iteration }),
        Event::TextDelta { text } | Event::ReasoningDelta { text } => json!({ "text": text }),
        Event::ToolCallStarted { index, id, name } => json!({ "index": index, "id": id, "name": name }),
        Event::ToolCallArgumentsDelta { index, fragment, partial } => {
            json!({ "index": index, "fragment": fragment, "arguments": partial })
        }
        Event::ToolCallWritten { index, call } => json!({ "index": index, "call": call }),
        Event::ModelCallDiscarded { attempt, iteration, error, usage } => {
            json!({ "attempt": attempt, "iteration": iteration, "error": error, "usage": usage })
        }
        Event::IterationFinished { attempt, iteration, response } => {
            let (usage, stop_reason) = (response.usage, &response.stop_reason);
            json!({ "attempt": attempt, "iteration": iteration, "usage": usage, "stop_reason": stop_reason })
        }
        Event::ToolExecutionStarted { call, .. } => json!({ "call": call }),
        Event::ToolExecutionFinished { call, result, verdict, .. } => {
            json!({ "call": call, "result": result, "verdict": verdict })
        }
        Event::OutputProposed { attempt, input } => json!({ "attempt": attempt, "input": input }),
        Event::ValidationFailed { attempt, errors } => json!({ "attempt": attempt, "errors": errors }),
        Event::RunFinished { termination } => json!({ "termination": termination }),
        // Kinds added later: their name is enough to skip them.
        _ => json!({}),
    };
    format!("event: {}\ndata: {data}\n\n", event.name())
}

/// The run's result as a last server-sent event, `output` or `error`.
fn sse_result(result: &Result<toolloop::RunOutput<String>, toolloop::RunError>) -> String {
    let (name, data) = match result {
        Ok(done) => ("output", json!({ "output": done.output, "metadata": done.metadata })),
        Err(error) => ("error", json!({ "error": error.to_string(), "metadata": error.metadata() })),
    };
    format!("event: {name}\ndata: {data}\n\n")
}
