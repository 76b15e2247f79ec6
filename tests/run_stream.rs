//! Streamed runs: the events of a run in order, provisional deltas
//! discarded when a model call fails part-way, and the property that a
//! streamed run and a non-streamed one of the same script end the same.

mod common;

use common::*;
use futures_util::StreamExt as _;
use proptest::prelude::*;
use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::run::Event;
use toolloop::stream::RunStream;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, ModelError, ModelResponse, RunError, RunOutput, StopReason, ToolCall, Usage};

/// Every event of a streamed run but the last (`RunFinished`, with the
/// result's termination), and its result.
async fn collect<T>(mut stream: RunStream<'_, T>) -> (Vec<Event>, Result<RunOutput<T>, RunError>) {
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    let Some(Event::RunFinished { termination }) = events.pop() else { panic!("the last event is `RunFinished`") };
    let result = stream.output().await;
    let ended = match &result {
        Ok(done) => &done.metadata.termination,
        Err(error) => error.termination(),
    };
    assert_eq!(&termination, ended);
    (events, result)
}

fn names(events: &[Event]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = events.iter().map(Event::name).collect();
    names.dedup();
    names
}

#[tokio::test]
async fn a_typed_run_streams_its_tool_calls_forming_running_and_its_output() {
    let model = ScriptedModel::new()
        .with_chunk_size(4)
        .respond(calls([call("s1", "search", json!({"query": "rust streams"}))]).with_usage(usage(10, 3)))
        .respond(output("o1", "Streams", 7).with_usage(usage(20, 5)));
    let agent = Agent::builder().model(model).tool::<Search>().output::<Report>().build().unwrap();
    let mut conversation = ask("report");
    let (events, result) = collect(agent.run_stream(&mut conversation)).await;
    let done = result.unwrap();
    assert_eq!(done.output.title, "Streams");
    assert_eq!(done.metadata.usage, Usage::new(30, 8));
    // The output forms as its tool's arguments do (`output_delta` after
    // each of the output call's argument deltas), and only from that call.
    let outputs: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            Event::OutputDelta { attempt: 1, partial } => Some(partial.clone()),
            _ => None,
        })
        .collect();
    assert!(outputs.contains(&json!({"title": "Stream"})), "{outputs:?}");
    assert!(outputs.iter().all(|partial| partial.get("query").is_none()), "{outputs:?}");
    let without_outputs: Vec<_> = events.iter().filter(|event| event.name() != "output_delta").collect();
    let mut shown: Vec<&'static str> = without_outputs.iter().map(|event| event.name()).collect();
    shown.dedup();
    assert_eq!(
        shown,
        [
            "attempt_started",
            "iteration_started",
            "tool_call_started",
            "tool_call_arguments_delta",
            "tool_call_written",
            "iteration_finished",
            "tool_execution_started",
            "tool_execution_finished",
            "iteration_started",
            "tool_call_started",
            "tool_call_arguments_delta",
            "tool_call_written",
            "iteration_finished",
            // The output tool's call is answered by the agent, proposed, and
            // its result event carries the verdict on it.
            "tool_execution_started",
            "output_proposed",
            "tool_execution_finished",
        ]
    );
    // The arguments form: each partial value is the arguments so far.
    let partials: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            Event::ToolCallArgumentsDelta { partial: Some(partial), .. } => Some(partial.clone()),
            _ => None,
        })
        .collect();
    assert!(partials.contains(&json!({"query": "rust s"})), "{partials:?}");
    assert!(partials.contains(&json!({"title": "Stream"})), "the output forming: {partials:?}");
    assert!(partials.contains(&json!({"query": "rust streams"})));
    assert!(events.iter().any(|event| matches!(event,
        Event::ToolExecutionFinished { result, .. } if result.call_id == "s1" && result.failure.is_none())));
    assert!(events.iter().any(|event| matches!(event,
        Event::OutputProposed { attempt: 1, input } if input["title"] == "Streams")));
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_failure_mid_stream_discards_the_deltas_and_ends_the_run_with_the_error() {
    let error = ModelError::new(ModelErrorKind::Connection, "test", "connection reset");
    let model =
        ScriptedModel::new().with_chunk_size(2).fail_mid_stream(ModelResponse::from_text("partial answer"), 4, error);
    let agent = Agent::builder().model(model).build().unwrap();
    let mut conversation = ask("hi");
    let (events, result) = collect(agent.run_stream(&mut conversation)).await;
    assert_eq!(names(&events), ["attempt_started", "iteration_started", "text_delta", "model_call_discarded"]);
    let error = result.unwrap_err();
    assert_eq!(error.metadata().model_calls, 1);

    // The usage a call reported before failing comes with the discard.
    let response = ModelResponse::from_text("ok").with_usage(usage(12, 3));
    let events = toolloop::testing::chunk_response(&response, 64);
    let before_finish = events.len() - 1;
    let model = ScriptedModel::new().fail_mid_stream(
        response,
        before_finish,
        ModelError::new(ModelErrorKind::Connection, "test", "reset"),
    );
    let agent = Agent::builder().model(model).build().unwrap();
    let (events, _) = collect(agent.run_stream(&mut ask("hi"))).await;
    let discarded = events.iter().find_map(|event| match event {
        Event::ModelCallDiscarded { usage, .. } => Some(*usage),
        _ => None,
    });
    assert_eq!(discarded, Some(usage(12, 3)));
    // Nothing provisional reached the conversation.
    assert_eq!(conversation.messages().len(), 1);
}

#[tokio::test]
async fn the_submit_result_event_carries_the_verdict_the_model_was_told() {
    let model = ScriptedModel::new()
        .respond(output("o1", "", 5))
        .respond(submit("x1"))
        .respond(output("o2", "T", 5))
        .respond(submit("x2"));
    let agent = Agent::builder()
        .model(model)
        .output::<Report>()
        .reflection(|report: &Report| format!("preview {}", report.title))
        .validator(|report: &Report| if report.title.is_empty() { Err("empty title") } else { Ok(()) })
        .build()
        .unwrap();
    let mut conversation = ask("report");
    let (events, result) = collect(agent.run_stream(&mut conversation)).await;
    assert_eq!(result.unwrap().output.title, "T");
    let told = results(&conversation);
    let streamed: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            Event::ToolExecutionFinished { result, .. } => Some(result.clone()),
            _ => None,
        })
        .collect();
    // One result event per call, each exactly what the conversation holds.
    assert_eq!(streamed, told);
    let submits: Vec<_> = streamed.iter().filter(|result| result.call_id.starts_with('x')).collect();
    assert!(submits[0].content.starts_with("Your output was rejected:"), "{:?}", submits[0]);
    assert_eq!(submits[1].content, "Output accepted.");
    // The verdict comes after the output was proposed.
    let position = |wanted: &dyn Fn(&Event) -> bool| events.iter().position(wanted);
    let proposed = position(&|event| matches!(event, Event::OutputProposed { .. })).unwrap();
    let verdict =
        position(&|event| matches!(event, Event::ToolExecutionFinished { call, .. } if call.id == "x1")).unwrap();
    assert!(proposed < verdict);
}

#[derive(Clone, Debug)]
enum Step {
    Text,
    Calls(Vec<u8>),
    Output(u32),
    Fail,
    FailMidStream(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => Just(Step::Text),
        4 => prop::collection::vec(0u8..4, 1..4).prop_map(Step::Calls),
        2 => (0u32..12).prop_map(Step::Output),
        1 => Just(Step::Fail),
        1 => (0usize..6).prop_map(Step::FailMidStream),
    ]
}

fn script(steps: &[(Step, u64)], chunk: usize) -> ScriptedModel {
    let mut model = ScriptedModel::new().with_chunk_size(chunk);
    for (index, (step, tokens)) in steps.iter().enumerate() {
        let usage = Usage::new(*tokens, tokens / 2);
        model = match step {
            Step::Text => model.respond(ModelResponse::from_text("the answer").with_usage(usage)),
            Step::Calls(kinds) => model.respond(
                ModelResponse::from_tool_calls(kinds.iter().enumerate().map(|(i, kind)| {
                    let id = format!("c{index}_{i}");
                    match kind {
                        0 => ToolCall::new(id, "search", json!({"query": "q"})),
                        1 => ToolCall::new(id, "lookup", json!({"key": "missing"})),
                        2 => ToolCall::new(id, "nope", json!({})),
                        _ => ToolCall::new(id, "search", json!({"query": 3})),
                    }
                }))
                .with_usage(usage),
            ),
            Step::Output(score) => model.respond(output(&format!("o{index}"), "t", *score).with_usage(usage)),
            Step::Fail => model.fail(ModelError::new(ModelErrorKind::Server, "test", "boom")),
            Step::FailMidStream(after) => model.fail_mid_stream(
                ModelResponse::from_text("cut short").with_usage(usage).with_stop_reason(StopReason::EndTurn),
                *after,
                ModelError::new(ModelErrorKind::Connection, "test", "reset"),
            ),
        };
    }
    model
}

/// What must agree: the conversation, the output (or error), and the
/// metadata but for elapsed time.
fn summary<T: std::fmt::Debug>(result: Result<RunOutput<T>, RunError>) -> String {
    match result {
        Ok(mut done) => {
            done.metadata.elapsed = std::time::Duration::ZERO;
            format!("ok {:?} {:?}", done.output, done.metadata)
        }
        Err(error) => {
            let mut metadata = error.metadata().clone();
            metadata.elapsed = std::time::Duration::ZERO;
            format!("err {error} {:?} {metadata:?}", error.attempt_failures())
        }
    }
}

async fn same_run(steps: Vec<(Step, u64)>, typed: bool, chunk: usize) {
    let build = || {
        Agent::builder()
            .model(script(&steps, chunk))
            .tool::<Search>()
            .tool_with_state::<Lookup>(Db::default())
            .max_iterations(4)
    };
    let (plain, streamed) = if typed {
        let agent = build().output::<Report>().max_attempts(2).build().unwrap();
        let mut plain = ask("go");
        let result = summary(agent.run(&mut plain).await);
        let agent = build().output::<Report>().max_attempts(2).build().unwrap();
        let mut streamed = ask("go");
        let (_, streamed_result) = collect(agent.run_stream(&mut streamed)).await;
        ((plain, result), (streamed, summary(streamed_result)))
    } else {
        let agent = build().build().unwrap();
        let mut plain = ask("go");
        let result = summary(agent.run(&mut plain).await);
        let agent = build().build().unwrap();
        let mut streamed = ask("go");
        let (_, streamed_result) = collect(agent.run_stream(&mut streamed)).await;
        ((plain, result), (streamed, summary(streamed_result)))
    };
    assert_eq!(plain.1, streamed.1);
    assert_eq!(plain.0.messages(), streamed.0.messages());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn streamed_and_non_streamed_runs_end_the_same(
        steps in prop::collection::vec((step(), 0u64..100), 0..7),
        typed in any::<bool>(),
        chunk in 1usize..9,
    ) {
        tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(same_run(steps, typed, chunk));
    }
}

/// Streams one text delta, then nothing more.
struct StallsAfterDelta;

impl toolloop::Model for StallsAfterDelta {
    fn provider(&self) -> &'static str {
        "test"
    }
    fn name(&self) -> &'static str {
        "stalls"
    }
    fn complete<'a>(
        &'a self,
        _: toolloop::ModelRequest<'a>,
    ) -> toolloop::model::BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(std::future::pending())
    }
    fn stream<'a>(
        &'a self,
        _: toolloop::ModelRequest<'a>,
    ) -> toolloop::model::BoxStream<'a, Result<toolloop::model::StreamEvent, ModelError>> {
        let delta = toolloop::model::StreamEvent::TextDelta { index: 0, text: "Hel".into() };
        Box::pin(futures_util::stream::iter([Ok(delta)]).chain(futures_util::stream::pending()))
    }
}

#[tokio::test]
async fn cancelling_mid_delta_ends_the_run_cancelled_with_nothing_provisional_kept() {
    let cancel = toolloop::CancellationToken::new();
    let agent = Agent::builder().model(StallsAfterDelta).cancel_token(cancel.clone()).build().unwrap();
    let mut conversation = ask("hi");
    let mut stream = agent.run_stream(&mut conversation);
    let mut discarded = false;
    while let Some(event) = stream.next().await {
        match event {
            Event::TextDelta { .. } => cancel.cancel(),
            Event::ModelCallDiscarded { .. } => discarded = true,
            _ => {}
        }
    }
    let result = stream.output().await;
    assert!(discarded, "the delta shown is to be dropped");
    let error = result.unwrap_err();
    assert!(matches!(error.termination(), toolloop::run::Termination::Cancelled { .. }), "{error}");
    assert_eq!(conversation.messages().len(), 1);
}

#[tokio::test]
async fn cancelling_mid_tool_answers_every_call() {
    let cancel = toolloop::CancellationToken::new();
    let model = ScriptedModel::new().respond(calls([call("w1", "wait", json!({"millis": 60_000, "label": "late"}))]));
    let agent = Agent::builder()
        .model(model)
        .tool_with_state::<Wait>(Gauge::default())
        .cancel_token(cancel.clone())
        .build()
        .unwrap();
    let mut conversation = ask("wait");
    let (events, result) = {
        let mut stream = agent.run_stream(&mut conversation);
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            match event {
                Event::ToolExecutionStarted { .. } => cancel.cancel(),
                other => events.push(other.name()),
            }
        }
        (events, stream.output().await)
    };
    assert!(events.contains(&"tool_execution_finished"), "{events:?}");
    assert!(result.is_err());
    assert_consistent(&conversation);
}

#[tokio::test]
async fn dropping_the_stream_mid_tool_stops_the_run() {
    let gauge = Gauge::default();
    let model = ScriptedModel::new().respond(calls([call("w1", "wait", json!({"millis": 60_000, "label": "late"}))]));
    let agent = Agent::builder().model(model).tool_with_state::<Wait>(gauge.clone()).build().unwrap();
    let mut conversation = ask("wait");
    let mut stream = agent.run_stream(&mut conversation);
    while let Some(event) = stream.next().await {
        if matches!(event, Event::ToolExecutionStarted { .. }) {
            break;
        }
    }
    drop(stream);
    // The tool's future was dropped with the run: it never finished.
    assert_eq!(gauge.finished.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(conversation.messages().len(), 1, "no half-answered batch is kept");
}

#[tokio::test]
async fn a_submit_cut_by_a_stop_in_its_batch_still_gets_its_result_event() {
    // One batch: the output, `submit`, then two searches, the second past
    // the execution limit: the run stops before any verdict settles `submit`.
    let model = ScriptedModel::new().respond(calls([
        call("o1", "final_output", json!({"title": "T", "score": 5})),
        call("x1", "submit", json!({})),
        call("s1", "search", json!({"query": "rust"})),
        call("s2", "search", json!({"query": "go"})),
    ]));
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .max_tool_executions(1)
        .output::<Report>()
        .reflection(|report: &Report| format!("preview {}", report.title))
        .build()
        .unwrap();
    let mut conversation = ask("report");
    let (events, result) = collect(agent.run_stream(&mut conversation)).await;
    assert!(result.is_err(), "the execution limit ends the run");
    assert_consistent(&conversation);
    let streamed: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            Event::ToolExecutionFinished { result, .. } => Some(result.clone()),
            _ => None,
        })
        .collect();
    // Every call has its one result event, what the conversation holds.
    assert_eq!(streamed.iter().filter(|result| result.call_id == "x1").count(), 1, "{streamed:?}");
    let told = results(&conversation);
    let submit_told = told.iter().find(|result| result.call_id == "x1").unwrap();
    let submit_streamed = streamed.iter().find(|result| result.call_id == "x1").unwrap();
    assert_eq!(submit_streamed, submit_told);
}

#[tokio::test]
async fn a_run_refused_before_it_starts_still_streams_run_finished_last() {
    use toolloop::run::{Resolution, Termination};
    let agent = Agent::builder().model(ScriptedModel::new()).build().unwrap();
    // Nothing to answer.
    let mut empty = toolloop::Conversation::new();
    let (events, result) = collect(agent.run_stream(&mut empty)).await;
    assert!(events.is_empty(), "{events:?}");
    assert!(matches!(result.unwrap_err().termination(), Termination::NothingToAnswer));
    // A resume of a run that paused on nothing.
    let mut conversation = ask("hi");
    let (events, result) = collect(agent.resume_stream(&mut conversation, [("x", Resolution::Approve)])).await;
    assert!(events.is_empty(), "{events:?}");
    assert!(result.is_err());
}
