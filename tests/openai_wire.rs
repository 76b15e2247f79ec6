//! OpenAI Chat Completions over a local server: the exact request sent for a
//! conversation with text, parallel tool calls and tool results (one an
//! error), the response parsed back, strict tools, compatible servers, error
//! bodies, and arguments that are not JSON fed back and corrected.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::convert::Infallible;
use std::time::Duration;

use serde_json::{Value, json};
use toolloop::model::ModelErrorKind;
use toolloop::providers::RetryPolicy;
use toolloop::providers::openai::OpenAi;
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

fn model(server: &TestServer) -> OpenAi {
    OpenAi::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .model("gpt-test")
        .temperature(0.5)
        .retry_policy(RetryPolicy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn reply(message: &Value, finish_reason: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test-2025",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160,
                      "prompt_tokens_details": {"cached_tokens": 50}}
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
                ContentBlock::ToolCall(ToolCall::new("call_01", "weather", json!({"city": "Paris"}))),
                ContentBlock::ToolCall(ToolCall::new("call_02", "weather", json!({"city": "Rome"}))),
            ],
        )
        .with_provider("openai"),
    );
    conversation.push(Message::from_tool_results([
        ToolResult::success("call_01", "18°C and sunny"),
        ToolResult::failure("call_02", FailureKind::ToolFailed, "station offline"),
    ]));
    conversation.push_user("Also Oslo, please.");
    conversation
}

#[tokio::test]
async fn the_request_is_exactly_the_chat_completions_shape_and_the_response_parses_back() {
    let server = TestServer::start([reply(
        &json!({"role": "assistant", "content": null, "refusal": null, "tool_calls": [
            {"id": "call_03", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}},
            {"id": "call_04", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Rome\"}"}}
        ]}),
        "tool_calls",
    )])
    .await;
    let model = model(&server);
    let conversation = conversation();
    let tools = [Weather::definition().clone()];
    let view = conversation.view_for(model.provider());
    let request = ModelRequest::new(&view).with_system("Be brief.").with_tools(&tools).with_max_tokens(1024);
    let response = model.complete(request).await.unwrap();

    let sent = &server.requests()[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris and Rome?"},
                {"role": "assistant", "content": "Checking both.", "tool_calls": [
                    {"id": "call_01", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
                    {"id": "call_02", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Rome\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_01", "content": "18°C and sunny"},
                {"role": "tool", "tool_call_id": "call_02", "content": "Error: station offline"},
                {"role": "user", "content": "Also Oslo, please."}
            ],
            "tools": [{"type": "function", "function": {
                "name": "weather",
                "description": "Current weather for a city.",
                "parameters": Weather::definition().input_schema
            }}],
            "max_completion_tokens": 1024,
            "temperature": 0.5
        })
    );

    assert_eq!(
        response.content,
        vec![
            ContentBlock::ToolCall(ToolCall::new("call_03", "weather", json!({"city": "Oslo"}))),
            ContentBlock::ToolCall(ToolCall::new("call_04", "weather", json!({"city": "Rome"}))),
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    // 50 of the 120 prompt tokens came from the cache: reported once, as cache reads.
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 70,
            output_tokens: 40,
            cache_read_tokens: 50,
            cache_write_tokens: 0,
            reasoning_tokens: 0
        }
    );
    assert_eq!(response.model.as_deref(), Some("gpt-test-2025"));
    assert_eq!(response.provider.as_deref(), Some("openai"));
}

#[tokio::test]
async fn strict_tools_send_the_strict_schema() {
    let server = TestServer::start([reply(&json!({"role": "assistant", "content": "ok"}), "stop")]).await;
    let model = model(&server);
    let tools = [Weather::definition().clone()];
    let messages = [Message::user("hi")];
    let response =
        model.complete(ModelRequest::new(&messages).with_tools(&tools).with_strict_tools(true)).await.unwrap();
    assert_eq!((response.text().as_str(), &response.stop_reason), ("ok", &StopReason::EndTurn));
    let function = &server.requests()[0].json()["tools"][0]["function"];
    assert_eq!(function["strict"], json!(true));
    assert_eq!(Some(&function["parameters"]), Weather::definition().strict_input_schema.as_ref());
    assert_eq!(function["parameters"]["additionalProperties"], json!(false));
}

#[tokio::test]
async fn a_compatible_server_needs_no_key_and_may_take_legacy_max_tokens() {
    let server = TestServer::start([reply(&json!({"role": "assistant", "content": "hi"}), "length")]).await;
    let model = OpenAi::builder()
        .base_url(server.url())
        .model("local")
        .max_tokens(256)
        .legacy_max_tokens(true)
        .header("X-Gateway-Token", "gw-secret")
        .build()
        .unwrap();
    assert!(!format!("{model:?}").contains("gw-secret"));
    let invalid = OpenAi::builder().base_url(server.url()).header("bad header", "x").build().unwrap_err();
    assert!(matches!(invalid, toolloop::BuildError::InvalidHeader { ref name } if name == "bad header"));
    let messages = [Message::user("hi")];
    let response = model.complete(ModelRequest::new(&messages)).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/chat/completions");
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.header("x-gateway-token"), Some("gw-secret"));
    assert_eq!(
        sent.json(),
        json!({"model": "local", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 256})
    );
}

#[tokio::test]
async fn refusals_and_error_bodies_are_typed() {
    let server = TestServer::start([
        reply(&json!({"role": "assistant", "content": null, "refusal": "I can't help with that."}), "stop"),
        Reply::json(
            401,
            &json!({"error": {"message": "Incorrect API key provided: sk-tes***key.", "type": "invalid_request_error",
                              "param": null, "code": "invalid_api_key"}}),
        )
        .header("x-request-id", "req_abc123"),
        Reply::json(
            429,
            &json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                              "param": null, "code": "insufficient_quota"}}),
        ),
        Reply::json(
            400,
            &json!({"error": {"message": "Invalid 'messages[1].tool_call_id'", "type": "invalid_request_error",
                              "param": "messages[1].tool_call_id", "code": null}}),
        ),
    ])
    .await;
    let model = model(&server);
    let messages = [Message::user("hi")];
    let call = || model.complete(ModelRequest::new(&messages));
    let refusal = call().await.unwrap();
    assert_eq!((&refusal.stop_reason, refusal.text().as_str()), (&StopReason::Refusal, "I can't help with that."));

    let error = call().await.unwrap_err();
    assert_eq!((error.kind(), error.error_type()), (ModelErrorKind::Authentication, Some("invalid_api_key")));
    assert_eq!(error.request_id(), Some("req_abc123"));
    assert!(!format!("{error} {error:?} {model:?}").contains("sk-test-key"));
    let error = call().await.unwrap_err();
    assert_eq!((error.kind(), error.error_type()), (ModelErrorKind::RateLimited, Some("insufficient_quota")));
    let error = call().await.unwrap_err();
    assert_eq!((error.kind(), error.message()), (ModelErrorKind::InvalidRequest, "Invalid 'messages[1].tool_call_id'"));
}

#[tokio::test]
async fn arguments_that_are_not_json_become_an_error_result_and_are_corrected() {
    let raw = "{\"city\": \"Oslo\"";
    let server = TestServer::start([
        reply(
            &json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": raw}}]}),
            "tool_calls",
        ),
        reply(
            &json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_2", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]}),
            "tool_calls",
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
        if results.is_empty() {
            // The model's text is kept as it was written, never lost or crashed on.
            assert_eq!(call.input, Value::String(raw.to_owned()));
        }
        let execution = tools.execute(&call, &cancel).await.unwrap();
        results.push(execution.result.clone());
        conversation.push(Message::from_tool_results([execution.result]));
    }
    assert_eq!(results[0].failure, Some(FailureKind::InvalidArguments));
    assert!(results[0].content.contains("not valid JSON"), "{}", results[0].content);
    assert_eq!(results[1], ToolResult::success("call_2", "Oslo: 20°C"));

    // The failed call went back with its arguments exactly as the model wrote them.
    let second = server.requests()[1].json();
    assert_eq!(second["messages"][1]["tool_calls"][0]["function"]["arguments"], json!(raw));
    assert_eq!(second["messages"][2]["tool_call_id"], json!("call_1"));
    assert_eq!(second["messages"][2]["content"], json!(format!("Error: {}", results[0].content)));
}

/// `prompt_cache_key` and `prompt_cache_retention` are sent when set, after
/// the messages (the prefix OpenAI caches stays byte-stable), and cached
/// prompt tokens come back as cache reads.
#[tokio::test]
async fn prompt_cache_settings_are_sent_and_cached_tokens_reported() {
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 2000, "completion_tokens": 5, "total_tokens": 2005, "prompt_tokens_details": {"cached_tokens": 1920}}
    });
    let server = TestServer::start([Reply::json(200, &body)]).await;
    let model = OpenAi::builder()
        .api_key("k")
        .base_url(server.url())
        .model("gpt-test")
        .prompt_cache_key("research-agent-v1")
        .prompt_cache_retention(toolloop::model::CacheTtl::Extended)
        .build()
        .unwrap();
    let messages = [Message::user("hi")];
    let response = model.complete(ModelRequest::new(&messages)).await.unwrap();
    assert_eq!((response.usage.input_tokens, response.usage.cache_read_tokens), (80, 1920));
    assert!((response.usage.cache_hit_share().unwrap() - 0.96).abs() < 1e-9);
    assert_eq!(
        server.requests()[0].json(),
        json!({"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}],
               "prompt_cache_key": "research-agent-v1", "prompt_cache_retention": "24h"})
    );
}
