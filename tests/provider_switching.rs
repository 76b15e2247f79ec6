//! Switching providers mid-conversation and falling back to a second model
//! over HTTP: each provider receives its own tool artifacts natively and the
//! other's as text, and the history is tagged with the provider that answered.

use std::time::Duration;

use serde_json::json;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::OpenAi;
use toolloop::providers::{Fallback, RetryPolicy};
use toolloop::tool::ToolDefinition;
use toolloop::{ContentBlock, Conversation, Message, Model, ModelRequest, Role, ToolCall, ToolResult};
use toolloop_workspace::{Reply, TestServer, replies};

fn quick() -> RetryPolicy {
    RetryPolicy::default().with_max_retries(1).with_initial_backoff(Duration::from_millis(5))
}

fn weather_tool() -> Vec<ToolDefinition> {
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    vec![ToolDefinition::from_schema("weather", "Current weather for a city.", schema)]
}

fn anthropic_history() -> Conversation {
    let mut conversation = Conversation::new();
    conversation.push_user("Weather in Paris?");
    conversation.push(
        Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolCall(ToolCall::new("toolu_01", "weather", json!({"city": "Paris"})))],
        )
        .with_provider("anthropic"),
    );
    conversation.push(Message::from_tool_results([ToolResult::success("toolu_01", "sunny")]));
    conversation
}

#[tokio::test]
async fn a_persistent_anthropic_failure_falls_back_to_openai_and_back() {
    let overloaded =
        Reply::json(529, &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
    let anthropic_server = TestServer::start([overloaded.clone(), overloaded, replies::anthropic::text("Done.")]).await;
    let openai_server =
        TestServer::start([replies::openai::tool_calls(&[("call_9", "weather", "{\"city\":\"Rome\"}")])]).await;
    let anthropic =
        Anthropic::builder().api_key("a").base_url(anthropic_server.url()).retry_policy(quick()).build().unwrap();
    let openai = OpenAi::builder().api_key("o").base_url(openai_server.url()).build().unwrap();
    let model = Fallback::new(anthropic).then(openai);
    assert_eq!(model.provider(), "anthropic");

    let mut conversation = anthropic_history();
    conversation.push_user("And Rome?");
    let before = conversation.clone();
    let tools = weather_tool();
    // As the loop builds it: the raw history, which each model views for its provider.
    let request = ModelRequest::new(conversation.messages()).with_tools(&tools);
    let response = model.complete(request).await.unwrap();
    assert_eq!(response.provider.as_deref(), Some("openai"));
    assert_eq!(anthropic_server.requests().len(), 2, "Anthropic's own retries ran first");
    // Anthropic was sent its tool_use natively...
    assert_eq!(anthropic_server.requests()[0].json()["messages"][1]["content"][0]["type"], json!("tool_use"));
    // ...OpenAI got it as text, with no tool messages it could not match.
    assert_eq!(
        openai_server.requests()[0].json()["messages"],
        json!([
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "[called tool `weather` with {\"city\":\"Paris\"}]"},
            {"role": "user", "content": "[result of tool `weather`: sunny]\nAnd Rome?"}
        ])
    );
    // The raw history was not rewritten; the new turn is tagged with the provider that made it.
    assert_eq!(conversation, before);
    let message = response.to_message(model.provider());
    assert_eq!(message.provider.as_deref(), Some("openai"));
    conversation.push(message);
    conversation.push(Message::from_tool_results([ToolResult::success("call_9", "cloudy")]));

    // Anthropic is back: it sees its own call natively and OpenAI's as text.
    // As the loop builds it: the raw history, which each model views for its provider.
    let request = ModelRequest::new(conversation.messages()).with_tools(&tools);
    let response = model.complete(request).await.unwrap();
    assert_eq!(response.provider.as_deref(), Some("anthropic"));
    let messages = &anthropic_server.requests()[2].json()["messages"];
    assert_eq!(messages[1]["content"][0]["type"], json!("tool_use"));
    assert_eq!(
        messages[2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny"},
            {"type": "text", "text": "And Rome?"}
        ])
    );
    assert_eq!(
        messages[3]["content"],
        json!([{"type": "text", "text": "[called tool `weather` with {\"city\":\"Rome\"}]"}])
    );
    assert_eq!(
        messages[4]["content"],
        json!([{"type": "text", "text": "[result of tool `weather`: cloudy]", "cache_control": {"type": "ephemeral"}}])
    );
}

#[tokio::test]
async fn switching_to_another_provider_mid_conversation_flattens_in_the_request_only() {
    let server = TestServer::start([replies::ollama::text("It is sunny.")]).await;
    let model = Ollama::builder().base_url(server.url()).build().unwrap();
    let conversation = anthropic_history();
    let view = conversation.view_for(model.provider());
    model.complete(ModelRequest::new(&view)).await.unwrap();
    assert_eq!(
        server.requests()[0].json()["messages"],
        json!([
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "[called tool `weather` with {\"city\":\"Paris\"}]"},
            {"role": "user", "content": "[result of tool `weather`: sunny]"}
        ])
    );
    assert_eq!(conversation, anthropic_history());
}
