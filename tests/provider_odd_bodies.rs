//! Valid but unusual response bodies, over local servers: repeated or empty
//! tool call ids are made unique before they enter the conversation, and
//! the shapes compatible servers send are accepted.

#![allow(clippy::unused_async)] // tool handlers are async by contract

use serde_json::{Value, json};
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::openai::OpenAi;
use toolloop::{Agent, Conversation, Message, Model, ModelRequest, StopReason, Usage};
use toolloop_workspace::{Reply, TestServer, replies};

/// Echo the word back.
#[derive(toolloop::Tool)]
struct Echo {
    /// The word.
    word: String,
}

impl Echo {
    async fn run(self) -> Result<String, String> {
        Ok(format!("echo {}", self.word))
    }
}

/// The `tool_use` ids and the `tool_result` (id, text) pairs of an Anthropic request.
fn anthropic_ids(body: &Value) -> (Vec<String>, Vec<(String, String)>) {
    let mut uses = Vec::new();
    let mut results = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        for block in message["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") => uses.push(block["id"].as_str().unwrap().to_owned()),
                Some("tool_result") => results.push((
                    block["tool_use_id"].as_str().unwrap().to_owned(),
                    block["content"].as_str().map_or_else(|| block["content"].to_string(), str::to_owned),
                )),
                _ => {}
            }
        }
    }
    (uses, results)
}

fn valid_anthropic_id(id: &str) -> bool {
    !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

async fn run_echo(server: &TestServer) -> Conversation {
    let model = Anthropic::builder().api_key("sk-ant-test").base_url(server.url()).build().unwrap();
    let agent = Agent::builder().model(model).tool::<Echo>().build().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("echo twice");
    agent.run(&mut conversation).await.unwrap();
    assert!(conversation.unanswered_tool_calls().is_empty());
    conversation
}

#[tokio::test]
async fn duplicate_tool_call_ids_are_made_unique_and_each_result_answers_its_call() {
    let server = TestServer::start([
        replies::anthropic::tool_use(&[
            ("dup", "echo", json!({"word": "one"})),
            ("dup", "echo", json!({"word": "two"})),
        ]),
        replies::anthropic::text("done"),
    ])
    .await;
    run_echo(&server).await;
    let (uses, results) = anthropic_ids(&server.requests()[1].json());
    assert_eq!(uses.len(), 2);
    assert_ne!(uses[0], uses[1], "the API requires unique tool_use ids");
    assert!(uses.iter().all(|id| valid_anthropic_id(id)), "{uses:?}");
    // Each result answers its own call, in order.
    assert_eq!(results, [(uses[0].clone(), "echo one".to_owned()), (uses[1].clone(), "echo two".to_owned())]);
}

#[tokio::test]
async fn an_id_reused_from_an_earlier_turn_is_renamed() {
    let server = TestServer::start([
        replies::anthropic::tool_use(&[("call_1", "echo", json!({"word": "one"}))]),
        replies::anthropic::tool_use(&[("call_1", "echo", json!({"word": "two"}))]),
        replies::anthropic::text("done"),
    ])
    .await;
    run_echo(&server).await;
    let (uses, results) = anthropic_ids(&server.requests()[2].json());
    assert_eq!(uses.len(), 2);
    assert_ne!(uses[0], uses[1]);
    assert_eq!(results[1], (uses[1].clone(), "echo two".to_owned()));
}

#[tokio::test]
async fn an_empty_anthropic_id_is_replaced_by_a_valid_one() {
    let server = TestServer::start([
        replies::anthropic::tool_use(&[("", "echo", json!({"word": "one"}))]),
        replies::anthropic::text("done"),
    ])
    .await;
    run_echo(&server).await;
    let (uses, results) = anthropic_ids(&server.requests()[1].json());
    assert!(valid_anthropic_id(&uses[0]), "{uses:?}");
    assert_eq!(results[0].0, uses[0]);
}

async fn complete(model: &dyn Model) -> toolloop::ModelResponse {
    let messages = [Message::user("hi")];
    model.complete(ModelRequest::new(&messages)).await.unwrap()
}

#[tokio::test]
async fn an_anthropic_response_without_usage_or_stop_reason_is_accepted() {
    let server = TestServer::start([
        Reply::json(
            200,
            &json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn"}),
        ),
        Reply::json(
            200,
            &json!({"type": "message", "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {}}]}),
        ),
    ])
    .await;
    let model = Anthropic::builder().api_key("sk-ant-test").base_url(server.url()).build().unwrap();
    let response = complete(&model).await;
    assert_eq!(response.text(), "hello");
    assert_eq!(response.usage, Usage::default());
    let response = complete(&model).await;
    assert_eq!(response.stop_reason, StopReason::ToolUse);
}

fn openai_reply(message: &Value, finish_reason: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "local",
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}),
    )
}

#[tokio::test]
async fn openai_compatible_shapes_are_accepted() {
    let server = TestServer::start([
        // Content as an array of parts, reasoning beside it, llama.cpp's "eos".
        openai_reply(
            &json!({"role": "assistant", "reasoning_content": "thinking...",
                    "content": [{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}]}),
            "eos",
        ),
        // Arguments as an object, a missing id, missing arguments, no `type`.
        openai_reply(
            &json!({"role": "assistant", "content": null, "tool_calls": [
                {"type": "function", "function": {"name": "echo", "arguments": {"word": "hi"}}},
                {"function": {"name": "echo"}}
            ]}),
            "tool_call",
        ),
    ])
    .await;
    let model = OpenAi::builder().base_url(server.url()).build().unwrap();
    let response = complete(&model).await;
    assert_eq!(response.text(), "Hello, world");
    assert_eq!(response.stop_reason, StopReason::EndTurn);

    let response = complete(&model).await;
    let calls: Vec<_> = response.tool_calls().collect();
    assert_eq!(calls[0].input, json!({"word": "hi"}));
    assert_eq!(calls[1].input, json!({}));
    assert!(!calls[0].id.is_empty() && calls[0].id != calls[1].id);
    assert_eq!(response.stop_reason, StopReason::ToolUse);
}
