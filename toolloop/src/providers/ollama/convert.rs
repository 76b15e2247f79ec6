//! Neutral types to and from Ollama's chat wire format.

use std::borrow::Cow;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::reasoning::ollama_think;
use super::wire::{
    ChatRequestHead, ChatRequestTail, ChatResponse, ErrorResponse, Options, RequestFunctionCall, RequestMessage,
    RequestToolCall, Role as WireRole,
};
use super::{DEFAULT_HOST, DEFAULT_MODEL, PROVIDER};
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::model::{ModelError, ModelErrorKind, ModelRequest, ModelResponse, ResponseSchema, ResponseSchemaSupport};
use crate::providers::convert::{ChatTurn, FunctionTool, function_tools, object_input, result_text};
use crate::providers::http::{
    ApiError, ApiKey, Body, BodyResult, CallSettings, Format, Framing, RequestHeaders, write_element,
};
use crate::reasoning::Reasoning;
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// Ollama's chat wire format: the `W` of [`Ollama`](super::Ollama), holding
/// its settings. Users never name it (it is public only to be the alias's
/// parameter).
#[derive(Clone, Debug, Default)]
#[allow(unreachable_pub)]
pub struct OllamaChat {
    /// Numbers responses, to keep synthesised tool call ids unique.
    sequence: Arc<AtomicU64>,
    /// The context window asked for (`options.num_ctx`).
    pub(super) num_ctx: Option<u32>,
}

impl Format for OllamaChat {
    const PROVIDER: &'static str = PROVIDER;
    const PATH: &'static str = "/api/chat";
    const DEFAULT_BASE_URL: &'static str = DEFAULT_HOST;
    const DEFAULT_MODEL: &'static str = DEFAULT_MODEL;
    const API_KEY: ApiKey = ApiKey::Optional;
    const BASE_URL_VARIABLE: &'static str = "OLLAMA_HOST";

    const FRAMING: Framing = Framing::Ndjson;

    type Response = ChatResponse;
    type Decoder = super::ChatStreamDecoder;

    fn stream_decoder(&self) -> Self::Decoder {
        super::ChatStreamDecoder::new(self.sequence.fetch_add(1, Ordering::Relaxed))
    }

    fn base_url_from_env(value: &str) -> String {
        super::host_url(value)
    }

    /// The same bytes as serialising a `ChatRequest` of the whole request.
    fn write_body(&self, call: CallSettings<'_>, request: &ModelRequest<'_>, body: &mut Body<'_>) -> BodyResult {
        body.open(&ChatRequestHead { model: call.model })?;
        let system = request.system.filter(|s| !s.is_empty()).map(system_message);
        body.messages("messages", system.as_ref())?;
        body.close(&ChatRequestTail {
            tools: tools(request),
            stream: call.stream,
            truncate: false,
            options: Options { temperature: call.temperature, num_predict: call.max_tokens, num_ctx: self.num_ctx },
            think: call.reasoning.map(|reasoning| ollama_think(reasoning.effort, call.model)),
            format: request.response_schema.map(|schema| &schema.schema),
        })
    }

    /// Only without tools: the schema becomes a grammar over the whole
    /// answer, which leaves no room for a tool call.
    fn response_schema_support(&self, _: &str, _: &ResponseSchema) -> ResponseSchemaSupport {
        ResponseSchemaSupport::WithoutTools
    }

    /// A response schema together with tools is an error here: the server
    /// would hold the answer to the schema, so the model could never call
    /// a tool (its calls come back empty).
    fn prepare(&self, _: CallSettings<'_>, request: &ModelRequest<'_>) -> Result<RequestHeaders, ModelError> {
        if request.response_schema.is_some() && !request.tools.is_empty() {
            return Err(ModelError::new(
                ModelErrorKind::InvalidRequest,
                PROVIDER,
                "Ollama cannot follow a response schema (`format`) in a request that offers tools: the schema's \
                 grammar leaves the model no way to call one; use the output tool or the prompted output mode",
            ));
        }
        Ok(Vec::new())
    }

    fn render_run(&self, run: &[Message], through: &[Message], out: &mut Vec<u8>) -> serde_json::Result<()> {
        run_messages(run, through, &mut |message| write_element(out, &message))
    }

    /// A server that truncated anyway reports a prompt no longer than the
    /// window for a body that cannot have fit it.
    fn check_prompt(&self, prompt_tokens: u64, body_bytes: usize) -> Result<(), ModelError> {
        let Some(window) = self.num_ctx.map(u64::from) else { return Ok(()) };
        let at_least = u64::try_from(body_bytes / 6).unwrap_or(u64::MAX);
        match prompt_tokens {
            // 0: the server did not say (`prompt_eval_count` missing).
            counted if counted > 0 && at_least > window && counted <= window => Err(ModelError::new(
                ModelErrorKind::ContextOverflow,
                PROVIDER,
                format!(
                    "the server truncated the prompt: it counted {counted} tokens, but the request needs at least \
                     {at_least} and the context window (num_ctx) is {window}"
                ),
            )
            .with_context_overflow(Some(at_least), Some(window))),
            _ => Ok(()),
        }
    }

    fn response(&self, wire: ChatResponse) -> Result<ModelResponse, ModelError> {
        Ok(response(wire, self.sequence.fetch_add(1, Ordering::Relaxed)))
    }

    /// Parses `{"error": "..."}`.
    fn error_body(body: &[u8]) -> Option<ApiError> {
        let parsed: ErrorResponse = serde_json::from_slice(body).ok()?;
        Some(ApiError::new(parsed.error, None))
    }
}

fn tools<'a>(request: &ModelRequest<'a>) -> Vec<FunctionTool<'a>> {
    // Ollama has no strict mode.
    function_tools(request.tools, false)
}

fn system_message(system: &str) -> RequestMessage<'_> {
    RequestMessage {
        role: WireRole::System,
        content: Cow::Borrowed(system),
        thinking: None,
        tool_calls: Vec::new(),
        tool_name: None,
    }
}

/// The conversation in Ollama's shape (see [`run_messages`]).
#[cfg(test)]
fn messages<'a>(system: Option<&'a str>, messages: &'a [Message]) -> Vec<RequestMessage<'a>> {
    let system = system.filter(|s| !s.is_empty()).map(system_message);
    let rest = crate::providers::cache_checks::wire_messages(messages, run_messages);
    system.into_iter().chain(rest).collect()
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
    let message =
        |role, content, tool_calls, tool_name| RequestMessage { role, content, thinking: None, tool_calls, tool_name };
    let turn = ChatTurn::of(run, &mut |result| {
        emit(message(WireRole::Tool, result_text(result), Vec::new(), tool_name(through, &result.call_id)))
    })?;
    let content = turn.text.unwrap_or_default();
    let tool_calls: Vec<RequestToolCall<'a>> = turn
        .calls
        .iter()
        .map(|call| RequestToolCall {
            function: RequestFunctionCall { name: &call.name, arguments: object_input(&call.input) },
        })
        .collect();
    let role = match run[0].role {
        Role::User => WireRole::User,
        Role::Assistant => WireRole::Assistant,
    };
    if content.is_empty() && tool_calls.is_empty() {
        return Ok(());
    }
    // The model's own thinking goes back with its turn, as Ollama returned it.
    emit(RequestMessage { thinking: turn.reasoning, ..message(role, content, tool_calls, None) })
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
    if let Some(thinking) = wire.message.thinking.filter(|t| !t.is_empty()) {
        content.push(ContentBlock::Reasoning(Reasoning::from_text(thinking)));
    }
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
    use super::{messages, tools};
    use crate::model::ModelRequest;
    use crate::providers::ollama::wire::{ChatRequest, Options};
    use crate::providers::ollama::{Ollama, PROVIDER};

    /// Models whose settings differ, as when one conversation switches
    /// models; the first two share a cache.
    fn models() -> Vec<Ollama> {
        let base = Ollama::builder().build().unwrap();
        vec![
            base.clone(),
            base.with_model("qwen3"),
            Ollama::builder().model("model \"q\"").max_tokens(512).temperature(0.0).num_ctx(8192).build().unwrap(),
        ]
    }

    /// The body as the whole request serialised at once.
    fn reference(model: &Ollama, request: &ModelRequest<'_>) -> Vec<u8> {
        let view = request.view_for(PROVIDER);
        serde_json::to_vec(&ChatRequest {
            model: &model.model,
            messages: messages(request.system, &view),
            tools: tools(request),
            stream: false,
            truncate: false,
            options: Options {
                temperature: request.temperature.or(model.temperature),
                num_predict: request.max_tokens.or(model.max_tokens),
                num_ctx: (model.model == "model \"q\"").then_some(8192),
            },
            think: None,
        })
        .unwrap()
    }

    crate::providers::cache_checks::body_cache_tests!(models, reference);
}
