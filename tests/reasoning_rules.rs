//! The reasoning fakes enforce what the real APIs enforce: reasoning state
//! that is altered, dropped, reordered or moved to another turn is rejected
//! with the API's error body, and state sent back as issued passes. The
//! Anthropic fake is also driven through the real Anthropic client: thinking
//! blocks it issues come back byte for byte and pass its checks.

use serde_json::{Value, json};
use toolloop::providers::anthropic::Anthropic;
use toolloop::{Conversation, Message, Model, ModelRequest, ToolResult};
use toolloop_workspace::anthropic_rules::{AnthropicRules, Block};
use toolloop_workspace::responses_rules::{Item, ResponsesRules};
use toolloop_workspace::{Reply, TestServer};

fn thinking_request(messages: &Value) -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048}, "messages": messages})
}

/// A request after one tool-use turn the fake issued, as a client that keeps
/// thinking sends it.
fn anthropic_loop(rules: &AnthropicRules) -> Value {
    let first = thinking_request(&json!([{"role": "user", "content": [{"type": "text", "text": "weather?"}]}]));
    let reply = rules.respond(
        &first,
        &[
            Block::Thinking("I should check."),
            Block::RedactedThinking,
            Block::ToolUse("toolu_1", "weather", json!({"city": "Paris"})),
        ],
    );
    thinking_request(&json!([
        {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
        {"role": "assistant", "content": reply["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]}
    ]))
}

#[test]
fn anthropic_accepts_thinking_sent_back_as_issued() {
    let rules = AnthropicRules::new();
    assert_eq!(rules.check(&anthropic_loop(&rules)), Ok(()));
}

#[test]
fn anthropic_rejects_altered_moved_reordered_or_dropped_thinking() {
    let rules = AnthropicRules::new();

    let mut altered = anthropic_loop(&rules);
    altered["messages"][1]["content"][0]["thinking"] = json!("I should check!");
    let rejection = rules.check(&altered).unwrap_err();
    assert_eq!(rejection.status, 400);
    assert_eq!(rejection.body["error"]["type"], "invalid_request_error");
    assert_eq!(rejection.message(), "messages.1.content.0: Invalid `signature` in `thinking` block");

    let mut reordered = anthropic_loop(&rules);
    reordered["messages"][1]["content"].as_array_mut().unwrap().swap(0, 1);
    assert_eq!(
        rules.check(&reordered).unwrap_err().message(),
        "messages.1.content.0: Invalid `data` in `redacted_thinking` block"
    );

    // Moved to another turn: the same block in a later assistant turn.
    let mut moved = anthropic_loop(&rules);
    let thinking = moved["messages"][1]["content"][0].clone();
    let messages = moved["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": [thinking, {"type": "text", "text": "done"}]}));
    assert_eq!(
        rules.check(&moved).unwrap_err().message(),
        "messages.3.content.0: Invalid `signature` in `thinking` block"
    );

    let mut dropped = anthropic_loop(&rules);
    let content = dropped["messages"][1]["content"].as_array_mut().unwrap();
    content.drain(..2);
    let rejection = rules.check(&dropped).unwrap_err();
    assert!(
        rejection.message().starts_with(
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block"
        ),
        "{}",
        rejection.message()
    );
    // Without thinking in the request, a tool-use turn needs none.
    dropped.as_object_mut().unwrap().remove("thinking");
    assert_eq!(rules.check(&dropped), Ok(()));
}

#[test]
fn anthropic_rejects_settings_thinking_cannot_take() {
    let rules = AnthropicRules::new();
    let base = thinking_request(&json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]));
    let with = |field: &str, value: Value| {
        let mut body = base.clone();
        body[field] = value;
        rules.check(&body).unwrap_err().message().to_owned()
    };
    assert!(with("temperature", json!(0.5)).starts_with("`temperature` may only be set to 1 when thinking is enabled"));
    assert_eq!(
        with("tool_choice", json!({"type": "any"})),
        "Thinking may not be enabled when tool_choice forces tool use."
    );
    assert!(with("max_tokens", json!(2048)).starts_with("`max_tokens` must be greater than `thinking.budget_tokens`"));
    assert!(
        with("thinking", json!({"type": "enabled", "budget_tokens": 1000})).contains("greater than or equal to 1024")
    );
    let mut fine = base.clone();
    fine["temperature"] = json!(1);
    assert_eq!(rules.check(&fine), Ok(()));
    // Thinking off: an assistant message in the final position may not hold thinking.
    let mut prefill = base;
    prefill.as_object_mut().unwrap().remove("thinking");
    prefill["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": rules.sign("x", 1, 0)}]}));
    assert!(rules.check(&prefill).unwrap_err().message().contains("When thinking is disabled"));
}

#[tokio::test]
async fn the_anthropic_client_sends_issued_thinking_back_so_the_fake_accepts_it() {
    let rules = AnthropicRules::new();
    let first_request = json!({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "x"}]});
    let reply = rules.respond(
        &first_request,
        &[
            Block::Thinking("Check the weather first."),
            Block::RedactedThinking,
            Block::ToolUse("toolu_1", "weather", json!({"city": "Paris"})),
        ],
    );
    let server = TestServer::start(vec![
        Reply::json(200, &reply),
        Reply::json(200, &rules.respond(&first_request, &[Block::Text("Sunny.")])),
    ])
    .await;
    let model =
        Anthropic::builder().api_key("sk-test").base_url(server.url()).model("claude-sonnet-4-5").build().unwrap();

    let mut conversation = Conversation::new();
    conversation.push_user("weather in Paris?");
    let response = model.complete(ModelRequest::new(conversation.messages())).await.unwrap();
    assert_eq!(response.reasoning_text(), "Check the weather first.");
    conversation.push(response.to_message(model.provider()));
    // Save and resume mid-loop.
    let saved = serde_json::to_string(&conversation).unwrap();
    let mut conversation: Conversation = serde_json::from_str(&saved).unwrap();
    conversation.push(Message::from_tool_results([ToolResult::success("toolu_1", "sunny")]));
    model.complete(ModelRequest::new(conversation.messages())).await.unwrap();

    let mut sent = server.requests()[1].json();
    assert_eq!(sent["messages"][1]["content"][0]["signature"], reply["content"][0]["signature"]);
    // The client does not turn thinking on yet; check as if it had.
    sent["thinking"] = json!({"type": "enabled", "budget_tokens": 2048});
    assert_eq!(rules.check(&sent), Ok(()));
}

/// A stateless request after a response with reasoning and two parallel
/// calls, shaped as the Responses wire format renders it.
fn responses_loop(rules: &ResponsesRules) -> Value {
    let reply = rules.respond(
        &[
            Item::Reasoning("Look both up."),
            Item::FunctionCall("call_a", "weather", json!({"city": "Paris"})),
            Item::FunctionCall("call_b", "weather", json!({"city": "Rome"})),
        ],
        30,
    );
    let output = reply["output"].as_array().unwrap();
    let reasoning = &output[0];
    json!({
        "model": "gpt-5.2", "store": false, "include": ["reasoning.encrypted_content"],
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
            {"type": "reasoning", "id": reasoning["id"], "summary": reasoning["summary"], "encrypted_content": reasoning["encrypted_content"]},
            {"type": "function_call", "call_id": "call_a", "name": "weather", "arguments": output[1]["arguments"]},
            {"type": "function_call", "call_id": "call_b", "name": "weather", "arguments": output[2]["arguments"]},
            {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
            {"type": "function_call_output", "call_id": "call_b", "output": "rainy"}
        ]
    })
}

#[test]
fn responses_accepts_reasoning_sent_back_in_place() {
    let rules = ResponsesRules::new();
    assert_eq!(rules.check(&responses_loop(&rules)), Ok(()));
    let reply = rules.respond(&[Item::Reasoning(""), Item::Message("hi")], 5);
    assert_eq!(reply["usage"]["output_tokens_details"]["reasoning_tokens"], 5);
    assert_eq!(reply["output"][0]["summary"], json!([]));
}

#[test]
fn responses_rejects_altered_dropped_reordered_or_moved_reasoning() {
    let rules = ResponsesRules::new();

    let mut altered = responses_loop(&rules);
    let content = altered["input"][1]["encrypted_content"].as_str().unwrap().replace("call:call_a", "call:call_b");
    altered["input"][1]["encrypted_content"] = json!(content);
    let rejection = rules.check(&altered).unwrap_err();
    assert_eq!(rejection.body["error"]["code"], "invalid_encrypted_content");
    assert!(rejection.message().starts_with("The encrypted content gAAA..."), "{}", rejection.message());
    assert!(rejection.message().ends_with("could not be verified."));

    let mut unknown = responses_loop(&rules);
    unknown["input"][1]["encrypted_content"] = json!("gAAAAnot-issued==");
    assert_eq!(rules.check(&unknown).unwrap_err().body["error"]["code"], "invalid_encrypted_content");

    let mut dropped = responses_loop(&rules);
    dropped["input"].as_array_mut().unwrap().remove(1);
    let rejection = rules.check(&dropped).unwrap_err();
    assert!(rejection.message().starts_with(
        "Item 'fc_call_a' of type 'function_call' was provided without its required 'reasoning' item: 'rs_"
    ));
    assert_eq!(rejection.body["error"]["param"], "input");

    let mut reordered = responses_loop(&rules);
    reordered["input"].as_array_mut().unwrap().swap(1, 2);
    assert!(rules.check(&reordered).unwrap_err().message().contains("without its required 'reasoning' item"));

    // Moved before another call (another turn's place): its following item is gone.
    let mut moved = responses_loop(&rules);
    moved["input"].as_array_mut().unwrap().swap(2, 3);
    assert_eq!(
        rules.check(&moved).unwrap_err().message(),
        format!(
            "Item '{}' of type 'reasoning' was provided without its required following item.",
            moved["input"][1]["id"].as_str().unwrap()
        )
    );

    let mut orphan = responses_loop(&rules);
    orphan["input"].as_array_mut().unwrap().drain(1..4);
    assert_eq!(
        rules.check(&orphan).unwrap_err().message(),
        "No tool call found for function call output with call_id call_a."
    );
    // Chained requests send only new items: the outputs' calls are in the stored response.
    let first = json!({"store": true, "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "weather?"}]}]});
    let stored = rules.respond_to(
        &first,
        &[
            Item::Reasoning("Look both up."),
            Item::FunctionCall("call_a", "weather", json!({"city": "Paris"})),
            Item::FunctionCall("call_b", "weather", json!({"city": "Rome"})),
        ],
        30,
    );
    let mut chained = orphan.clone();
    chained["previous_response_id"] = stored["id"].clone();
    assert_eq!(rules.check(&chained), Ok(()));
    // ...which must be one the fake holds.
    chained["previous_response_id"] = json!("resp_fake_1");
    assert_eq!(rules.check(&chained).unwrap_err().body["error"]["code"], "previous_response_not_found");
}
