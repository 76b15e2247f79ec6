//! A hand-driven tool loop over HTTP for every provider: the model asks for
//! two tools in parallel, both run through a `ToolSet`, the results go back
//! in the next request paired with their calls, and the model answers. This
//! is the wire-level half of an agent run; the agent adds only its loop.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::convert::Infallible;

use serde_json::{Value, json};
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::OpenAi;
use toolloop::{CancellationToken, Conversation, Message, Model, ModelRequest, StopReason, Tool, ToolSet, Usage};
use toolloop_workspace::{TestServer, replies};

/// Add two numbers.
#[derive(Tool)]
struct Add {
    a: i64,
    b: i64,
}

impl Add {
    async fn run(self) -> Result<i64, Infallible> {
        Ok(self.a + self.b)
    }
}

/// Runs model calls and tool batches until the model answers with text;
/// returns the answer and the summed usage.
async fn run(model: &dyn Model, conversation: &mut Conversation) -> (String, Usage, usize) {
    let mut tools = ToolSet::new();
    tools.add::<Add>().unwrap();
    let cancel = CancellationToken::new();
    let mut usage = Usage::default();
    for calls in 1.. {
        let view = conversation.view_for(model.provider());
        let response = model.complete(ModelRequest::new(&view).with_tools(tools.definitions())).await.unwrap();
        usage += response.usage;
        conversation.push(response.to_message(model.provider()));
        if !response.has_tool_calls() {
            assert_eq!(response.stop_reason, StopReason::EndTurn);
            return (response.text(), usage, calls);
        }
        let mut results = Vec::new();
        for call in response.tool_calls() {
            results.push(tools.execute(call, &cancel).await.unwrap().result);
        }
        conversation.push(Message::from_tool_results(results));
    }
    unreachable!()
}

fn start() -> Conversation {
    let mut conversation = Conversation::new();
    conversation.push_user("What are 1+2 and 3+4?");
    conversation
}

fn assert_finished(conversation: &Conversation, answer: &str, usage: Usage, calls: usize, provider: &str) {
    assert_eq!((answer, usage, calls), ("3 and 7.", Usage::new(20, 10), 2));
    assert!(conversation.unanswered_tool_calls().is_empty());
    assert_eq!(conversation.messages()[1].provider.as_deref(), Some(provider));
    let results: Vec<&str> = conversation.messages()[2].tool_results().map(|r| r.content.as_str()).collect();
    assert_eq!(results, ["3", "7"]);
}

#[tokio::test]
async fn anthropic_tool_round_trip() {
    let server = TestServer::start([
        replies::anthropic::tool_use(&[
            ("toolu_1", "add", json!({"a": 1, "b": 2})),
            ("toolu_2", "add", json!({"a": 3, "b": 4})),
        ]),
        replies::anthropic::text("3 and 7."),
    ])
    .await;
    let model = Anthropic::builder().api_key("k").base_url(server.url()).build().unwrap();
    let mut conversation = start();
    let (answer, usage, calls) = run(&model, &mut conversation).await;
    assert_finished(&conversation, &answer, usage, calls, "anthropic");
    let second = server.requests()[1].json();
    assert_eq!(
        second["messages"][2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"},
            // The moving cache breakpoint ends the conversation.
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "7", "cache_control": {"type": "ephemeral"}}
        ])
    );
}

#[tokio::test]
async fn openai_tool_round_trip() {
    let server = TestServer::start([
        replies::openai::tool_calls(&[("call_1", "add", r#"{"a":1,"b":2}"#), ("call_2", "add", r#"{"a":3,"b":4}"#)]),
        replies::openai::text("3 and 7."),
    ])
    .await;
    let model = OpenAi::builder().api_key("k").base_url(server.url()).build().unwrap();
    let mut conversation = start();
    let (answer, usage, calls) = run(&model, &mut conversation).await;
    assert_finished(&conversation, &answer, usage, calls, "openai");
    let messages = server.requests()[1].json()["messages"].clone();
    let tail: Vec<Value> = messages.as_array().unwrap()[2..].to_vec();
    assert_eq!(
        tail,
        [
            json!({"role": "tool", "tool_call_id": "call_1", "content": "3"}),
            json!({"role": "tool", "tool_call_id": "call_2", "content": "7"})
        ]
    );
}

#[tokio::test]
async fn ollama_tool_round_trip() {
    let server = TestServer::start([
        replies::ollama::tool_calls(&[("add", json!({"a": 1, "b": 2})), ("add", json!({"a": 3, "b": 4}))]),
        replies::ollama::text("3 and 7."),
    ])
    .await;
    let model = Ollama::builder().base_url(server.url()).build().unwrap();
    let mut conversation = start();
    let (answer, usage, calls) = run(&model, &mut conversation).await;
    assert_finished(&conversation, &answer, usage, calls, "ollama");
    let messages = server.requests()[1].json()["messages"].clone();
    let tail: Vec<Value> = messages.as_array().unwrap()[2..].to_vec();
    assert_eq!(
        tail,
        [
            json!({"role": "tool", "content": "3", "tool_name": "add"}),
            json!({"role": "tool", "content": "7", "tool_name": "add"})
        ]
    );
}
