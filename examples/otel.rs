//! A run in your tracing backend: `cargo run --example otel`.
//!
//! toolloop's spans follow the OpenTelemetry GenAI semantic conventions
//! (`invoke_agent`, `chat {model}`, `execute_tool {name}`), so
//! `tracing-opentelemetry` is all the glue a backend needs.
//!
//! - With `OTEL_EXPORTER_OTLP_ENDPOINT` set (e.g. `http://localhost:4318` for
//!   a local collector, Jaeger, Grafana Tempo, Langfuse or Phoenix), the spans
//!   go there over OTLP/HTTP (protobuf).
//! - Otherwise they go to an in-memory exporter and this prints the span tree
//!   with the main attributes.
//! - `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` adds the
//!   messages, tool definitions, arguments and results (off by default).
//!
//! It runs offline on a scripted model and finishes by itself.

use std::convert::Infallible;

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanId, TracerProvider as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use toolloop::prelude::*;
use toolloop::testing::ScriptedModel;
use tracing_subscriber::layer::SubscriberExt as _;

/// Look up an order's status.
#[derive(toolloop::Tool)]
struct OrderStatus {
    /// The order's id, e.g. "A-17".
    order_id: String,
}

impl OrderStatus {
    #[allow(clippy::unused_async)] // a real lookup would query a database
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("order {} shipped yesterday", self.order_id))
    }
}

fn model() -> ScriptedModel {
    ScriptedModel::new()
        .respond(
            ModelResponse::from_tool_calls([ToolCall::new("call_1", "order_status", json!({"order_id": "A-17"}))])
                .with_usage(Usage::new(120, 18))
                .with_id("resp_1"),
        )
        .respond(ModelResponse::from_text("Your order A-17 shipped yesterday.").with_usage(Usage::new(160, 12)))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The exporter's HTTP client (reqwest without a default TLS backend) needs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let resource = Resource::builder().with_attribute(KeyValue::new("service.name", "toolloop-example")).build();
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok();
    let memory = InMemorySpanExporter::default();
    let provider = match &endpoint {
        // The exporter reads the endpoint (and headers) from the environment.
        Some(_) => SdkTracerProvider::builder()
            .with_resource(resource)
            .with_batch_exporter(opentelemetry_otlp::SpanExporter::builder().with_http().build()?)
            .build(),
        None => SdkTracerProvider::builder().with_resource(resource).with_simple_exporter(memory.clone()).build(),
    };
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("toolloop")));
    tracing::subscriber::set_global_default(subscriber)?;

    let agent = Agent::builder()
        .name("support")
        .model(model())
        .system("You answer questions about orders.")
        .tool::<OrderStatus>()
        .build()?;
    let mut conversation = Conversation::new();
    conversation.push_user("Where is my order A-17?");
    let done = agent.run(&mut conversation).await?;
    println!("answer: {}\n", done.output);

    match endpoint {
        Some(endpoint) => {
            // The batch exporter posts from its own thread and blocks until it
            // is done: wait for it off the runtime's workers.
            tokio::task::spawn_blocking(move || provider.shutdown()).await??;
            println!("spans flushed to {endpoint} (export errors are not reported here)");
        }
        None => print_tree(&memory.get_finished_spans()?),
    }
    Ok(())
}

/// Prints spans as an indented tree, children in start order.
fn print_tree(spans: &[SpanData]) {
    fn print(spans: &[SpanData], parent: SpanId, depth: usize) {
        let mut children: Vec<&SpanData> = spans.iter().filter(|span| span.parent_span_id == parent).collect();
        children.sort_by_key(|span| span.start_time);
        for span in children {
            let attributes: Vec<String> = span
                .attributes
                .iter()
                .filter(|kv| kv.key.as_str().starts_with("gen_ai.") || kv.key.as_str() == "error.type")
                .map(|kv| format!("{}={}", kv.key, kv.value))
                .collect();
            println!("{}{} [{:?}]", "  ".repeat(depth), span.name, span.span_kind);
            for attribute in attributes {
                println!("{}    {attribute}", "  ".repeat(depth));
            }
            print(spans, span.span_context.span_id(), depth + 1);
        }
    }
    print(spans, SpanId::INVALID, 0);
}
