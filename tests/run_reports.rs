//! What a run reports and enforces beyond its limits: a cap on tool calls
//! per iteration, the tools used and the models that answered, and the
//! views that rewrote another provider's tool calls.

mod common;

use common::*;
use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::providers::Fallback;
use toolloop::run::AnsweredBy;
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
async fn metadata_names_the_tools_used_and_the_models_that_answered() {
    let busy = || ModelError::new(ModelErrorKind::Overloaded, "anthropic", "busy");
    let failing = ScriptedModel::new().with_provider("anthropic").fail(busy()).fail(busy()).fail(busy());
    let backup = ScriptedModel::new()
        .with_provider("openai")
        .respond(calls([call("a", "search", json!({"query": "one"})), call("b", "lookup", json!({"key": "k"}))]))
        .respond(calls([call("c", "search", json!({"query": "two"}))]))
        .respond(ModelResponse::from_text("done"));
    let model = Fallback::new(failing).then(backup);
    let agent =
        Agent::builder().model(model).tool::<Search>().tool_with_state::<Lookup>(Db::default()).build().unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    let used: Vec<(&str, u32)> = done.metadata.tools_used.iter().map(|(name, n)| (name.as_str(), *n)).collect();
    assert_eq!(used, [("lookup", 1), ("search", 2)]);
    assert_eq!(done.metadata.answered_by.len(), 3);
    assert!(done.metadata.answered_by.iter().all(|by| by.provider == "openai" && by.model == "scripted"));
    let _: &AnsweredBy = &done.metadata.answered_by[0];
}

#[tokio::test]
async fn a_view_that_flattens_another_providers_tool_calls_is_recorded() {
    let mut conversation = ask("weather?");
    conversation.push(
        Message::new(Role::Assistant, vec![ContentBlock::ToolCall(ToolCall::new("toolu_1", "search", json!({})))])
            .with_provider("anthropic"),
    );
    conversation.push(Message::from_tool_results([toolloop::ToolResult::success("toolu_1", "sunny")]));
    conversation.push_user("and tomorrow?");
    let model = ScriptedModel::new().with_provider("openai").respond(ModelResponse::from_text("rain"));
    let agent = Agent::builder().model(model.clone()).tool::<Search>().build().unwrap();
    let done = agent.run(&mut conversation).await.unwrap();
    let rewrites = &done.metadata.view_rewrites;
    assert_eq!(rewrites.len(), 1, "{rewrites:?}");
    assert_eq!((rewrites[0].model_call, rewrites[0].provider.as_str(), rewrites[0].messages), (1, "openai", 2));

    // Same provider: nothing rewritten, nothing recorded.
    let model = ScriptedModel::new().with_provider("anthropic").respond(ModelResponse::from_text("rain"));
    let agent = Agent::builder().model(model).tool::<Search>().build().unwrap();
    conversation.push_user("and the day after?");
    let done = agent.run(&mut conversation).await.unwrap();
    assert!(done.metadata.view_rewrites.is_empty());
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
