//! Review of the surface cuts of issue #23 (wave 6): what the cuts moved
//! from `RunMetadata` into events must reach every observer, with the
//! same facts, and what earlier versions saved must still read.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::providers::Fallback;
use toolloop::run::{ContextPolicy, Event};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, ContentBlock, Conversation, Message, ModelError, ModelResponse, Role, ToolCall, ToolResult};

/// Every event a hook sees, and the hook.
fn recorded() -> (Arc<Mutex<Vec<Event>>>, impl Fn(&Event) + Send + Sync + 'static) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    (events, move |event: &Event| sink.lock().unwrap().push(event.clone()))
}

/// Who answered each model call, as the `IterationFinished` events say.
fn answered(events: &[Event]) -> Vec<(Option<String>, Option<String>)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::IterationFinished { response, .. } => Some((response.provider.clone(), response.model.clone())),
            _ => None,
        })
        .collect()
}

/// A conversation whose history holds a tool call `provider` made.
fn with_a_call_from(provider: &str) -> Conversation {
    let mut conversation = ask("weather?");
    conversation.push(
        Message::new(Role::Assistant, vec![ContentBlock::ToolCall(ToolCall::new("toolu_1", "search", json!({})))])
            .with_provider(provider),
    );
    conversation.push(Message::from_tool_results([ToolResult::success("toolu_1", "sunny ".repeat(400))]));
    conversation.push_user("and tomorrow?");
    conversation
}

fn busy() -> ModelError {
    ModelError::new(ModelErrorKind::Overloaded, "anthropic", "busy")
}

/// A run behind a `Fallback` whose first model is down, over a history
/// with another provider's tool calls, compacted ahead of time: a streamed
/// run yields every fact its hooks see, in the same order, and both name
/// the model that answered.
#[tokio::test]
async fn a_streamed_run_sees_what_its_hooks_see_and_who_answered() {
    let down = ScriptedModel::new().with_provider("anthropic").fail(busy()).fail(busy());
    let up = ScriptedModel::new()
        .with_provider("openai")
        .respond(calls([call("c1", "search", json!({"query": "tomorrow"}))]))
        .respond(ModelResponse::from_text("rain"));
    let (hooked, hook) = recorded();
    let agent = Agent::builder()
        .model(Fallback::new(down).then(up))
        .tool::<Search>()
        .context_policy(ContextPolicy::new().window(1_000).trigger(0.1).keep_iterations(1))
        .on_event(hook)
        .build()
        .unwrap();
    let mut conversation = with_a_call_from("gemini");
    let mut stream = agent.run_stream(&mut conversation);
    let mut streamed = Vec::new();
    while let Some(event) = stream.next().await {
        streamed.push(event);
    }
    assert_eq!(stream.output().await.unwrap().output, "rain");
    let facts = |events: &[Event]| -> Vec<String> {
        events
            .iter()
            .filter(|event| !event.name().ends_with("_delta") && event.name() != "tool_call_started")
            .filter(|event| event.name() != "tool_call_written")
            .map(|event| serde_json::to_string(event).unwrap())
            .collect()
    };
    let hooked = hooked.lock().unwrap().clone();
    assert_eq!(facts(&streamed), facts(&hooked));
    let names: Vec<_> = hooked.iter().map(Event::name).collect();
    assert!(names.contains(&"view_rewritten") && names.contains(&"compacted"), "{names:?}");
    let expected = vec![(Some("openai".to_owned()), Some("scripted".to_owned())); 2];
    assert_eq!(answered(&streamed), expected);
    assert_eq!(answered(&hooked), expected);
}

/// A sub-run's model calls name who answered, in the parent's hooks.
#[tokio::test]
async fn a_sub_runs_events_name_who_answered() {
    let inner = ScriptedModel::new().with_provider("ollama").respond(ModelResponse::from_text("found"));
    let researcher = Agent::builder().name("researcher").model(inner).build().unwrap();
    let outer = ScriptedModel::new()
        .respond(calls([call("r1", "research", json!({"prompt": "look"}))]))
        .respond(ModelResponse::from_text("done"));
    let (hooked, hook) = recorded();
    let agent = Agent::builder()
        .model(outer)
        .tool_dyn(researcher.as_tool("research", "Research.").into())
        .on_event(hook)
        .build()
        .unwrap();
    agent.run(&mut ask("go")).await.unwrap();
    let nested: Vec<Event> = hooked
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            Event::SubRun { event, .. } => Some((**event).clone()),
            _ => None,
        })
        .collect();
    assert_eq!(answered(&nested), [(Some("ollama".to_owned()), Some("scripted".to_owned()))]);
}

/// The view rewrites a run reported: (provider, messages).
fn view_rewrites(events: &[Event]) -> Vec<(String, usize)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ViewRewritten { provider, messages, .. } => Some((provider.clone(), *messages)),
            _ => None,
        })
        .collect()
}

/// Behind a `Fallback`, `ViewRewritten` is about the view the model that
/// answered was sent, as `IterationFinished` names that model: the first
/// model is down, the second answers.
#[tokio::test]
async fn behind_a_fallback_the_view_rewrite_reported_is_the_answering_models() {
    // Gemini takes other providers' tool calls as they are; OpenAI is sent
    // Anthropic's as text. Gemini is down: OpenAI answers, from text.
    let down = ScriptedModel::new().with_provider("gemini").fail(busy());
    let up = ScriptedModel::new().with_provider("openai").respond(ModelResponse::from_text("rain"));
    let (hooked, hook) = recorded();
    let agent =
        Agent::builder().model(Fallback::new(down).then(up.clone())).tool::<Search>().on_event(hook).build().unwrap();
    agent.run(&mut with_a_call_from("anthropic")).await.unwrap();
    assert!(up.requests()[0].messages.iter().all(|message| message.tool_calls().next().is_none()));
    let events = hooked.lock().unwrap().clone();
    assert_eq!(answered(&events), [(Some("openai".to_owned()), Some("scripted".to_owned()))]);
    assert_eq!(view_rewrites(&events), [("openai".to_owned(), 2)], "OpenAI was sent Anthropic's tool call as text");

    // The other way round: Anthropic is down, Gemini answers with OpenAI's
    // tool calls as tool calls; nothing was rewritten for it.
    let down = ScriptedModel::new().with_provider("anthropic").fail(busy());
    let up = ScriptedModel::new().with_provider("gemini").respond(ModelResponse::from_text("rain"));
    let (hooked, hook) = recorded();
    let agent =
        Agent::builder().model(Fallback::new(down).then(up.clone())).tool::<Search>().on_event(hook).build().unwrap();
    agent.run(&mut with_a_call_from("openai")).await.unwrap();
    assert!(up.requests()[0].messages.iter().any(|message| message.tool_calls().next().is_some()));
    let events = hooked.lock().unwrap().clone();
    assert_eq!(answered(&events), [(Some("gemini".to_owned()), Some("scripted".to_owned()))]);
    assert_eq!(view_rewrites(&events), [], "Gemini was sent OpenAI's tool call as a tool call");
}
