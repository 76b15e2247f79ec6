//! Ollama `/api/chat` over a local server: the exact request sent for a
//! conversation with text, parallel tool calls and tool results (one an
//! error), the response parsed back with synthesised call ids, error bodies,
//! and arguments that do not fit the tool fed back and corrected.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::convert::Infallible;
use std::time::Duration;

use serde_json::{Value, json};
use toolloop::model::ModelErrorKind;
use toolloop::providers::RetryPolicy;
use toolloop::providers::ollama::Ollama;
use toolloop::{
    CancellationToken, ContentBlock, Conversation, FailureKind, Message, Model, ModelRequest, Role, StopReason, Tool,
    ToolCall, ToolResult, ToolSet, Usage,
};
use toolloop_workspace::{Reply, TestServer};

/// Current weather for a city.
#[derive(Tool)]
struct Weather {
    /// The city.
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("{}: 20°C", self.city))
    }
}

fn model(server: &TestServer) -> Ollama {
    Ollama::builder()
        .base_url(server.url())
        .model("llama-test")
        .temperature(0.5)
        .retry_policy(RetryPolicy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn reply(message: &Value, done_reason: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "model": "llama-test", "created_at": "2026-01-01T00:00:00.000000001Z",
            "message": message, "done_reason": done_reason, "done": true,
            "total_duration": 1, "load_duration": 1, "prompt_eval_count": 120, "prompt_eval_duration": 1,
            "eval_count": 40, "eval_duration": 1
        }),
    )
}

fn conversation() -> Conversation {
    let mut conversation = Conversation::new();
    conversation.push_user("Weather in Paris and Rome?");
    conversation.push(
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::text("Checking both."),
                ContentBlock::ToolCall(ToolCall::new("call_a", "weather", json!({"city": "Paris"}))),
                ContentBlock::ToolCall(ToolCall::new("call_b", "weather", json!({"city": "Rome"}))),
            ],
        )
        .with_provider("ollama"),
    );
    conversation.push(Message::from_tool_results([
        ToolResult::success("call_a", "18°C and sunny"),
        ToolResult::failure("call_b", FailureKind::ToolFailed, "station offline"),
    ]));
    conversation.push_user("Also Oslo, please.");
    conversation
}

#[tokio::test]
async fn the_request_is_exactly_the_chat_api_shape_and_the_response_parses_back() {
    let server = TestServer::start([reply(
        &json!({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "weather", "arguments": {"city": "Oslo"}}},
            {"function": {"name": "weather", "arguments": {"city": "Rome"}}}
        ]}),
        "stop",
    )])
    .await;
    let model = model(&server);
    let conversation = conversation();
    let tools = [Weather::definition().clone()];
    let view = conversation.view_for(model.provider());
    let request = ModelRequest::new(&view).with_system("Be brief.").with_tools(&tools).with_max_tokens(1024);
    let response = model.complete(request).await.unwrap();

    let sent = &server.requests()[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/api/chat"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "llama-test",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris and Rome?"},
                {"role": "assistant", "content": "Checking both.", "tool_calls": [
                    {"function": {"name": "weather", "arguments": {"city": "Paris"}}},
                    {"function": {"name": "weather", "arguments": {"city": "Rome"}}}
                ]},
                {"role": "tool", "content": "18°C and sunny", "tool_name": "weather"},
                {"role": "tool", "content": "Error: station offline", "tool_name": "weather"},
                {"role": "user", "content": "Also Oslo, please."}
            ],
            "tools": [{"type": "function", "function": {
                "name": "weather",
                "description": "Current weather for a city.",
                "parameters": Weather::definition().input_schema
            }}],
            "stream": false,
            "truncate": false,
            "options": {"temperature": 0.5, "num_predict": 1024}
        })
    );

    let calls: Vec<&ToolCall> = response.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!((calls[0].name.as_str(), &calls[0].input), ("weather", &json!({"city": "Oslo"})));
    assert_eq!((calls[1].name.as_str(), &calls[1].input), ("weather", &json!({"city": "Rome"})));
    // Ollama sent no ids: each call got its own, and its result can answer it.
    assert!(calls[0].id.starts_with("call_") && calls[0].id != calls[1].id);
    assert_eq!(response.content.len(), 2, "an empty text is not a block");
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.usage, Usage::new(120, 40));
    assert_eq!(response.provider.as_deref(), Some("ollama"));
}

#[tokio::test]
async fn text_answers_ids_from_the_server_and_error_bodies() {
    let server = TestServer::start([
        reply(&json!({"role": "assistant", "content": "Sunny."}), "stop"),
        reply(
            &json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_srv", "function": {"index": 0, "name": "weather", "arguments": {"city": "Oslo"}}}]}),
            "stop",
        ),
        reply(&json!({"role": "assistant", "content": "It was"}), "length"),
        Reply::json(404, &json!({"error": "model \"llama-test\" not found, try pulling it first"})),
        Reply::json(400, &json!({"error": "llama-test does not support tools"})),
    ])
    .await;
    let model = model(&server);
    let messages = [Message::user("hi")];
    let call = || model.complete(ModelRequest::new(&messages));
    let text = call().await.unwrap();
    assert_eq!((text.text().as_str(), &text.stop_reason), ("Sunny.", &StopReason::EndTurn));
    assert_eq!(call().await.unwrap().tool_calls().next().unwrap().id, "call_srv");
    assert_eq!(call().await.unwrap().stop_reason, StopReason::MaxTokens);
    let error = call().await.unwrap_err();
    assert_eq!(
        (error.kind(), error.message()),
        (ModelErrorKind::NotFound, "model \"llama-test\" not found, try pulling it first")
    );
    let error = call().await.unwrap_err();
    assert_eq!((error.kind(), error.message()), (ModelErrorKind::InvalidRequest, "llama-test does not support tools"));
}

#[tokio::test]
async fn arguments_that_do_not_fit_the_tool_are_fed_back_and_corrected() {
    let server = TestServer::start([
        reply(
            &json!({"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "weather", "arguments": {"city": 42}}}]}),
            "stop",
        ),
        reply(
            &json!({"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "weather", "arguments": {"city": "Oslo"}}}]}),
            "stop",
        ),
    ])
    .await;
    let model = model(&server);
    let mut tools = ToolSet::new();
    tools.add::<Weather>().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Weather in Oslo?");
    let cancel = CancellationToken::new();

    let mut results = Vec::new();
    for _ in 0..2 {
        let view = conversation.view_for(model.provider());
        let response = model.complete(ModelRequest::new(&view).with_tools(tools.definitions())).await.unwrap();
        conversation.push(response.to_message(model.provider()));
        let call = response.tool_calls().next().unwrap().clone();
        let execution = tools.execute(&call, &cancel).await.unwrap();
        results.push(execution.result.clone());
        conversation.push(Message::from_tool_results([execution.result]));
    }
    assert_eq!(results[0].failure, Some(FailureKind::InvalidArguments));
    assert!(results[0].content.contains("city"), "{}", results[0].content);
    assert_eq!(results[1].content, "Oslo: 20°C");
    assert!(results[1].failure.is_none());
    assert_ne!(results[0].call_id, results[1].call_id, "synthesised ids stay unique across responses");

    let second = server.requests()[1].json();
    assert_eq!(second["messages"][1]["tool_calls"][0]["function"]["arguments"], json!({"city": 42}));
    assert_eq!(second["messages"][2]["role"], json!("tool"));
    assert_eq!(second["messages"][2]["content"], json!(format!("Error: {}", results[0].content)));
}
