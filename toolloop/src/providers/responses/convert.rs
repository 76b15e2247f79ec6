//! Neutral types to and from the Responses wire format.

use std::borrow::Cow;

use serde_json::Value;

use super::PROVIDER;
use super::reasoning::responses_reasoning;
use super::wire::{
    ContentPart, FunctionTool, InputItem, MessageRole, OutputContent, OutputItem, ResponsesRequest, ResponsesResponse,
    SummaryPart, Usage as WireUsage,
};
use crate::message::{ContentBlock, Message, Role, ToolCall, ToolResult};
use crate::model::{ModelError, ModelErrorKind, ModelRequest, ModelResponse, ReasoningConfig};
use crate::reasoning::{OpaqueReasoning, Reasoning, ReasoningState};
use crate::stop_reason::StopReason;
use crate::tool::ToolDefinition;
use crate::usage::Usage;

/// What asks the model to return its reasoning encrypted, so that a
/// stateless (`store: false`) conversation can send it back.
pub(crate) const INCLUDE_ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// The error code of a prompt that does not fit the model's context window.
const CONTEXT_LENGTH_EXCEEDED: &str = "context_length_exceeded";

/// Everything a request body is made of: the reference the model's body
/// is checked against, and the chained (`previous_response_id`) body.
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResponsesInputs<'a> {
    pub(crate) model: &'a str,
    pub(crate) instructions: Option<&'a str>,
    /// The messages to send: the whole view of the conversation when
    /// stateless, only those after the previous response when chained.
    pub(crate) messages: &'a [Message],
    pub(crate) tools: &'a [ToolDefinition],
    pub(crate) strict_tools: bool,
    pub(crate) max_output_tokens: Option<u32>,
    pub(crate) temperature: Option<f32>,
    /// The reasoning setting: the request's, else the client's.
    pub(crate) reasoning: Option<ReasoningConfig>,
    /// `Some`: continue that stored response, sending only new items.
    /// `None`: the whole conversation.
    pub(crate) previous_response_id: Option<&'a str>,
    /// Whether the response is stored (`store: true`), so that the next
    /// request can continue it. Encrypted reasoning is asked for either way.
    pub(crate) store: bool,
}

#[cfg_attr(not(test), allow(dead_code))]
impl<'a> ResponsesInputs<'a> {
    /// The inputs of `request` for `model`, with the client's settings where
    /// the request does not override them. Stateless.
    pub(crate) fn from_request(
        model: &'a str,
        max_output_tokens: Option<u32>,
        temperature: Option<f32>,
        configured: Option<ReasoningConfig>,
        request: &ModelRequest<'a>,
    ) -> Self {
        Self {
            model,
            instructions: request.system.filter(|s| !s.is_empty()),
            messages: request.messages,
            tools: request.tools,
            strict_tools: request.strict_tools,
            max_output_tokens: request.max_tokens.or(max_output_tokens),
            temperature: request.temperature.or(temperature),
            reasoning: request.reasoning.or(configured),
            previous_response_id: None,
            store: false,
        }
    }
}

/// The request body for `inputs`.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn render(inputs: &ResponsesInputs<'_>) -> serde_json::Result<Vec<u8>> {
    let body = ResponsesRequest {
        model: inputs.model,
        instructions: inputs.instructions,
        previous_response_id: inputs.previous_response_id,
        input: input_items(inputs.messages),
        tools: inputs.tools.iter().map(|tool| function_tool(tool, inputs.strict_tools)).collect(),
        max_output_tokens: inputs.max_output_tokens,
        temperature: inputs.temperature,
        reasoning: inputs.reasoning.as_ref().and_then(|config| responses_reasoning(config, inputs.model)),
        store: inputs.store,
        include: [INCLUDE_ENCRYPTED_REASONING],
    };
    serde_json::to_vec(&body)
}

pub(super) fn function_tool(tool: &ToolDefinition, strict_requested: bool) -> FunctionTool<'_> {
    FunctionTool {
        kind: "function",
        name: &tool.name,
        description: &tool.description,
        parameters: tool.schema(strict_requested),
        strict: tool.is_strict(strict_requested),
    }
}

/// The messages as input items, in order: each reasoning item directly
/// before the items that followed it, each call's output paired by `call_id`.
pub(super) fn input_items(messages: &[Message]) -> Vec<InputItem<'_>> {
    // Consecutive text blocks form one message item.
    fn flush<'m>(role: MessageRole, text: &mut Vec<ContentPart<'m>>, items: &mut Vec<InputItem<'m>>) {
        if !text.is_empty() {
            items.push(InputItem::Message { role, content: std::mem::take(text) });
        }
    }
    fn part(role: MessageRole, text: Cow<'_, str>) -> ContentPart<'_> {
        match role {
            MessageRole::User => ContentPart::InputText { text },
            MessageRole::Assistant => ContentPart::OutputText { text },
        }
    }

    let mut items = Vec::new();
    for message in messages {
        let role = match message.role {
            Role::User => MessageRole::User,
            Role::Assistant => MessageRole::Assistant,
        };
        let mut text: Vec<ContentPart<'_>> = Vec::new();
        for block in &message.content {
            match (role, block) {
                (_, ContentBlock::Text { text: t }) if t.is_empty() => {}
                (_, ContentBlock::Text { text: t }) => text.push(part(role, Cow::Borrowed(t))),
                (MessageRole::Assistant, ContentBlock::Reasoning(reasoning)) => {
                    if let Some(item) = reasoning_item(reasoning) {
                        flush(role, &mut text, &mut items);
                        items.push(item);
                    }
                }
                (MessageRole::Assistant, ContentBlock::ToolCall(call)) => {
                    flush(role, &mut text, &mut items);
                    items.push(InputItem::FunctionCall {
                        call_id: &call.id,
                        name: &call.name,
                        arguments: arguments(&call.input),
                    });
                }
                (MessageRole::User, ContentBlock::ToolResult(result)) => {
                    flush(role, &mut text, &mut items);
                    items.push(InputItem::FunctionCallOutput { call_id: &result.call_id, output: result_text(result) });
                }
                // A call in a user turn or a result in an assistant turn cannot
                // be expressed; keep what it said as text rather than lose it.
                (_, ContentBlock::ToolCall(call)) => {
                    text.push(part(role, Cow::Owned(format!("[called tool `{}` with {}]", call.name, call.input))));
                }
                (_, ContentBlock::ToolResult(result)) => {
                    text.push(part(role, Cow::Owned(format!("[tool result: {}]", result.content))));
                }
                // Reasoning the user wrote has no item.
                (_, ContentBlock::Reasoning(_)) => {}
            }
        }
        flush(role, &mut text, &mut items);
    }
    items
}

/// A reasoning item as the API issued it. Reasoning without a Responses
/// item id (another provider's, or plain text) has no input item.
fn reasoning_item(reasoning: &Reasoning) -> Option<InputItem<'_>> {
    let ReasoningState::Item { id, encrypted_content } = reasoning.state_for(PROVIDER)? else { return None };
    Some(InputItem::Reasoning {
        id,
        summary: reasoning.summary.iter().map(|text| SummaryPart { kind: "summary_text", text }).collect(),
        encrypted_content: encrypted_content.as_deref(),
    })
}

/// A call's arguments as the JSON string the API wants; raw text another
/// provider kept is sent as it was.
fn arguments(input: &Value) -> Cow<'_, str> {
    match input {
        Value::String(raw) => Cow::Borrowed(raw),
        other => Cow::Owned(other.to_string()),
    }
}

/// A tool result as text: there is no error flag, so errors say so.
fn result_text(result: &ToolResult) -> Cow<'_, str> {
    if result.is_error() { Cow::Owned(format!("Error: {}", result.content)) } else { Cow::Borrowed(&result.content) }
}

/// Parses a success body (what the streaming decoder's result must equal).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
    parse_with_id(body).map(|(response, _)| response)
}

#[cfg_attr(not(test), allow(dead_code))]
/// Parses a success body; also returns the response's `id`, for chaining
/// the next request with `previous_response_id`.
pub(crate) fn parse_with_id(body: &[u8]) -> Result<(ModelResponse, Option<String>), ModelError> {
    let wire: ResponsesResponse = serde_json::from_slice(body).map_err(|error| {
        ModelError::new(
            ModelErrorKind::MalformedResponse,
            PROVIDER,
            format!("the response body could not be parsed ({error})"),
        )
    })?;
    let response = ModelResponse::try_from(wire)?;
    let id = response.id.clone();
    Ok((response, id))
}

impl TryFrom<ResponsesResponse> for ModelResponse {
    type Error = ModelError;

    fn try_from(wire: ResponsesResponse) -> Result<Self, ModelError> {
        if wire.status.as_deref() == Some("failed") {
            let (code, message) = wire.error.map(|e| (e.code, e.message)).unwrap_or_default();
            // A failed response names its cause by code; the prompt that did not fit is the caller's to fix.
            let overflow = code.as_deref() == Some(CONTEXT_LENGTH_EXCEEDED);
            let error = ModelError::new(ModelErrorKind::Server, PROVIDER, message).with_error_type(code);
            return Err(if overflow { error.with_context_overflow(None, None) } else { error });
        }
        let mut content = Vec::new();
        let mut refused = false;
        for item in wire.output {
            match item {
                OutputItem::Reasoning { id, summary, content: text, encrypted_content } => {
                    content.push(ContentBlock::Reasoning(reasoning_from(
                        wire.model.clone(),
                        id,
                        text.unwrap_or_default().into_iter().map(|part| part.text).collect(),
                        summary.into_iter().map(|part| part.text).collect(),
                        encrypted_content,
                    )));
                }
                OutputItem::Message { content: parts } => {
                    for part in parts {
                        match part {
                            OutputContent::OutputText { text } => content.push(ContentBlock::Text { text }),
                            OutputContent::Refusal { refusal } => {
                                refused = true;
                                content.push(ContentBlock::Text { text: refusal });
                            }
                            OutputContent::Other => {}
                        }
                    }
                }
                OutputItem::FunctionCall { call_id, name, arguments } => {
                    content.push(ContentBlock::ToolCall(ToolCall {
                        id: call_id,
                        name,
                        input: parse_arguments(arguments),
                    }));
                }
                OutputItem::Other => {}
            }
        }
        let has_calls = content.iter().any(|block| matches!(block, ContentBlock::ToolCall(_)));
        let stop_reason = stop_reason_from(
            wire.status.as_deref(),
            wire.incomplete_details.as_ref().and_then(|d| d.reason.as_deref()),
            has_calls,
            refused,
        );
        let mut response =
            ModelResponse::new(content).with_stop_reason(stop_reason).with_usage(usage(wire.usage.as_ref()));
        response.model = wire.model;
        response.id = wire.id;
        Ok(response.with_provider(PROVIDER))
    }
}

/// A reasoning item in neutral form, its id and encrypted content kept for
/// the next request (to this provider, for this model).
pub(super) fn reasoning_from(
    model: Option<String>,
    id: String,
    text: Vec<String>,
    summary: Vec<String>,
    encrypted_content: Option<String>,
) -> Reasoning {
    let opaque = OpaqueReasoning::new(PROVIDER, model, ReasoningState::Item { id, encrypted_content });
    Reasoning::with_opaque(text, summary, opaque)
}

/// A call's arguments from the JSON string the API sends. Text that is not
/// valid JSON is kept as `Value::String(raw)`, so executing the call reports
/// the parse error to the model; an empty string is an empty object.
fn parse_arguments(arguments: Value) -> Value {
    match arguments {
        Value::String(raw) if raw.trim().is_empty() => Value::Object(serde_json::Map::new()),
        Value::String(raw) => serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
        other => other,
    }
}

pub(super) fn stop_reason_from(
    status: Option<&str>,
    incomplete: Option<&str>,
    has_calls: bool,
    refused: bool,
) -> StopReason {
    match (status, incomplete) {
        (Some("incomplete"), Some("max_output_tokens")) => StopReason::MaxTokens,
        (Some("incomplete"), Some("content_filter")) => StopReason::ContentFilter,
        (Some("incomplete"), Some(other)) => StopReason::Other(other.to_owned()),
        _ if refused => StopReason::Refusal,
        _ if has_calls => StopReason::ToolUse,
        (Some("completed") | None, _) => StopReason::EndTurn,
        (Some(other), _) => StopReason::Other(other.to_owned()),
    }
}

/// Usage with cached input tokens reported as cache reads and taken out of
/// the input tokens (the API counts them in `input_tokens`), and reasoning
/// tokens as the part of the output they are.
pub(super) fn usage(wire: Option<&WireUsage>) -> Usage {
    let Some(wire) = wire else { return Usage::default() };
    let cached = wire.input_tokens_details.as_ref().and_then(|d| d.cached_tokens).unwrap_or(0);
    Usage {
        input_tokens: wire.input_tokens.saturating_sub(cached),
        output_tokens: wire.output_tokens,
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        reasoning_tokens: wire.output_tokens_details.as_ref().and_then(|d| d.reasoning_tokens).unwrap_or(0),
    }
}

/// The Responses API answers errors in OpenAI's one shape.
pub(crate) use crate::providers::openai::error_body;

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{ResponsesInputs, error_body, parse, parse_with_id, render};
    use crate::message::{ContentBlock, FailureKind, Message, ToolResult};
    use crate::model::{ModelErrorKind, ModelRequest};
    use crate::reasoning::ReasoningState;
    use crate::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};
    use crate::stop_reason::StopReason;
    use crate::tool::ToolDefinition;
    use crate::usage::Usage;

    /// A response shaped like the API reference's: reasoning, a message and
    /// two parallel function calls.
    fn tool_response() -> Value {
        json!({
            "id": "resp_1", "object": "response", "created_at": 1_741_476_542, "status": "completed",
            "error": null, "incomplete_details": null, "model": "gpt-5.2-2025-12-11",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "**Plan** look up both"}],
                 "encrypted_content": "gAAAAABo-enc-1=="},
                {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Looking both up.", "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "weather", "arguments": "{\"city\":\"Paris\"}", "status": "completed"},
                {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "weather", "arguments": "{\"city\":", "status": "completed"}
            ],
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 60},
                      "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 30}, "total_tokens": 150}
        })
    }

    #[test]
    fn output_items_become_neutral_content_in_order() {
        let (response, id) = parse_with_id(tool_response().to_string().as_bytes()).unwrap();
        assert_eq!(id.as_deref(), Some("resp_1"));
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 40,
                output_tokens: 50,
                cache_read_tokens: 60,
                cache_write_tokens: 0,
                reasoning_tokens: 30
            }
        );
        let ContentBlock::Reasoning(reasoning) = &response.content[0] else { panic!("{:?}", response.content) };
        assert_eq!(reasoning.summary, vec!["**Plan** look up both".to_owned()]);
        let opaque = reasoning.opaque.as_ref().unwrap();
        assert_eq!(
            (opaque.provider.as_str(), opaque.model.as_deref()),
            ("openai-responses", Some("gpt-5.2-2025-12-11"))
        );
        assert_eq!(
            opaque.state,
            ReasoningState::Item { id: "rs_1".into(), encrypted_content: Some("gAAAAABo-enc-1==".into()) }
        );
        assert_eq!(response.content[1], ContentBlock::text("Looking both up."));
        let calls: Vec<_> = response.tool_calls().collect();
        assert_eq!((calls[0].id.as_str(), &calls[0].input), ("call_a", &json!({"city": "Paris"})));
        // Arguments that are not JSON stay raw, so the tool reports the error.
        assert_eq!(calls[1].input, json!("{\"city\":"));
        assert_eq!(response.reasoning_text(), "**Plan** look up both");
    }

    #[test]
    fn status_and_incomplete_details_become_stop_reasons() {
        let with = |status: &str, reason: Value, output: Value| {
            let body = json!({"id": "r", "status": status, "incomplete_details": reason, "output": output});
            parse(body.to_string().as_bytes())
        };
        let text = json!([{"type": "message", "content": [{"type": "output_text", "text": "hi"}]}]);
        assert_eq!(with("completed", Value::Null, text.clone()).unwrap().stop_reason, StopReason::EndTurn);
        assert_eq!(
            with("incomplete", json!({"reason": "max_output_tokens"}), text.clone()).unwrap().stop_reason,
            StopReason::MaxTokens
        );
        assert_eq!(
            with("incomplete", json!({"reason": "content_filter"}), text).unwrap().stop_reason,
            StopReason::ContentFilter
        );
        let refusal = json!([{"type": "message", "content": [{"type": "refusal", "refusal": "no"}]}]);
        let refused = with("completed", Value::Null, refusal).unwrap();
        assert_eq!((&refused.stop_reason, refused.text()), (&StopReason::Refusal, "no".to_owned()));
        let failed =
            parse(br#"{"id":"r","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}"#)
                .unwrap_err();
        assert_eq!(
            (failed.kind(), failed.error_type(), failed.message()),
            (ModelErrorKind::Server, Some("server_error"), "boom")
        );
        assert_eq!(parse(b"<html>").unwrap_err().kind(), ModelErrorKind::MalformedResponse);
    }

    fn render_json(inputs: &ResponsesInputs<'_>) -> Value {
        serde_json::from_slice(&render(inputs).unwrap()).unwrap()
    }

    #[test]
    fn a_stateless_body_sends_everything_back_in_order() {
        let response = parse(tool_response().to_string().as_bytes()).unwrap();
        let history = vec![
            Message::user("weather in Paris and Rome?"),
            response.to_message("openai-responses"),
            Message::from_tool_results([
                ToolResult::success("call_a", "sunny"),
                ToolResult::failure("call_b", FailureKind::InvalidArguments, "bad json"),
            ]),
        ];
        let tools = [ToolDefinition::from_schema("weather", "Weather by city", json!({"type": "object"}))];
        let config = ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto);
        let request = ModelRequest::new(&history).with_system("be brief").with_tools(&tools).with_max_tokens(2000);
        let inputs = ResponsesInputs::from_request("gpt-5.2", None, None, Some(config), &request);
        assert_eq!(
            render_json(&inputs),
            json!({
                "model": "gpt-5.2",
                "instructions": "be brief",
                "input": [
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "weather in Paris and Rome?"}]},
                    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "**Plan** look up both"}],
                     "encrypted_content": "gAAAAABo-enc-1=="},
                    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking both up."}]},
                    {"type": "function_call", "call_id": "call_a", "name": "weather", "arguments": "{\"city\":\"Paris\"}"},
                    {"type": "function_call", "call_id": "call_b", "name": "weather", "arguments": "{\"city\":"},
                    {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
                    {"type": "function_call_output", "call_id": "call_b", "output": "Error: bad json"}
                ],
                "tools": [{"type": "function", "name": "weather", "description": "Weather by city",
                           "parameters": {"type": "object"}, "strict": false}],
                "max_output_tokens": 2000,
                "reasoning": {"effort": "high", "summary": "auto"},
                "store": false,
                "include": ["reasoning.encrypted_content"]
            })
        );
    }

    #[test]
    fn reasoning_from_elsewhere_has_no_item_and_chaining_sends_only_new_items() {
        let anthropic: Message = serde_json::from_value(json!({
            "role": "assistant", "provider": "anthropic",
            "content": [
                {"type": "reasoning", "text": ["hmm"], "opaque": {"provider": "anthropic", "state": {"type": "signed", "signature": "s"}}},
                {"type": "text", "text": "hello"}
            ]
        }))
        .unwrap();
        let history = [Message::user("hi"), anthropic];
        let inputs = ResponsesInputs::from_request("gpt-5.1", Some(100), Some(0.5), None, &ModelRequest::new(&history));
        let body = render_json(&inputs);
        assert_eq!(
            body["input"][1],
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]})
        );
        assert_eq!(body["input"].as_array().unwrap().len(), 2);
        assert_eq!((&body["temperature"], body.get("reasoning")), (&json!(0.5), None));

        let new = [Message::from_tool_results([ToolResult::success("call_a", "sunny")])];
        let chained = ResponsesInputs { messages: &new, previous_response_id: Some("resp_1"), store: true, ..inputs };
        let body = render_json(&chained);
        assert_eq!(
            (&body["store"], &body["previous_response_id"], &body["include"]),
            (&json!(true), &json!("resp_1"), &json!(["reasoning.encrypted_content"]))
        );
        assert_eq!(body["input"], json!([{"type": "function_call_output", "call_id": "call_a", "output": "sunny"}]));
    }

    #[test]
    fn strict_tools_send_the_strict_schema() {
        let tool = ToolDefinition::from_schema(
            "weather",
            "w",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        );
        let tools = [tool];
        let history = [Message::user("hi")];
        let request = ModelRequest::new(&history).with_tools(&tools).with_strict_tools(true);
        let body = render_json(&ResponsesInputs::from_request("gpt-5", None, None, None, &request));
        assert_eq!(body["tools"][0]["strict"], json!(tools[0].is_strict(true)));
        assert_eq!(&body["tools"][0]["parameters"], tools[0].schema(true));
    }

    #[test]
    fn error_bodies_parse() {
        let body = br#"{"error":{"message":"Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_1'.","type":"invalid_request_error","param":"input","code":null}}"#;
        let parsed = error_body(body).unwrap();
        assert_eq!(parsed.error_type.as_deref(), Some("invalid_request_error"));
        assert!(parsed.message.starts_with("Item 'fc_1'"));
        let coded = br#"{"error":{"message":"The encrypted content gAAA could not be verified.","type":"invalid_request_error","param":null,"code":"invalid_encrypted_content"}}"#;
        assert_eq!(error_body(coded).unwrap().error_type.as_deref(), Some("invalid_encrypted_content"));
        assert!(error_body(b"nope").is_none());
    }
}
