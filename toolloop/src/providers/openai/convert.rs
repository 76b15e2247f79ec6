//! Neutral types to and from the OpenAI Chat Completions wire format.

use std::borrow::Cow;

use serde_json::Value;

use super::PROVIDER;
use super::wire::{
    ChatRequestHead, ChatRequestTail, ChatResponse, ErrorResponse, FunctionDefinition, RequestFunctionCall,
    RequestMessage, RequestToolCall, Tool,
};
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::model::{ModelError, ModelErrorKind, ModelRequest, ModelResponse};
use crate::providers::http::ApiError;
use crate::providers::shared::{close_body, open_body, result_text, write_element, write_messages};
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// The client settings a request body depends on.
pub(super) struct Settings<'a> {
    pub(super) model: &'a str,
    pub(super) max_tokens: Option<u32>,
    pub(super) legacy_max_tokens: bool,
    pub(super) temperature: Option<f32>,
}

/// The request body: the same bytes as serialising a `ChatRequest` of the
/// whole conversation, with the conversation's settled messages copied from
/// its wire cache.
pub(super) fn body(settings: &Settings<'_>, request: &ModelRequest<'_>) -> serde_json::Result<Vec<u8>> {
    let max_tokens = request.max_tokens.or(settings.max_tokens);
    let (max_completion_tokens, max_tokens) =
        if settings.legacy_max_tokens { (None, max_tokens) } else { (max_tokens, None) };
    let mut out = Vec::new();
    open_body(&mut out, &ChatRequestHead { model: settings.model })?;
    let system = request.system.filter(|s| !s.is_empty()).map(|content| RequestMessage::System { content });
    write_messages(&mut out, WIRE_FORMAT, request, system.as_ref(), &mut |run, _, out| write_run(run, out))?;
    let tail = ChatRequestTail {
        tools: tools(request),
        max_completion_tokens,
        max_tokens,
        temperature: request.temperature.or(settings.temperature),
    };
    close_body(&mut out, &tail)?;
    Ok(out)
}

/// Names the message rendering of [`write_run`] in a conversation's wire cache.
const WIRE_FORMAT: &str = "openai-chat";

fn tools<'a>(request: &ModelRequest<'a>) -> Vec<Tool<'a>> {
    request
        .tools
        .iter()
        .map(|tool| Tool {
            kind: "function",
            function: FunctionDefinition {
                name: &tool.name,
                description: &tool.description,
                parameters: tool.schema(request.strict_tools),
                strict: tool.is_strict(request.strict_tools).then_some(true),
            },
        })
        .collect()
}

/// Writes one run of same-role messages in the API's shape (see [`run_messages`]).
fn write_run(run: &[Message], out: &mut Vec<u8>) -> serde_json::Result<()> {
    run_messages(run, &mut |message| write_element(out, &message))
}

/// The conversation in the API's shape (see [`run_messages`]).
#[cfg(test)]
fn messages<'a>(system: Option<&'a str>, messages: &'a [Message]) -> Vec<RequestMessage<'a>> {
    let mut out = Vec::new();
    if let Some(system) = system.filter(|s| !s.is_empty()) {
        out.push(RequestMessage::System { content: system });
    }
    for run in messages.chunk_by(|a, b| a.role == b.role) {
        run_messages(run, &mut |message| {
            out.push(message);
            Ok(())
        })
        .unwrap();
    }
    out
}

/// One run of same-role messages in the API's shape, which the system prompt
/// precedes as a system message: the run merged into one message; each tool
/// result as a `tool` message answering its `tool_call_id`, before the rest of
/// its user turn (so that tool messages directly follow the assistant's tool
/// calls); an assistant turn's text as its content and its calls as
/// `tool_calls` with JSON-string arguments.
fn run_messages<'a>(
    run: &'a [Message],
    emit: &mut dyn FnMut(RequestMessage<'a>) -> serde_json::Result<()>,
) -> serde_json::Result<()> {
    let role = run[0].role;
    let mut text: Vec<Cow<'a, str>> = Vec::new();
    let mut tool_calls = Vec::new();
    for block in run.iter().flat_map(|message| &message.content) {
        match (role, block) {
            (_, ContentBlock::Text { text: t }) if !t.is_empty() => text.push(Cow::Borrowed(t)),
            (_, ContentBlock::Text { .. }) => {}
            (Role::Assistant, ContentBlock::ToolCall(call)) => tool_calls.push(RequestToolCall {
                id: &call.id,
                kind: "function",
                function: RequestFunctionCall { name: &call.name, arguments: arguments(&call.input) },
            }),
            (Role::User, ContentBlock::ToolResult(result)) => {
                emit(RequestMessage::Tool { tool_call_id: &result.call_id, content: result_text(result) })?;
            }
            // Not expressible in this turn: keep it as text rather than lose it.
            (_, ContentBlock::ToolCall(call)) => {
                text.push(Cow::Owned(format!("[called tool `{}` with {}]", call.name, call.input)));
            }
            (_, ContentBlock::ToolResult(result)) => {
                text.push(Cow::Owned(format!("[tool result: {}]", result.content)));
            }
        }
    }
    let content = join(text);
    match role {
        Role::User => {
            if let Some(content) = content {
                emit(RequestMessage::User { content })?;
            }
        }
        Role::Assistant => {
            if content.is_some() || !tool_calls.is_empty() {
                emit(RequestMessage::Assistant { content, tool_calls })?;
            }
        }
    }
    Ok(())
}

fn join(mut parts: Vec<Cow<'_, str>>) -> Option<Cow<'_, str>> {
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(Cow::Owned(parts.join("\n"))),
    }
}

/// A call's arguments as the JSON string the API expects. Arguments that were
/// not valid JSON were kept as the raw text, and go back exactly as the model
/// wrote them.
fn arguments(input: &Value) -> Cow<'_, str> {
    match input {
        Value::String(raw) => Cow::Borrowed(raw),
        other => Cow::Owned(other.to_string()),
    }
}

/// A call's arguments from the JSON string the API sends. Text that is not
/// valid JSON is kept as `Value::String(raw)`, so executing the call reports
/// the parse error to the model, which can correct it. An empty string (some
/// servers send it for tools without parameters) is an empty object.
fn parse_arguments(arguments: Value) -> Value {
    match arguments {
        Value::String(raw) if raw.trim().is_empty() => Value::Object(serde_json::Map::new()),
        Value::String(raw) => serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
        other => other,
    }
}

impl TryFrom<ChatResponse> for ModelResponse {
    type Error = ModelError;

    fn try_from(wire: ChatResponse) -> Result<Self, ModelError> {
        let Some(choice) = wire.choices.into_iter().next() else {
            return Err(ModelError::new(ModelErrorKind::MalformedResponse, PROVIDER, "the response has no choices"));
        };
        let message = choice.message;
        let mut content = Vec::new();
        if let Some(text) = message.content.filter(|t| !t.is_empty()) {
            content.push(ContentBlock::Text { text });
        }
        let refused = message.refusal.is_some();
        if let Some(refusal) = message.refusal {
            content.push(ContentBlock::Text { text: refusal });
        }
        for (index, call) in message.tool_calls.unwrap_or_default().into_iter().enumerate() {
            let input = parse_arguments(call.function.arguments);
            // Results are matched to calls by id, so a missing or empty one
            // (some compatible servers) gets a unique one of ours.
            let id = if call.id.is_empty() { synthetic_id(index, &call.function.name) } else { call.id };
            content.push(ContentBlock::ToolCall(ToolCall { id, name: call.function.name, input }));
        }
        let has_calls = content.iter().any(|block| matches!(block, ContentBlock::ToolCall(_)));
        let stop_reason =
            if refused { StopReason::Refusal } else { stop_reason_from(choice.finish_reason.as_deref(), has_calls) };
        let mut response = ModelResponse::new(content).with_stop_reason(stop_reason).with_usage(usage(wire.usage));
        response.model = wire.model;
        Ok(response.with_provider(PROVIDER))
    }
}

/// A tool call id unique across processes and calls: the clock, a process
/// counter and the call's position, hashed.
pub(super) fn synthetic_id(index: usize, name: &str) -> String {
    use std::hash::{DefaultHasher, Hash, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};

    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut hasher = DefaultHasher::new();
    (now.as_nanos(), SEQUENCE.fetch_add(1, Ordering::Relaxed), index, name).hash(&mut hasher);
    format!("call_{:016x}", hasher.finish())
}

/// Usage with cached prompt tokens reported as cache reads and taken out of
/// the input tokens (OpenAI counts them in `prompt_tokens`), so that
/// [`Usage::total`] does not count them twice.
pub(super) fn usage(wire: Option<super::wire::Usage>) -> Usage {
    let Some(wire) = wire else { return Usage::default() };
    let cached = wire.prompt_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0);
    Usage {
        input_tokens: wire.prompt_tokens.saturating_sub(cached),
        output_tokens: wire.completion_tokens,
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    }
}

pub(super) fn stop_reason_from(reason: Option<&str>, has_calls: bool) -> StopReason {
    match reason {
        // Some compatible servers say "stop" after tool calls.
        Some("stop") | None if has_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::ContentFilter,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

/// Parses `{"error":{"message","type","param","code"}}`; the error type is
/// the `code` when it is a string (`insufficient_quota`), else the `type`.
pub(super) fn error_body(body: &[u8]) -> Option<ApiError> {
    let parsed: ErrorResponse = serde_json::from_slice(body).ok()?;
    let code = match parsed.error.code {
        Some(Value::String(code)) => Some(code),
        _ => None,
    };
    Some(ApiError { message: parsed.error.message, error_type: code.or(parsed.error.kind) })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{error_body, parse_arguments, stop_reason_from, usage};
    use crate::model::ModelResponse;
    use crate::stop_reason::StopReason;
    use crate::usage::Usage;

    #[test]
    fn calls_without_ids_or_with_empty_ids_get_unique_ones() {
        // llama.cpp server / NIM omit the id; LM Studio has sent "".
        let body = json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "tool_calls": [
            {"type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}},
            {"id": "call_kept", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        ]}}]});
        let wire: super::super::wire::ChatResponse = serde_json::from_value(body).unwrap();
        let response = ModelResponse::try_from(wire).unwrap();
        let ids: Vec<&str> = response.tool_calls().map(|call| call.id.as_str()).collect();
        assert_eq!(ids.len(), 3);
        assert!(ids[0].starts_with("call_") && ids[1].starts_with("call_"), "{ids:?}");
        assert_ne!(ids[0], ids[1]);
        assert_eq!(ids[2], "call_kept");
        assert_eq!(response.stop_reason, StopReason::ToolUse);
    }

    #[test]
    fn arguments_that_are_not_json_are_kept_raw() {
        assert_eq!(parse_arguments(json!("{\"a\": 1}")), json!({"a": 1}));
        assert_eq!(parse_arguments(json!("{\"a\": 1,")), json!("{\"a\": 1,"));
        assert_eq!(parse_arguments(json!("")), json!({}));
        assert_eq!(parse_arguments(json!({"a": 1})), json!({"a": 1}));
    }

    #[test]
    fn cached_tokens_are_cache_reads_not_input() {
        let wire = serde_json::from_value(json!({
            "prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
            "prompt_tokens_details": {"cached_tokens": 60}
        }))
        .unwrap();
        assert_eq!(
            usage(Some(wire)),
            Usage { input_tokens: 40, output_tokens: 7, cache_read_tokens: 60, cache_write_tokens: 0 }
        );
        assert_eq!(usage(None), Usage::default());
    }

    #[test]
    fn finish_reasons_map() {
        assert_eq!(stop_reason_from(Some("stop"), false), StopReason::EndTurn);
        assert_eq!(stop_reason_from(Some("stop"), true), StopReason::ToolUse);
        assert_eq!(stop_reason_from(Some("tool_calls"), true), StopReason::ToolUse);
        assert_eq!(stop_reason_from(Some("length"), false), StopReason::MaxTokens);
        assert_eq!(stop_reason_from(Some("content_filter"), false), StopReason::ContentFilter);
        assert_eq!(stop_reason_from(Some("weird"), false), StopReason::Other("weird".into()));
    }

    #[test]
    fn error_bodies_parse() {
        let body = br#"{"error":{"message":"You exceeded your quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        let parsed = error_body(body).unwrap();
        assert_eq!(parsed.message, "You exceeded your quota");
        assert_eq!(parsed.error_type.as_deref(), Some("insufficient_quota"));
        let body = br#"{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}"#;
        assert_eq!(error_body(body).unwrap().error_type.as_deref(), Some("invalid_request_error"));
    }
}

#[cfg(test)]
mod message_tests {
    use serde_json::json;

    use super::messages;
    use crate::message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};

    #[test]
    fn runs_of_one_role_become_one_message_with_tool_messages_first() {
        let history = vec![
            Message::user("hi"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolCall(ToolCall::new("a", "t", json!({"x": 1})))],
                provider: None,
            },
            Message::assistant("and another"),
            Message::from_tool_results([ToolResult::success("a", "1")]),
            Message::user("note"),
            Message::from_tool_results([ToolResult::failure("b", FailureKind::Denied, "no")]),
        ];
        assert_eq!(
            serde_json::to_value(messages(None, &history)).unwrap(),
            json!([
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "and another", "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{\"x\":1}"}}]},
                {"role": "tool", "tool_call_id": "a", "content": "1"},
                {"role": "tool", "tool_call_id": "b", "content": "Error: no"},
                {"role": "user", "content": "note"}
            ])
        );
    }
}

#[cfg(test)]
mod body_tests {
    use super::{Settings, body, messages, tools};
    use crate::model::ModelRequest;
    use crate::providers::cache_checks::{Variant, check_bodies, check_flattened_view};
    use crate::providers::openai::wire::ChatRequest;

    /// Client settings that change from request to request, as when one
    /// conversation switches models.
    fn settings(variant: Variant) -> Settings<'static> {
        match variant.index % 3 {
            0 => Settings { model: "gpt-4.1", max_tokens: None, legacy_max_tokens: false, temperature: None },
            1 => Settings { model: "gpt-5", max_tokens: Some(100), legacy_max_tokens: false, temperature: Some(0.5) },
            _ => Settings { model: "local \"q\"", max_tokens: Some(9), legacy_max_tokens: true, temperature: None },
        }
    }

    fn cached_or_not(request: &ModelRequest<'_>, variant: Variant) -> Vec<u8> {
        body(&settings(variant), request).unwrap()
    }

    /// The body as the whole request serialised at once.
    fn reference(request: &ModelRequest<'_>, variant: Variant) -> Vec<u8> {
        let settings = settings(variant);
        let max_tokens = request.max_tokens.or(settings.max_tokens);
        let (max_completion_tokens, max_tokens) =
            if settings.legacy_max_tokens { (None, max_tokens) } else { (max_tokens, None) };
        serde_json::to_vec(&ChatRequest {
            model: settings.model,
            messages: messages(request.system, request.messages),
            tools: tools(request),
            max_completion_tokens,
            max_tokens,
            temperature: request.temperature.or(settings.temperature),
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
