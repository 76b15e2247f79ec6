//! Review probes (w5-review): behaviours of the changes since 74fd32d that
//! a user would hit. Each test states what should happen.

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
/// `execute_tool` span there should say so too (`toolloop.tool.deferred =
/// "held"`), as the deferred call's says `approval`. Instead the span
/// closes with no mark at all: a trace reads as if the output call ran
/// in the paused segment, and again on resume.
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

/// `ModelResponse::from_stream` (new) promises: "a `Connection` error for a
/// stream that ends before `Finished`. The error carries the usage
/// reported before it". A stream that reported usage and then ended early
/// gives a `Connection` error without it.
#[tokio::test]
async fn from_stream_an_early_end_carries_the_usage_reported_before_it() {
    use toolloop::Usage;
    use toolloop::model::{ModelErrorKind, StreamEvent};

    let usage = Usage { input_tokens: 120, output_tokens: 7, ..Usage::default() };
    let events: Vec<Result<StreamEvent, toolloop::ModelError>> =
        vec![Ok(StreamEvent::Usage(usage)), Ok(StreamEvent::TextDelta { index: 0, text: "Hel".into() })];
    let error = ModelResponse::from_stream(futures_util::stream::iter(events)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Connection, "{error}");
    assert_eq!(error.usage(), Some(usage), "the usage reported before the stream ended");
}

/// The same gap in a streamed run (the engine folds the stream the same
/// way): the run's usage counts a failed call's reported usage ("its error
/// carries it", run/engine.rs), but not that of a stream cut off before
/// `Finished`; the token budget misses those tokens.
#[tokio::test]
async fn a_streamed_run_counts_the_usage_of_a_stream_cut_before_it_finished() {
    use futures_util::StreamExt as _;
    use toolloop::model::{BoxFuture, BoxStream, StreamEvent};
    use toolloop::{Model, ModelError, ModelRequest, Usage};

    const USAGE: Usage =
        Usage { input_tokens: 120, output_tokens: 7, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };

    struct CutOff;
    impl Model for CutOff {
        fn provider(&self) -> &str {
            "cut"
        }
        fn name(&self) -> &str {
            "cut-1"
        }
        fn complete<'a>(&'a self, _request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
            unreachable!("streamed")
        }
        fn stream<'a>(&'a self, _request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
            futures_util::stream::iter(vec![
                Ok(StreamEvent::Usage(USAGE)),
                Ok(StreamEvent::TextDelta { index: 0, text: "Hel".into() }),
            ])
            .boxed()
        }
    }

    let agent = Agent::builder().model(CutOff).build().unwrap();
    let mut conversation = ask("Hello");
    let mut stream = agent.run_stream(&mut conversation);
    while stream.next().await.is_some() {}
    let error = stream.output().await.unwrap_err();
    assert_eq!(error.metadata().usage, USAGE, "{error}");
}

/// CHANGELOG and guide/approvals.rs: an output call waiting with a deferred
/// call is decided by governance "once, before the pause". With
/// `hold_batch_on_deferral` and the output call after the deferred one,
/// the policy is not asked before the pause (the call is held before
/// governance), only when the run is resumed.
#[tokio::test]
async fn with_hold_batch_on_deferral_the_output_call_is_still_decided_before_the_pause() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let batch = [call("s1", "search", json!({"query": "q"})), call("o1", "final_output", json!({"title": "T", "score": 7}))];
    let model = ScriptedModel::new().respond(ModelResponse::from_tool_calls(batch));
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .hold_batch_on_deferral()
        .governance(Governance::new().policy(move |call: &ToolCall| {
            seen.lock().unwrap().push(call.id.clone());
            if call.name == "search" { Decision::Defer("a person signs off".into()) } else { Decision::Allow }
        }))
        .output::<Report>()
        .build()
        .unwrap();
    let mut conversation = ask("Report.");
    let paused = agent.run(&mut conversation).await.unwrap_err();
    assert!(paused.is_deferred(), "{paused}");
    assert_eq!(*asked.lock().unwrap(), vec!["s1".to_owned(), "o1".to_owned()], "decided before the pause");
}
