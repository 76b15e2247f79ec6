//! Neutral types to and from Ollama's chat wire format.

use std::borrow::Cow;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use super::PROVIDER;
use super::wire::{
    ChatRequestHead, ChatRequestTail, ChatResponse, ErrorResponse, FunctionDefinition, Options, RequestFunctionCall,
    RequestMessage, RequestToolCall, Role as WireRole, Tool,
};
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::model::{ModelRequest, ModelResponse};
use crate::providers::http::ApiError;
use crate::providers::shared::{close_body, object_input, open_body, result_text, write_element, write_messages};
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// The request body: the same bytes as serialising a `ChatRequest` of the
/// whole conversation, with the conversation's settled messages copied from
/// its wire cache.
pub(super) fn body(
    model: &str,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    request: &ModelRequest<'_>,
) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    open_body(&mut out, &ChatRequestHead { model })?;
    let system = request.system.filter(|s| !s.is_empty()).map(|system| system_message(system));
    write_messages(&mut out, WIRE_FORMAT, request, system.as_ref(), &mut |run, before, out| {
        run_messages(run, before, &mut |message| write_element(out, &message))
    })?;
    let tail = ChatRequestTail {
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
    };
    close_body(&mut out, &tail)?;
    Ok(out)
}

/// Names the message rendering of [`run_messages`] in a conversation's wire cache.
const WIRE_FORMAT: &str = "ollama-chat";

fn system_message(system: &str) -> RequestMessage<'_> {
    RequestMessage { role: WireRole::System, content: Cow::Borrowed(system), tool_calls: Vec::new(), tool_name: None }
}

/// The conversation in Ollama's shape (see [`run_messages`]).
#[cfg(test)]
fn messages<'a>(system: Option<&'a str>, messages: &'a [Message]) -> Vec<RequestMessage<'a>> {
    let mut out = Vec::new();
    out.extend(system.filter(|s| !s.is_empty()).map(system_message));
    let mut end = 0;
    for run in messages.chunk_by(|a, b| a.role == b.role) {
        end += run.len();
        run_messages(run, &messages[..end], &mut |message| {
            out.push(message);
            Ok(())
        })
        .unwrap();
    }
    out
}

/// One run of same-role messages in Ollama's shape, which the system prompt
/// precedes as a system message: merged into one message; tool results as
/// `tool` messages, before the rest of their user turn, each with the name of
/// the tool that answered (from the latest call with its id up to the end of
/// the run, `through`); assistant calls with object arguments.
fn run_messages<'a>(
    run: &'a [Message],
    through: &'a [Message],
    emit: &mut dyn FnMut(RequestMessage<'a>) -> serde_json::Result<()>,
) -> serde_json::Result<()> {
    let message = |role, content, tool_calls, tool_name| RequestMessage { role, content, tool_calls, tool_name };
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
            (Role::User, ContentBlock::ToolResult(result)) => {
                emit(message(WireRole::Tool, result_text(result), Vec::new(), tool_name(through, &result.call_id)))?;
            }
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
        emit(message(role, content, tool_calls, None))?;
    }
    Ok(())
}

/// The name of the latest call with `id` in `messages`. Searching backwards
/// finds a result's call in the message before its run at once.
fn tool_name<'a>(messages: &'a [Message], id: &str) -> Option<&'a str> {
    messages.iter().rev().find_map(|message| {
        message.content.iter().rev().find_map(|block| match block {
            ContentBlock::ToolCall(call) if call.id == id => Some(call.name.as_str()),
            _ => None,
        })
    })
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
        let input = tool_input(call.function.arguments);
        let id = match call.id.filter(|id| !id.is_empty()) {
            Some(id) => id,
            None => synthetic_id(wire.created_at.as_deref(), sequence, index, &call.function.name, &input),
        };
        content.push(ContentBlock::ToolCall(ToolCall { id, name: call.function.name, input }));
    }
    let has_calls = content.iter().any(|block| matches!(block, ContentBlock::ToolCall(_)));
    let stop_reason = stop_reason(wire.done_reason.as_deref(), has_calls);
    let usage = Usage::new(wire.prompt_eval_count.unwrap_or(0), wire.eval_count.unwrap_or(0));
    let mut response = ModelResponse::new(content).with_stop_reason(stop_reason).with_usage(usage);
    response.model = wire.model;
    response.with_provider(PROVIDER)
}

/// A call's arguments: an object as sent; a JSON string (some models)
/// parsed, or kept raw when it is not JSON; nothing at all an empty object.
pub(super) fn tool_input(arguments: Value) -> Value {
    match arguments {
        Value::String(raw) => serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other,
    }
}

pub(super) fn stop_reason(done_reason: Option<&str>, has_calls: bool) -> StopReason {
    match done_reason {
        _ if has_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some("length") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

pub(super) fn synthetic_id(created_at: Option<&str>, sequence: u64, index: usize, name: &str, input: &Value) -> String {
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
        let ids: Vec<String> = first.tool_calls().map(|c| c.id.clone()).collect();
        assert_ne!(ids[0], ids[1]);
        assert_eq!(ids, parse(0).tool_calls().map(|c| c.id.clone()).collect::<Vec<_>>());
        assert_ne!(ids[0], parse(1).tool_calls().next().unwrap().id);
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        assert_eq!((first.usage.input_tokens, first.usage.output_tokens), (12, 3));
    }
}

#[cfg(test)]
mod body_tests {
    use super::{body, messages};
    use crate::model::ModelRequest;
    use crate::providers::cache_checks::{Variant, check_bodies, check_flattened_view};
    use crate::providers::ollama::wire::{ChatRequest, FunctionDefinition, Options, Tool};

    /// Client settings that change from request to request, as when one
    /// conversation switches models.
    fn settings(variant: Variant) -> (&'static str, Option<u32>, Option<f32>) {
        match variant.index % 3 {
            0 => ("llama3.2", None, None),
            1 => ("qwen3", Some(512), Some(0.7)),
            _ => ("model \"q\"", None, Some(0.0)),
        }
    }

    fn cached_or_not(request: &ModelRequest<'_>, variant: Variant) -> Vec<u8> {
        let (model, max_tokens, temperature) = settings(variant);
        body(model, max_tokens, temperature, request).unwrap()
    }

    /// The body as the whole request serialised at once.
    fn reference(request: &ModelRequest<'_>, variant: Variant) -> Vec<u8> {
        let (model, max_tokens, temperature) = settings(variant);
        serde_json::to_vec(&ChatRequest {
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
        })
        .unwrap()
    }

    #[test]
    fn cached_bodies_are_byte_identical_and_render_each_settled_run_once() {
        check_bodies(super::WIRE_FORMAT, &cached_or_not, &reference);
    }

    #[test]
    fn a_flattened_view_is_rendered_without_the_cache() {
        check_flattened_view(&cached_or_not, &reference);
    }
}
