//! Neutral types to and from Ollama's chat wire format.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use super::PROVIDER;
use super::wire::{
    ChatRequest, ChatResponse, ErrorResponse, FunctionDefinition, Options, RequestFunctionCall, RequestMessage,
    RequestToolCall, Role as WireRole, Tool,
};
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::model::{ModelRequest, ModelResponse};
use crate::providers::http::ApiError;
use crate::providers::shared::{object_input, result_text};
use crate::stop_reason::StopReason;
use crate::usage::Usage;

pub(super) fn request<'a>(
    model: &'a str,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    request: &ModelRequest<'a>,
) -> ChatRequest<'a> {
    ChatRequest {
        model,
        messages: messages(request.system, request.messages),
        tools: request
            .tools
            .iter()
            .map(|tool| Tool {
                kind: "function",
                function: FunctionDefinition {
                    name: &tool.name,
                    description: &tool.description,
                    parameters: &tool.input_schema,
                },
            })
            .collect(),
        stream: false,
        options: Options {
            temperature: request.temperature.or(temperature),
            num_predict: request.max_tokens.or(max_tokens),
        },
    }
}

/// The conversation in Ollama's shape: the system prompt as a system
/// message, tool results as `tool` messages (with the tool's name, found from
/// the call they answer) before the rest of their user turn, assistant calls
/// with object arguments.
fn messages<'a>(system: Option<&'a str>, messages: &'a [Message]) -> Vec<RequestMessage<'a>> {
    let names: HashMap<&str, &str> =
        messages.iter().flat_map(Message::tool_calls).map(|call| (call.id.as_str(), call.name.as_str())).collect();
    let message = |role, content, tool_calls, tool_name| RequestMessage { role, content, tool_calls, tool_name };
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = system.filter(|s| !s.is_empty()) {
        out.push(message(WireRole::System, Cow::Borrowed(system), Vec::new(), None));
    }
    // One message per run of same-role turns, tool results first.
    for run in messages.chunk_by(|a, b| a.role == b.role) {
        let turn_role = run[0].role;
        let mut text: Vec<Cow<'a, str>> = Vec::new();
        let mut tool_calls = Vec::new();
        for block in run.iter().flat_map(|message| &message.content) {
            match (turn_role, block) {
                (_, ContentBlock::Text { text: t }) if !t.is_empty() => text.push(Cow::Borrowed(t)),
                (_, ContentBlock::Text { .. }) => {}
                (Role::Assistant, ContentBlock::ToolCall(call)) => tool_calls.push(RequestToolCall {
                    function: RequestFunctionCall { name: &call.name, arguments: object_input(&call.input) },
                }),
                (Role::User, ContentBlock::ToolResult(result)) => out.push(message(
                    WireRole::Tool,
                    result_text(result),
                    Vec::new(),
                    names.get(result.call_id.as_str()).copied(),
                )),
                (_, ContentBlock::ToolCall(call)) => {
                    text.push(Cow::Owned(format!("[called tool `{}` with {}]", call.name, call.input)));
                }
                (_, ContentBlock::ToolResult(result)) => {
                    text.push(Cow::Owned(format!("[tool result: {}]", result.content)));
                }
            }
        }
        let content = if text.len() == 1 { text.pop().unwrap_or_default() } else { Cow::Owned(text.join("\n")) };
        let role = match turn_role {
            Role::User => WireRole::User,
            Role::Assistant => WireRole::Assistant,
        };
        if !content.is_empty() || !tool_calls.is_empty() {
            out.push(message(role, content, tool_calls, None));
        }
    }
    out
}

/// Converts a response. Ollama's tool calls may come without ids: each gets
/// one derived from the response's timestamp, a per-client sequence number,
/// its position, name and arguments, so ids are stable for one response and
/// unique across a conversation.
pub(super) fn response(wire: ChatResponse, sequence: u64) -> ModelResponse {
    let mut content = Vec::new();
    if !wire.message.content.is_empty() {
        content.push(ContentBlock::Text { text: wire.message.content });
    }
    for (index, call) in wire.message.tool_calls.unwrap_or_default().into_iter().enumerate() {
        let input = match call.function.arguments {
            // Some models send the arguments as a JSON string.
            Value::String(raw) => serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
            Value::Null => Value::Object(serde_json::Map::new()),
            other => other,
        };
        let id = match call.id.filter(|id| !id.is_empty()) {
            Some(id) => id,
            None => synthetic_id(wire.created_at.as_deref(), sequence, index, &call.function.name, &input),
        };
        content.push(ContentBlock::ToolCall(ToolCall { id, name: call.function.name, input }));
    }
    let has_calls = content.iter().any(|block| matches!(block, ContentBlock::ToolCall(_)));
    let stop_reason = match wire.done_reason.as_deref() {
        _ if has_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some("length") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_owned()),
    };
    let usage = Usage::new(wire.prompt_eval_count.unwrap_or(0), wire.eval_count.unwrap_or(0));
    let mut response = ModelResponse::new(content).with_stop_reason(stop_reason).with_usage(usage);
    response.model = wire.model;
    response.with_provider(PROVIDER)
}

fn synthetic_id(created_at: Option<&str>, sequence: u64, index: usize, name: &str, input: &Value) -> String {
    // DefaultHasher::new() has fixed keys, so the same inputs give the same id.
    let mut hasher = DefaultHasher::new();
    (created_at, sequence, index, name, input.to_string()).hash(&mut hasher);
    format!("call_{:016x}", hasher.finish())
}

/// Parses `{"error": "..."}`.
pub(super) fn error_body(body: &[u8]) -> Option<ApiError> {
    let parsed: ErrorResponse = serde_json::from_slice(body).ok()?;
    Some(ApiError { message: parsed.error, error_type: None })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::response;
    use crate::stop_reason::StopReason;

    #[test]
    fn calls_without_ids_get_stable_unique_ones() {
        let body = json!({
            "model": "llama3.2", "created_at": "2024-07-22T20:33:28.123648Z",
            "message": {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "weather", "arguments": {"city": "Paris"}}},
                {"function": {"name": "weather", "arguments": {"city": "Paris"}}}
            ]},
            "done_reason": "stop", "done": true, "prompt_eval_count": 12, "eval_count": 3
        });
        let parse = |sequence| response(serde_json::from_value(body.clone()).unwrap(), sequence);
        let first = parse(0);
        let ids: Vec<String> = first.tool_calls_iter().map(|c| c.id.clone()).collect();
        assert_ne!(ids[0], ids[1]);
        assert_eq!(ids, parse(0).tool_calls_iter().map(|c| c.id.clone()).collect::<Vec<_>>());
        assert_ne!(ids[0], parse(1).tool_calls_iter().next().unwrap().id);
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        assert_eq!((first.usage.input_tokens, first.usage.output_tokens), (12, 3));
    }
}
