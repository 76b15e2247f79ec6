//! What a run reports and enforces beyond its limits: a cap on tool calls
//! per iteration, the tools used, and (in its events) the models that
//! answered and the views that rewrote another provider's tool calls.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::providers::Fallback;
use toolloop::run::Event;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, ContentBlock, FailureKind, Message, ModelError, ModelResponse, Role, ToolCall};

#[tokio::test]
async fn calls_beyond_the_per_iteration_cap_are_answered_with_an_error_saying_why() {
    let model = ScriptedModel::new()
        .respond(calls([
            call("a", "search", json!({"query": "one"})),
            call("b", "search", json!({"query": "two"})),
            call("c", "search", json!({"query": "three"})),
        ]))
        .respond(ModelResponse::from_text("done"));
    let agent = Agent::builder().model(model.clone()).tool::<Search>().max_tool_calls_per_iteration(2).build().unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.metadata.tool_calls, 2);
    assert_eq!(failures(&conversation), [None, None, Some(FailureKind::TooManyCalls)]);
    let refused = &results(&conversation)[2];
    assert_eq!(refused.call_id, "c");
    assert!(refused.content.contains("at most 2"), "{}", refused.content);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn without_a_cap_every_call_runs() {
    let model = ScriptedModel::new()
        .respond(calls((0..5).map(|n| call(&format!("c{n}"), "search", json!({"query": "q"})))))
        .respond(ModelResponse::from_text("done"));
    let agent = Agent::builder().model(model).tool::<Search>().build().unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.metadata.tool_calls, 5);
}

#[tokio::test]
async fn metadata_names_the_tools_used_and_the_events_the_models_that_answered() {
    let busy = || ModelError::new(ModelErrorKind::Overloaded, "anthropic", "busy");
    let failing = ScriptedModel::new().with_provider("anthropic").fail(busy()).fail(busy()).fail(busy());
    let backup = ScriptedModel::new()
        .with_provider("openai")
        .respond(calls([call("a", "search", json!({"query": "one"})), call("b", "lookup", json!({"key": "k"}))]))
        .respond(calls([call("c", "search", json!({"query": "two"}))]))
        .respond(ModelResponse::from_text("done"));
    let model = Fallback::new(failing).then(backup);
    let (events, recorder) = recorded();
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .tool_with_state::<Lookup>(Db::default())
        .on_event(recorder)
        .build()
        .unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    let used: Vec<(&str, u32)> = done.metadata.tools_used.iter().map(|(name, n)| (name.as_str(), *n)).collect();
    assert_eq!(used, [("lookup", 1), ("search", 2)]);
    // Who answered each model call: the fallback's second model, every time.
    let answered: Vec<_> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            Event::IterationFinished { response, .. } => Some((response.provider.clone(), response.model.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(answered, vec![(Some("openai".to_owned()), Some("scripted".to_owned())); 3]);
    assert_eq!(done.metadata.model_calls, 3);
    // The metadata counts them: the run fell back for every call.
    let models: Vec<(&str, u32)> = done.metadata.models_used.iter().map(|(name, n)| (name.as_str(), *n)).collect();
    assert_eq!(models, [("openai/scripted", 3)]);
}

#[tokio::test]
async fn a_response_that_does_not_say_who_answered_names_the_model_called() {
    // The scripted model's responses name no provider or model.
    let model = ScriptedModel::new().with_provider("ollama").respond(ModelResponse::from_text("hi"));
    let (events, recorder) = recorded();
    let agent = Agent::builder().model(model).on_event(recorder).build().unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    let events = events.lock().unwrap();
    let Some(Event::IterationFinished { response, .. }) =
        events.iter().find(|event| event.name() == "iteration_finished")
    else {
        panic!("no iteration finished: {events:?}");
    };
    assert_eq!((response.provider.as_deref(), response.model.as_deref()), (Some("ollama"), Some("scripted")));
    drop(events);
    assert_eq!(done.metadata.models_used.get("ollama/scripted"), Some(&1), "{:?}", done.metadata.models_used);
}

/// Every event a run reports, and the hook that records them.
fn recorded() -> (Arc<Mutex<Vec<Event>>>, impl Fn(&Event) + Send + Sync + 'static) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    (events, move |event: &Event| sink.lock().unwrap().push(event.clone()))
}

/// The view rewrites a run reported: (attempt, iteration, provider, messages).
fn view_rewrites(events: &Mutex<Vec<Event>>) -> Vec<(u32, u32, String, usize)> {
    let events = events.lock().unwrap();
    let rewrites = events.iter().filter_map(|event| match event {
        Event::ViewRewritten { attempt, iteration, provider, messages } => {
            Some((*attempt, *iteration, provider.clone(), *messages))
        }
        _ => None,
    });
    rewrites.collect()
}

#[tokio::test]
async fn a_view_that_flattens_another_providers_tool_calls_is_reported() {
    let mut conversation = ask("weather?");
    conversation.push(
        Message::new(Role::Assistant, vec![ContentBlock::ToolCall(ToolCall::new("toolu_1", "search", json!({})))])
            .with_provider("anthropic"),
    );
    conversation.push(Message::from_tool_results([toolloop::ToolResult::success("toolu_1", "sunny")]));
    conversation.push_user("and tomorrow?");
    let model = ScriptedModel::new().with_provider("openai").respond(ModelResponse::from_text("rain"));
    let (events, recorder) = recorded();
    let agent = Agent::builder().model(model.clone()).tool::<Search>().on_event(recorder).build().unwrap();
    agent.run(&mut conversation).await.unwrap();
    assert_eq!(view_rewrites(&events), [(1, 1, "openai".to_owned(), 2)]);
    // Reported after its model call started, before it answered.
    let names: Vec<_> = events.lock().unwrap().iter().map(Event::name).collect();
    let at = names.iter().position(|name| *name == "view_rewritten").unwrap();
    assert_eq!(names[at - 1..=at + 1], ["iteration_started", "view_rewritten", "iteration_finished"]);

    // Same provider: nothing rewritten, nothing reported.
    let model = ScriptedModel::new().with_provider("anthropic").respond(ModelResponse::from_text("rain"));
    let (events, recorder) = recorded();
    let agent = Agent::builder().model(model).tool::<Search>().on_event(recorder).build().unwrap();
    conversation.push_user("and the day after?");
    agent.run(&mut conversation).await.unwrap();
    assert!(view_rewrites(&events).is_empty());
    assert!(events.lock().unwrap().iter().any(|event| event.name() == "iteration_finished"));
}

/// Returns a long text.
#[derive(toolloop::Tool)]
struct Dump {
    /// How many characters.
    size: usize,
}

impl Dump {
    #[allow(clippy::unused_async)]
    async fn run(self) -> Result<String, String> {
        Ok("x".repeat(self.size))
    }
}

#[tokio::test]
async fn long_tool_results_are_cut_with_a_marker_the_model_reads() {
    let model = ScriptedModel::new()
        .respond(calls([call("a", "dump", json!({"size": 5000})), call("b", "dump", json!({"size": 10}))]))
        .respond(ModelResponse::from_text("done"));
    let agent = Agent::builder().model(model.clone()).tool::<Dump>().max_tool_result_chars(100).build().unwrap();
    let mut conversation = ask("go");
    agent.run(&mut conversation).await.unwrap();
    let all = results(&conversation);
    assert!(all[0].content.starts_with(&"x".repeat(100)));
    assert!(all[0].content.ends_with("[truncated: the tool returned 5000 characters; only the first 100 are shown]"));
    assert_eq!(all[1].content, "x".repeat(10));
    // The model was sent the cut result.
    assert!(model.requests()[1].last_tool_result().is_some());
    assert!(model.requests()[1].messages.iter().all(|m| m.tool_results().all(|r| r.content.len() < 300)));
}

#[tokio::test]
async fn the_default_cap_is_100_000_characters() {
    assert_eq!(toolloop::run::DEFAULT_MAX_TOOL_RESULT_CHARS, 100_000);
    let model = ScriptedModel::new()
        .respond(calls([call("a", "dump", json!({"size": 150_000}))]))
        .respond(ModelResponse::from_text("done"));
    let agent = Agent::builder().model(model).tool::<Dump>().build().unwrap();
    let mut conversation = ask("go");
    agent.run(&mut conversation).await.unwrap();
    assert!(results(&conversation)[0].content.contains("returned 150000 characters"));
}
