//! Anthropic Messages over a local server: the exact request sent for a
//! conversation with text, parallel tool calls and tool results (one an
//! error), the response parsed back, error bodies mapped, and a malformed
//! tool call fed back and corrected.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::convert::Infallible;
use std::time::Duration;

use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::reasoning::Reasoning;
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

fn model(server: &TestServer) -> Anthropic {
    Anthropic::builder()
        .api_key("sk-ant-test-key")
        .base_url(server.url())
        .model("claude-test")
        .temperature(0.5)
        .retry_policy(RetryPolicy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn conversation() -> Conversation {
    let mut conversation = Conversation::new();
    conversation.push_user("Weather in Paris and Rome?");
    conversation.push(
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::text("Checking both."),
                ContentBlock::ToolCall(ToolCall::new("toolu_01", "weather", json!({"city": "Paris"}))),
                ContentBlock::ToolCall(ToolCall::new("toolu_02", "weather", json!({"city": "Rome"}))),
            ],
        )
        .with_provider("anthropic"),
    );
    conversation.push(Message::from_tool_results([
        ToolResult::success("toolu_01", "18°C and sunny"),
        ToolResult::failure("toolu_02", FailureKind::ToolFailed, "station offline"),
    ]));
    conversation.push_user("Also Oslo, please.");
    conversation
}

#[tokio::test]
async fn the_request_is_exactly_the_messages_api_shape_and_the_response_parses_back() {
    let server = TestServer::start([Reply::json(
        200,
        &json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test-20250101",
            "content": [
                {"type": "thinking", "thinking": "…", "signature": "sig"},
                {"type": "text", "text": "Checking Oslo and retrying Rome."},
                {"type": "tool_use", "id": "toolu_03", "name": "weather", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "toolu_04", "name": "weather", "input": {"city": "Rome"}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 120, "output_tokens": 40, "cache_creation_input_tokens": 30, "cache_read_input_tokens": 50}
        }),
    )])
    .await;
    let model = model(&server);
    let conversation = conversation();
    let tools = [Weather::definition().clone()];
    let view = conversation.view_for(model.provider());
    let request = ModelRequest::new(&view).with_system("Be brief.").with_tools(&tools).with_max_tokens(1024);
    let response = model.complete(request).await.unwrap();

    let sent = &server.requests()[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test-key"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 1024,
            // Prompt caching is on by default: the stable prefix (tools, then
            // system) and the end of the conversation carry breakpoints.
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking both."},
                    {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "toolu_02", "name": "weather", "input": {"city": "Rome"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18°C and sunny"},
                    {"type": "tool_result", "tool_use_id": "toolu_02", "content": "station offline", "is_error": true},
                    {"type": "text", "text": "Also Oslo, please.", "cache_control": {"type": "ephemeral"}}
                ]}
            ],
            "tools": [{
                "name": "weather",
                "description": "Current weather for a city.",
                "input_schema": Weather::definition().input_schema
            }],
            "temperature": 0.5
        })
    );

    // The thinking block is kept, with its signature, for the next request.
    let thinking: Reasoning = serde_json::from_value(json!({"text": ["…"], "opaque": {
        "provider": "anthropic", "model": "claude-test-20250101", "state": {"type": "signed", "signature": "sig"}
    }}))
    .unwrap();
    assert_eq!(
        response.content,
        vec![
            ContentBlock::Reasoning(thinking),
            ContentBlock::text("Checking Oslo and retrying Rome."),
            ContentBlock::ToolCall(ToolCall::new("toolu_03", "weather", json!({"city": "Oslo"}))),
            ContentBlock::ToolCall(ToolCall::new("toolu_04", "weather", json!({"city": "Rome"}))),
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 120,
            output_tokens: 40,
            cache_read_tokens: 50,
            cache_write_tokens: 30,
            reasoning_tokens: 0
        }
    );
    assert_eq!(response.model.as_deref(), Some("claude-test-20250101"));
    assert_eq!(response.to_message(model.provider()).provider.as_deref(), Some("anthropic"));
}

#[tokio::test]
async fn max_tokens_defaults_to_the_configured_value_and_is_always_sent() {
    let server = TestServer::start([Reply::json(
        200,
        &json!({"content": [{"type": "tool_use", "id": "toolu_9", "name": "weather", "input": {}}],
                "stop_reason": "max_tokens", "usage": {"input_tokens": 1, "output_tokens": 4096}}),
    )])
    .await;
    let model = Anthropic::builder().api_key("k").base_url(server.url()).build().unwrap();
    let messages = [Message::user("hi")];
    let response = model.complete(ModelRequest::new(&messages)).await.unwrap();
    let sent = server.requests()[0].json();
    assert_eq!(sent["max_tokens"], 4096);
    assert_eq!(sent["model"], toolloop::providers::anthropic::DEFAULT_MODEL);
    assert!(sent.get("temperature").is_none() && sent.get("tools").is_none() && sent.get("system").is_none());
    // A cut-off tool call is reported as such, so the loop does not run it as complete.
    assert!(response.stop_reason.is_truncated());
}

#[tokio::test]
async fn error_bodies_become_typed_errors_without_the_key() {
    let server = TestServer::start([
        Reply::json(401, &json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}))
            .header("request-id", "req_011CSHoEeqs5C35K2UUqR7Fy"),
        Reply::json(429, &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests has exceeded your rate limit"}}))
            .header("retry-after", "7"),
        Reply::json(404, &json!({"type": "error", "error": {"type": "not_found_error", "message": "model: claude-nope"}})),
        Reply::json(403, &json!({"type": "error", "error": {"type": "permission_error", "message": "no access"}})),
        Reply::json(413, &json!({"type": "error", "error": {"type": "request_too_large", "message": "too big"}})),
    ])
    .await;
    let model = model(&server);
    let messages = [Message::user("hi")];
    let call = || model.complete(ModelRequest::new(&messages));

    let error = call().await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Authentication);
    assert_eq!(
        (error.status(), error.message(), error.error_type()),
        (Some(401), "invalid x-api-key", Some("authentication_error"))
    );
    assert_eq!(error.request_id(), Some("req_011CSHoEeqs5C35K2UUqR7Fy"));
    assert!(!format!("{error} {error:?}").contains("sk-ant-test-key"));

    let error = call().await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::RateLimited);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(7)));
    assert_eq!(call().await.unwrap_err().kind(), ModelErrorKind::NotFound);
    assert_eq!(call().await.unwrap_err().kind(), ModelErrorKind::PermissionDenied);
    assert_eq!(call().await.unwrap_err().kind(), ModelErrorKind::InvalidRequest);
    assert!(!format!("{model:?}").contains("sk-ant-test-key"));
}

#[tokio::test]
async fn arguments_that_do_not_fit_the_tool_are_fed_back_and_corrected() {
    let server = TestServer::start([
        Reply::json(
            200,
            &json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"town": "Oslo"}}],
                    "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}),
        ),
        Reply::json(
            200,
            &json!({"content": [{"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {"city": "Oslo"}}],
                    "stop_reason": "tool_use", "usage": {"input_tokens": 30, "output_tokens": 5}}),
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
    assert_eq!(results[1], ToolResult::success("toolu_2", "Oslo: 20°C"));

    // The second request carried the failed call and its error result.
    let second = server.requests()[1].json();
    assert_eq!(second["messages"][1]["content"][0]["input"], json!({"town": "Oslo"}));
    let fed_back = &second["messages"][2]["content"][0];
    assert_eq!((fed_back["tool_use_id"].as_str(), fed_back["is_error"].as_bool()), (Some("toolu_1"), Some(true)));
    assert_eq!(fed_back["content"], json!(results[0].content));
}
