//! What the GenAI-convention spans cost per model call:
//! `cargo bench --bench otel_overhead` (about 10 s).
//!
//! The same agent run (a scripted model asking for one tool per iteration,
//! three model calls and two tool calls per run) with no subscriber, with a
//! `tracing-opentelemetry` layer over the OpenTelemetry SDK (simple processor
//! into the in-memory exporter, emptied after each run), and with content
//! capture on too. The difference, divided by the model calls, is the cost of
//! a `chat` span plus its share of the iteration, tool and run spans.

use std::time::{Duration, Instant};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, Conversation, ModelResponse, ToolCall, Usage};
use tracing_subscriber::layer::SubscriberExt as _;

/// Look a key up.
#[derive(toolloop::Tool)]
struct Lookup {
    /// The key.
    key: String,
}

impl Lookup {
    #[allow(clippy::unused_async)]
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("value of {}", self.key))
    }
}

const MODEL_CALLS: u32 = 3;

fn script() -> ScriptedModel {
    let call = |id: &str| {
        ModelResponse::from_tool_calls([ToolCall::new(id, "lookup", json!({"key": id}))])
            .with_usage(Usage::new(100, 10))
    };
    ScriptedModel::new().respond(call("a")).respond(call("b")).respond(ModelResponse::from_text("done"))
}

/// Runs `runs` agent runs and returns the time per model call.
fn measure(runtime: &tokio::runtime::Runtime, runs: u32, after_each: &dyn Fn()) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..runs {
        let agent = Agent::builder().name("bench").model(script()).tool::<Lookup>().build().unwrap();
        let mut conversation = Conversation::new();
        conversation.push_user("go");
        let started = Instant::now();
        runtime.block_on(agent.run(&mut conversation)).unwrap();
        total += started.elapsed();
        after_each();
    }
    total / (runs * MODEL_CALLS)
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let runs = if quick { 500 } else { 5_000 };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    measure(&runtime, runs / 10, &|| {});

    let bare = measure(&runtime, runs, &|| {});

    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("bench")));
    let (traced, captured) = tracing::subscriber::with_default(subscriber, || {
        measure(&runtime, runs / 10, &|| exporter.reset());
        let traced = measure(&runtime, runs, &|| exporter.reset());
        toolloop::telemetry::set_capture_content(true);
        let captured = measure(&runtime, runs, &|| exporter.reset());
        toolloop::telemetry::set_capture_content(false);
        (traced, captured)
    });

    println!("per model call, {runs} runs of {MODEL_CALLS} model calls and 2 tool calls:");
    println!("  no subscriber:                    {:>8.2} µs", micros(bare));
    println!(
        "  OTel layer (spans exported):      {:>8.2} µs  (+{:.2} µs)",
        micros(traced),
        micros(traced) - micros(bare)
    );
    println!(
        "  OTel layer + content capture:     {:>8.2} µs  (+{:.2} µs)",
        micros(captured),
        micros(captured) - micros(bare)
    );
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
