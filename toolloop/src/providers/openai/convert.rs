//! Neutral types to and from the OpenAI Chat Completions wire format.

use std::borrow::Cow;

use serde_json::Value;

use super::prompt_cache::{PromptCacheSettings, PromptCaching};
use super::reasoning::openai_effort;
use super::wire::{
    ChatRequestHead, ChatRequestTail, ChatResponse, ErrorResponse, JsonSchemaFormat, MessageContent,
    RequestFunctionCall, RequestMessage, RequestToolCall, ResponseFormat, StreamOptions,
};
use super::{DEFAULT_BASE_URL, DEFAULT_MODEL, PROVIDER};
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::model::{ModelError, ModelErrorKind, ModelRequest, ModelResponse, ResponseSchema, ResponseSchemaSupport};
use crate::providers::convert::{ChatTurn, FunctionTool, function_tools, result_text, synthetic_call_id};
use crate::providers::http::{ApiError, ApiKey, Body, BodyResult, CallSettings, Format, write_element};
use crate::reasoning::Reasoning;
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// The OpenAI Chat Completions wire format: the `W` of
/// [`OpenAi`](super::OpenAi), holding its settings. Users never name it (it
/// is public only to be the alias's parameter).
#[derive(Clone, Debug, Default)]
#[allow(unreachable_pub)]
pub struct OpenAiChat {
    pub(super) legacy_max_tokens: bool,
    prompt_cache: PromptCacheSettings,
}

impl PromptCaching for OpenAiChat {
    fn prompt_cache_settings(&mut self) -> &mut PromptCacheSettings {
        &mut self.prompt_cache
    }
}

impl Format for OpenAiChat {
    const PROVIDER: &'static str = PROVIDER;
    const PATH: &'static str = "/chat/completions";
    const DEFAULT_BASE_URL: &'static str = DEFAULT_BASE_URL;
    const DEFAULT_MODEL: &'static str = DEFAULT_MODEL;
    const API_KEY: ApiKey = ApiKey::RequiredUnlessBaseUrl("OPENAI_API_KEY");
    const BASE_URL_VARIABLE: &'static str = "OPENAI_BASE_URL";

    type Response = ChatResponse;
    type Decoder = super::ChatStreamDecoder;

    fn stream_decoder(&self) -> Self::Decoder {
        super::ChatStreamDecoder::new()
    }

    /// The same bytes as serialising a `ChatRequest` of the whole request.
    fn write_body(&self, call: CallSettings<'_>, request: &ModelRequest<'_>, body: &mut Body<'_>) -> BodyResult {
        let (max_completion_tokens, max_tokens) =
            if self.legacy_max_tokens { (None, call.max_tokens) } else { (call.max_tokens, None) };
        body.open(&ChatRequestHead { model: call.model })?;
        let system = request.system.filter(|s| !s.is_empty()).map(|content| RequestMessage::System { content });
        body.messages("messages", system.as_ref())?;
        body.close(&ChatRequestTail {
            tools: tools(request),
            max_completion_tokens,
            max_tokens,
            temperature: call.temperature,
            prompt_cache_key: self.prompt_cache.key(),
            prompt_cache_retention: self.prompt_cache.retention(),
            reasoning_effort: call.reasoning.and_then(|reasoning| openai_effort(reasoning.effort, call.model)),
            response_format: request.response_schema.map(response_format),
            stream: call.stream,
            stream_options: call.stream.then_some(StreamOptions { include_usage: true }),
        })
    }

    /// Every schema: strict when it can be made strict, else `strict: false`.
    fn response_schema_support(&self, _: &str, _: &ResponseSchema) -> ResponseSchemaSupport {
        ResponseSchemaSupport::WithTools
    }

    fn render_run(&self, run: &[Message], _: &[Message], out: &mut Vec<u8>) -> serde_json::Result<()> {
        run_messages(run, &mut |message| write_element(out, &message))
    }

    fn response(&self, wire: ChatResponse) -> Result<ModelResponse, ModelError> {
        ModelResponse::try_from(wire)
    }

    fn error_body(body: &[u8]) -> Option<ApiError> {
        error_body(body)
    }
}

/// Parses OpenAI's error body, `{"error":{"message","type","param","code"}}`,
/// for Chat Completions and the Responses API alike; the error type is the
/// `code` when it is a string (`insufficient_quota`), else the `type`.
pub(crate) fn error_body(body: &[u8]) -> Option<ApiError> {
    let parsed: ErrorResponse = serde_json::from_slice(body).ok()?;
    let code = match parsed.error.code {
        Some(Value::String(code)) => Some(code),
        _ => None,
    };
    Some(ApiError::new(parsed.error.message, code.or(parsed.error.kind)))
}

/// `response_format` for `schema`: its strict shape with `strict: true`
/// when there is one, else the plain schema with `strict: false`.
fn response_format(schema: &ResponseSchema) -> ResponseFormat<'_> {
    let (json, strict) = schema.strict_or_plain();
    ResponseFormat {
        kind: "json_schema",
        json_schema: JsonSchemaFormat {
            name: &schema.name,
            description: schema.description.as_deref(),
            schema: json,
            strict,
        },
    }
}

fn tools<'a>(request: &ModelRequest<'a>) -> Vec<FunctionTool<'a>> {
    function_tools(request.tools, request.strict_tools)
}

/// The conversation in the API's shape (see [`run_messages`]).
#[cfg(test)]
fn messages<'a>(system: Option<&'a str>, messages: &'a [Message]) -> Vec<RequestMessage<'a>> {
    let system = system.filter(|s| !s.is_empty()).map(|content| RequestMessage::System { content });
    let rest = crate::providers::cache_checks::wire_messages(messages, |run, _, emit| run_messages(run, emit));
    system.into_iter().chain(rest).collect()
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
    let turn = ChatTurn::of(run, &mut |result| {
        emit(RequestMessage::Tool { tool_call_id: &result.call_id, content: result_text(result) })
    })?;
    match run[0].role {
        Role::User => match turn.text {
            Some(content) => emit(RequestMessage::User { content }),
            None => Ok(()),
        },
        Role::Assistant if turn.text.is_none() && turn.calls.is_empty() => Ok(()),
        Role::Assistant => {
            let tool_calls = turn
                .calls
                .iter()
                .map(|call| RequestToolCall {
                    id: &call.id,
                    kind: "function",
                    function: RequestFunctionCall { name: &call.name, arguments: arguments(&call.input) },
                })
                .collect();
            emit(RequestMessage::Assistant { content: turn.text, tool_calls })
        }
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
        // Missing or null: a call without arguments.
        Value::Null => Value::Object(serde_json::Map::new()),
        // An object (vLLM, some gateways) is already what the tool wants.
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
        let calls = message.tool_calls.unwrap_or_default();
        // Sized exactly: the content becomes a message every later request
        // of the conversation holds (a vector grown one block at a time
        // would hold room for four).
        let blocks = usize::from(message.reasoning_content.as_ref().is_some_and(|t| !t.is_empty()))
            + usize::from(message.content.is_some())
            + usize::from(message.refusal.is_some())
            + calls.len();
        let mut content = Vec::with_capacity(blocks);
        // Read only: Chat Completions has no field to send reasoning back in.
        if let Some(reasoning) = message.reasoning_content.filter(|t| !t.is_empty()) {
            content.push(ContentBlock::Reasoning(Reasoning::from_text(reasoning)));
        }
        if let Some(text) = message.content.map(MessageContent::into_text).filter(|t| !t.is_empty()) {
            content.push(ContentBlock::Text { text });
        }
        let refused = message.refusal.is_some();
        if let Some(refusal) = message.refusal {
            content.push(ContentBlock::Text { text: refusal });
        }
        for (index, call) in calls.into_iter().enumerate() {
            let input = parse_arguments(call.function.arguments);
            // Results are matched to calls by id, so a missing or empty one
            // (some compatible servers) gets a unique one of ours.
            let id = if call.id.is_empty() { synthetic_call_id("call_", index, &call.function.name) } else { call.id };
            content.push(ContentBlock::ToolCall(ToolCall { id, name: call.function.name, input }));
        }
        let has_calls = content.iter().any(|block| matches!(block, ContentBlock::ToolCall(_)));
        let stop_reason =
            if refused { StopReason::Refusal } else { stop_reason_from(choice.finish_reason.as_deref(), has_calls) };
        let mut response = ModelResponse::new(content).with_stop_reason(stop_reason).with_usage(usage(wire.usage));
        response.model = wire.model;
        response.id = wire.id;
        Ok(response.with_provider(PROVIDER))
    }
}

/// Usage with cached prompt tokens reported as cache reads and taken out of
/// the input tokens (OpenAI counts them in `prompt_tokens`), so that
/// [`Usage::total`] does not count them twice.
pub(super) fn usage(wire: Option<super::wire::Usage>) -> Usage {
    let Some(wire) = wire else { return Usage::default() };
    let cached = wire.prompt_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0);
    let reasoning_tokens = wire.completion_tokens_details.and_then(|d| d.reasoning_tokens).unwrap_or(0);
    Usage {
        input_tokens: wire.prompt_tokens.saturating_sub(cached),
        output_tokens: wire.completion_tokens,
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        reasoning_tokens,
    }
}

pub(super) fn stop_reason_from(reason: Option<&str>, has_calls: bool) -> StopReason {
    match reason {
        // Some compatible servers say "stop" after tool calls.
        // Compatible servers' spellings: llama.cpp/TGI "eos", "eos_token",
        // Anthropic-style gateways "end_turn".
        Some("stop" | "eos" | "eos_token" | "end_turn") | None if has_calls => StopReason::ToolUse,
        Some("stop" | "eos" | "eos_token" | "end_turn") | None => StopReason::EndTurn,
        Some("tool_calls" | "function_call" | "tool_call" | "tool_use") => StopReason::ToolUse,
        Some("length" | "max_tokens" | "model_length") => StopReason::MaxTokens,
        Some("stop_sequence") => StopReason::StopSequence,
        Some("content_filter") => StopReason::ContentFilter,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{parse_arguments, stop_reason_from, usage};
    use crate::model::ModelResponse;
    use crate::providers::http::Format;
    use crate::providers::openai::OpenAiChat;
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
    fn response_content_holds_no_spare_room() {
        // Every later request of the conversation holds this content.
        let body = json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": "Let me look.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"key\":\"a\"}"}}
        ]}}]});
        let wire: super::super::wire::ChatResponse = serde_json::from_value(body).unwrap();
        let response = ModelResponse::try_from(wire).unwrap();
        assert_eq!((response.content.len(), response.content.capacity()), (2, 2));
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
            Usage {
                input_tokens: 40,
                output_tokens: 7,
                cache_read_tokens: 60,
                cache_write_tokens: 0,
                reasoning_tokens: 0
            }
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
        let parsed = OpenAiChat::error_body(body).unwrap();
        assert_eq!(parsed.message, "You exceeded your quota");
        assert_eq!(parsed.error_type.as_deref(), Some("insufficient_quota"));
        let body = br#"{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}"#;
        assert_eq!(OpenAiChat::error_body(body).unwrap().error_type.as_deref(), Some("invalid_request_error"));
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
            Message::new(Role::Assistant, vec![ContentBlock::ToolCall(ToolCall::new("a", "t", json!({"x": 1})))]),
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
    use super::{messages, tools};
    use crate::model::ModelRequest;
    use crate::providers::openai::wire::ChatRequest;
    use crate::providers::openai::{OpenAi, PROVIDER};

    /// Models whose settings differ, as when one conversation switches
    /// models; the first two share a cache.
    fn models() -> Vec<OpenAi> {
        let base = OpenAi::builder().api_key("k").model("gpt-4.1").build().unwrap();
        vec![
            base.clone(),
            base.with_model("gpt-5"),
            OpenAi::builder()
                .base_url("http://127.0.0.1:9/v1")
                .model("local \"q\"")
                .max_tokens(9)
                .temperature(0.5)
                .legacy_max_tokens(true)
                .build()
                .unwrap(),
        ]
    }

    /// The body as the whole request serialised at once.
    fn reference(model: &OpenAi, request: &ModelRequest<'_>) -> Vec<u8> {
        let max_tokens = request.max_tokens.or(model.max_tokens);
        let legacy = model.endpoint().starts_with("http://127.0.0.1");
        let (max_completion_tokens, max_tokens) = if legacy { (None, max_tokens) } else { (max_tokens, None) };
        let view = request.view_for(PROVIDER);
        serde_json::to_vec(&ChatRequest {
            model: &model.model,
            messages: messages(request.system, &view),
            tools: tools(request),
            max_completion_tokens,
            max_tokens,
            temperature: request.temperature.or(model.temperature),
            reasoning_effort: None,
            stream: false,
            stream_options: None,
        })
        .unwrap()
    }

    crate::providers::cache_checks::body_cache_tests!(models, reference);
}
