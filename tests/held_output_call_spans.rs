//! The trace of an output call held back with a deferred call says it
//! waited. (Every test here traces: a test without a subscriber running
//! beside them would leave tracing's callsites disabled for them.)

#![allow(clippy::unused_async)]

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::{Report, Search, ask, call};
use opentelemetry::Value;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use toolloop::run::{Decision, DeferralReason, Event, Governance};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, ModelResponse, ToolCall};
use tracing_subscriber::layer::SubscriberExt as _;

async fn traced<F: Future>(run: impl FnOnce() -> F) -> (F::Output, Vec<SpanData>) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let guard = tracing::subscriber::set_default(subscriber);
    let output = run().await;
    drop(guard);
    provider.force_flush().unwrap();
    (output, exporter.get_finished_spans().unwrap())
}

fn attributes(span: &SpanData) -> HashMap<String, Value> {
    span.attributes.iter().map(|kv| (kv.key.to_string(), kv.value.clone())).collect()
}

/// The `execute_tool` spans of call `id`, each with its `toolloop.tool.deferred`.
fn tool_spans(spans: &[SpanData], id: &str) -> Vec<Option<String>> {
    spans
        .iter()
        .filter(|span| span.name.starts_with("execute_tool"))
        .map(attributes)
        .filter(|attributes| attributes.get("gen_ai.tool.call.id").map(Value::as_str).as_deref() == Some(id))
        .map(|attributes| attributes.get("toolloop.tool.deferred").map(|value| value.as_str().into_owned()))
        .collect()
}

fn events_into(log: &Arc<Mutex<Vec<Event>>>) -> impl Fn(&Event) + Send + Sync + 'static {
    let log = Arc::clone(log);
    move |event: &Event| log.lock().unwrap().push(event.clone())
}

/// A typed agent whose policy defers `search`.
fn deferring_agent(model: &ScriptedModel, log: &Arc<Mutex<Vec<Event>>>) -> Agent<Report> {
    Agent::builder()
        .model(model.clone())
        .tool::<Search>()
        .governance(Governance::new().policy(|call: &ToolCall| {
            if call.name == "search" { Decision::Defer("a person signs off".into()) } else { Decision::Allow }
        }))
        .on_event(events_into(log))
        .output::<Report>()
        .build()
        .unwrap()
}

/// The output call held back with a deferred call is reported as deferred
/// (`ToolCallDeferred { reason: Held }`) in the paused segment; its
/// `execute_tool` span there says so too (`toolloop.tool.deferred =
/// "held"`), as the deferred call's says `approval`: a trace must not read
/// as if the output call ran in the paused segment, and again on resume.
#[tokio::test]
async fn a_held_output_calls_span_in_the_paused_segment_says_it_was_held() {
    let batch =
        [call("s1", "search", json!({"query": "q"})), call("o1", "final_output", json!({"title": "T", "score": 7}))];
    let model = ScriptedModel::new().respond(ModelResponse::from_tool_calls(batch));
    let log = Arc::new(Mutex::new(Vec::new()));
    let agent = deferring_agent(&model, &log);
    let mut conversation = ask("Report.");
    let (paused, spans) = traced(|| agent.run(&mut conversation)).await;
    let paused = paused.unwrap_err();
    assert!(paused.is_deferred(), "{paused}");
    let reasons: Vec<_> = paused.deferred_calls().iter().map(|d| (d.call.id.clone(), d.reason.clone())).collect();
    assert_eq!(reasons[1], ("o1".to_owned(), DeferralReason::Held));
    assert_eq!(tool_spans(&spans, "s1"), vec![Some("approval".to_owned())]);
    // The events say o1 waited (held); the span should agree.
    assert_eq!(
        tool_spans(&spans, "o1"),
        vec![Some("held".to_owned())],
        "the paused segment's span of the held output call"
    );
}
