//! What observers see of a paused and resumed run: OTel spans say the run
//! was deferred (not failed) and which tool call waited, the resumed run's
//! span counts its own segment; hooks get an event per deferred call, and
//! the audit trail records the person's decision.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::{Report, Search, ask, call, calls, usage};
use opentelemetry::Value;
use opentelemetry::trace::{Status, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use toolloop::run::{Decision, DeferralReason, Event, Governance, Resolution, Verdict};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, ModelResponse, ToolCall};
use tracing_subscriber::layer::SubscriberExt as _;

async fn traced<F: Future>(run: impl FnOnce() -> F) -> (F::Output, Vec<SpanData>) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let guard = tracing::subscriber::set_default(subscriber);
    // A test of this file that runs untraced beside this one may have left
    // the run's callsites disabled: ask every callsite again.
    tracing::callsite::rebuild_interest_cache();
    let output = run().await;
    drop(guard);
    provider.force_flush().unwrap();
    (output, exporter.get_finished_spans().unwrap())
}

fn attributes(span: &SpanData) -> HashMap<String, Value> {
    span.attributes.iter().map(|kv| (kv.key.to_string(), kv.value.clone())).collect()
}

fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found: Vec<_> = spans.iter().filter(|span| span.name == name).collect();
    assert_eq!(found.len(), 1, "one `{name}` span expected");
    found[0]
}

fn agent(model: ScriptedModel, on_event: impl Fn(&Event) + Send + Sync + 'static) -> Agent {
    Agent::builder()
        .name("support")
        .model(model)
        .tool::<Search>()
        .governance(Governance::new().needs_approval("search"))
        .on_event(on_event)
        .build()
        .unwrap()
}

#[tokio::test]
async fn spans_say_the_run_was_deferred_and_the_resume_counts_its_own_segment() {
    let model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "q"}))]).with_usage(usage(100, 10)))
        .respond(ModelResponse::from_text("found").with_usage(usage(200, 20)));
    let agent = agent(model, |_: &Event| {});
    let mut conversation = ask("Find it.");
    let (paused, spans) = traced(|| agent.run(&mut conversation)).await;
    assert!(paused.unwrap_err().is_deferred());
    let run = one(&spans, "invoke_agent support");
    let attributes_of_run = attributes(run);
    assert_eq!(attributes_of_run["toolloop.termination"], Value::from("deferred"));
    assert_eq!(attributes_of_run["toolloop.deferred_calls"], Value::I64(1));
    assert!(!attributes_of_run.contains_key("error.type"), "a pause is not an error");
    assert!(!matches!(run.status, Status::Error { .. }));
    let tool = one(&spans, "execute_tool search");
    assert_eq!(attributes(tool)["toolloop.tool.deferred"], Value::from("approval"));

    let (done, spans) = traced(|| agent.resume(&mut conversation, [("s1", Resolution::Approve)])).await;
    assert_eq!(done.unwrap().metadata.usage, usage(300, 30), "the run's metadata covers both segments");
    let run = one(&spans, "invoke_agent support");
    let attributes_of_run = attributes(run);
    assert_eq!(attributes_of_run["toolloop.resumed"], Value::Bool(true));
    assert_eq!(attributes_of_run["toolloop.termination"], Value::from("answer"));
    // Each span reports its own segment's tokens, so summing spans does not count the first twice.
    assert_eq!(attributes_of_run["gen_ai.usage.input_tokens"], Value::I64(200));
    assert_eq!(attributes_of_run["gen_ai.usage.output_tokens"], Value::I64(20));
    assert!(!attributes(one(&spans, "execute_tool search")).contains_key("toolloop.tool.deferred"));
}

#[tokio::test]
async fn hooks_see_each_deferred_call_and_the_audit_records_the_decision() {
    let model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "a"})), call("s2", "search", json!({"query": "b"}))]))
        .respond(ModelResponse::from_text("done"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let on_event = move |event: &Event| {
        let entry = match event {
            Event::ToolCallDeferred { call, .. } => format!("deferred {}", call.id),
            Event::ToolExecutionFinished { call, verdict, .. } => format!("audit {} {verdict:?}", call.id),
            Event::RunFinished { termination } => format!("stop {}", termination.is_deferred()),
            _ => return,
        };
        log.lock().unwrap().push(entry);
    };
    let agent = agent(model, on_event);
    let mut conversation = ask("Find both.");
    // Traced like the test above: a thread without a subscriber, running at
    // the same time, could leave tracing's callsite cache saying "disabled".
    let (paused, _) = traced(|| agent.run(&mut conversation)).await;
    paused.unwrap_err();
    assert_eq!(*seen.lock().unwrap(), ["deferred s1", "deferred s2", "stop true"]);
    seen.lock().unwrap().clear();

    let resolutions = [("s1", Resolution::Approve), ("s2", Resolution::deny("b is private"))];
    let (done, _) = traced(|| agent.resume(&mut conversation, resolutions)).await;
    done.unwrap();
    let expected = [
        format!("audit s1 {:?}", Verdict::Approved),
        format!("audit s2 {:?}", Verdict::ApprovalDenied("b is private".into())),
        "stop false".to_owned(),
    ];
    assert_eq!(*seen.lock().unwrap(), expected);
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
