//! `ToolExecutionFinished` is the one record of every call: it carries
//! exactly the result the conversation holds (what the model is told),
//! capped results, calls that never ran and validated outputs included.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use serde_json::json;
use toolloop::run::{Event, ToolLoop};
use toolloop::testing::ScriptedModel;
use toolloop::{ModelResponse, ToolResult, ToolSet};

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
