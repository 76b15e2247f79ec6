//! `ToolExecutionFinished` is the one record of every call: it carries
//! exactly the result the conversation holds (what the model is told),
//! capped results, calls that never ran and validated outputs included.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use serde_json::json;
use toolloop::run::{Event, ToolLoop};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, Conversation, FailureKind, ModelResponse, StopReason, ToolResult, ToolSet};

/// Answer at length.
#[derive(toolloop::Tool)]
struct Long {}

impl Long {
    #[allow(clippy::unused_async)] // tool handlers are async by contract
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok("x".repeat(50))
    }
}

fn long_loop(model: &ScriptedModel) -> ToolLoop {
    let mut tools = ToolSet::new();
    tools.add::<Long>().unwrap();
    ToolLoop::new(model.clone(), tools)
}

/// Every event of a run, kept by `on_event`.
type Events = Arc<Mutex<Vec<Event>>>;

fn recording(tool_loop: ToolLoop) -> (ToolLoop, Events) {
    let events = Events::default();
    let seen = Arc::clone(&events);
    (tool_loop.on_event(move |event: &Event| seen.lock().unwrap().push(event.clone())), events)
}

/// The result of every `ToolExecutionFinished`, in order.
fn finished(events: &Events) -> Vec<ToolResult> {
    let events = events.lock().unwrap();
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolExecutionFinished { result, .. } => Some(result.clone()),
            _ => None,
        })
        .collect()
}

/// `started ID` and `finished ID` for the tool events, in order.
fn tool_events(events: &Events) -> Vec<String> {
    let events = events.lock().unwrap();
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolExecutionStarted { call, .. } => Some(format!("started {}", call.id)),
            Event::ToolExecutionFinished { call, .. } => Some(format!("finished {}", call.id)),
            _ => None,
        })
        .collect()
}

/// The call id and verdict of every `ToolExecutionFinished`, in order, read
/// from its serialised form (the call's audit record), which holds the
/// result the model is told too.
fn verdicts(events: &Events) -> Vec<(String, String)> {
    let events = events.lock().unwrap();
    events
        .iter()
        .filter_map(|event| {
            let Event::ToolExecutionFinished { result, .. } = event else { return None };
            let record = serde_json::to_value(event).unwrap();
            assert_eq!(record["type"], "tool_execution_finished");
            assert_eq!(record["result"], serde_json::to_value(result).unwrap());
            let field = |value: &serde_json::Value| value.as_str().unwrap().to_owned();
            Some((field(&record["call"]["id"]), field(&record["verdict"])))
        })
        .collect()
}

/// `(id, verdict)` pairs as `verdicts` reads them.
fn pairs<const N: usize>(expected: [(&str, &str); N]) -> Vec<(String, String)> {
    expected.iter().map(|(id, verdict)| ((*id).to_owned(), (*verdict).to_owned())).collect()
}

#[tokio::test]
async fn a_capped_result_is_reported_as_the_model_sees_it() {
    let model =
        ScriptedModel::new().respond(calls([call("l1", "long", json!({}))])).respond(ModelResponse::from_text("done"));
    let (mut tool_loop, events) = recording(long_loop(&model).max_tool_result_chars(5));
    let mut conversation = ask("go");
    tool_loop.run(&mut conversation).await.unwrap();
    let told = results(&conversation);
    assert!(told[0].content.starts_with("xxxxx\n[truncated: the tool returned 50 characters"), "{:?}", told[0]);
    assert_eq!(finished(&events), told);
}

#[tokio::test]
async fn calls_skipped_after_a_stop_are_reported_never_started() {
    let model = ScriptedModel::new().respond(calls([call("u1", "nope", json!({})), call("l2", "long", json!({}))]));
    let (mut tool_loop, events) = recording(long_loop(&model).stop_on_failed_tool());
    let mut conversation = ask("go");
    tool_loop.run(&mut conversation).await.unwrap_err();
    assert_consistent(&conversation);
    assert_eq!(failures(&conversation), [Some(FailureKind::UnknownTool), Some(FailureKind::NotExecuted)]);
    assert_eq!(tool_events(&events), ["started u1", "finished u1", "finished l2"]);
    assert_eq!(finished(&events), results(&conversation));
    assert_eq!(verdicts(&events), pairs([("u1", "allowed"), ("l2", "undecided")]));
}

#[tokio::test]
async fn calls_of_a_truncated_response_are_reported_never_started() {
    let model = ScriptedModel::new()
        .respond(calls([call("l1", "long", json!({}))]).with_stop_reason(StopReason::MaxTokens))
        .respond(ModelResponse::from_text("done"));
    let (mut tool_loop, events) = recording(long_loop(&model));
    let mut conversation = ask("go");
    tool_loop.run(&mut conversation).await.unwrap();
    assert_eq!(failures(&conversation), [Some(FailureKind::Incomplete)]);
    assert_eq!(tool_events(&events), ["finished l1"]);
    assert_eq!(finished(&events), results(&conversation));
    assert_eq!(verdicts(&events), pairs([("l1", "undecided")]));
}

#[tokio::test]
async fn calls_beyond_the_per_iteration_cap_are_reported_never_started() {
    let model = ScriptedModel::new()
        .respond(calls([call("l1", "long", json!({})), call("l2", "long", json!({}))]))
        .respond(ModelResponse::from_text("done"));
    let (mut tool_loop, events) = recording(long_loop(&model).max_tool_calls_per_iteration(1));
    let mut conversation = ask("go");
    tool_loop.run(&mut conversation).await.unwrap();
    assert_eq!(failures(&conversation), [None, Some(FailureKind::TooManyCalls)]);
    assert_eq!(tool_events(&events), ["started l1", "finished l1", "finished l2"]);
    assert_eq!(finished(&events), results(&conversation));
    assert_eq!(verdicts(&events), pairs([("l1", "allowed"), ("l2", "undecided")]));
}

/// Runs a typed agent without reflection; returns its conversation and events.
async fn typed_run(model: ScriptedModel) -> (Conversation, Events) {
    let events = Events::default();
    let seen = Arc::clone(&events);
    let agent = Agent::builder()
        .model(model)
        .output::<Report>()
        .on_event(move |event: &Event| seen.lock().unwrap().push(event.clone()))
        .validator(|report: &Report| if report.title.is_empty() { Err("empty title") } else { Ok(()) })
        .build()
        .unwrap();
    let mut conversation = ask("report");
    agent.run(&mut conversation).await.unwrap();
    (conversation, events)
}

#[tokio::test]
async fn an_output_call_is_reported_with_its_verdict_without_reflection() {
    let (conversation, events) =
        typed_run(ScriptedModel::new().respond(output("o1", "", 5)).respond(output("o2", "T", 5))).await;
    let told = results(&conversation);
    assert!(told[0].content.starts_with("Your output was rejected:"), "{:?}", told[0]);
    assert_eq!(told[1].content, "Output accepted.");
    assert_eq!(finished(&events), told);
    // The verdict comes after the output was proposed.
    let events = events.lock().unwrap();
    let position = |wanted: &dyn Fn(&Event) -> bool| events.iter().position(wanted);
    let proposed = position(&|event| matches!(event, Event::OutputProposed { .. })).unwrap();
    let verdict =
        position(&|event| matches!(event, Event::ToolExecutionFinished { call, .. } if call.id == "o1")).unwrap();
    assert!(proposed < verdict);
}

#[tokio::test]
async fn two_output_calls_in_one_batch_are_each_reported_once() {
    let model = ScriptedModel::new().respond(calls([
        call("o1", "final_output", json!({"title": "A", "score": 5})),
        call("o2", "final_output", json!({"title": "B", "score": 5})),
    ]));
    let (conversation, events) = typed_run(model).await;
    let told = results(&conversation);
    assert_eq!(told[1].content, "Output accepted.");
    let mut streamed = finished(&events);
    streamed.sort_by(|a, b| a.call_id.cmp(&b.call_id));
    assert_eq!(streamed, told);
}

#[tokio::test]
async fn a_call_waiting_for_approval_when_its_batch_stops_is_reported_never_started() {
    let model = ScriptedModel::new().respond(calls([call("l1", "long", json!({})), call("u2", "nope", json!({}))]));
    let governance = toolloop::run::Governance::new().needs_approval("long");
    let (mut tool_loop, events) = recording(long_loop(&model).governance(governance).stop_on_failed_tool());
    let mut conversation = ask("go");
    tool_loop.run(&mut conversation).await.unwrap_err();
    assert_consistent(&conversation);
    assert_eq!(failures(&conversation), [Some(FailureKind::NotExecuted), Some(FailureKind::UnknownTool)]);
    assert_eq!(tool_events(&events), ["started u2", "finished u2", "finished l1"]);
    let mut streamed = finished(&events);
    streamed.sort_by(|a, b| a.call_id.cmp(&b.call_id));
    assert_eq!(streamed, results(&conversation));
    assert_eq!(verdicts(&events), pairs([("u2", "allowed"), ("l1", "undecided")]));
}
