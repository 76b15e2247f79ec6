//! Neutral types to and from the Anthropic wire format.

use std::borrow::Cow;

use reqwest::header::{HeaderName, HeaderValue};

use super::reasoning::{AnthropicThinking, anthropic_thinking};
use super::wire::{
    CacheControl, ErrorResponse, InputBlock, InputMessage, MessagesRequestHead, MessagesRequestTail, MessagesResponse,
    OutputBlock, OutputConfig, OutputFormat, Role as WireRole, System, SystemBlock, ThinkingParam, Tool,
};
use super::{API_VERSION, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS, DEFAULT_MODEL, PROVIDER};
use crate::conversation::needs_view;
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::model::{
    CacheTtl, ModelError, ModelErrorKind, ModelRequest, ModelResponse, PromptCache, ResponseSchema,
    ResponseSchemaSupport,
};
use crate::providers::convert::{misplaced_call, misplaced_result, object_input, synthetic_call_id};
use crate::providers::http::{ApiError, ApiKey, Body, BodyResult, CallSettings, Format, RequestHeaders, write_element};
use crate::reasoning::ReasoningError;
use crate::reasoning::{OpaqueReasoning, Reasoning, ReasoningState};
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// The most output tokens the official SDKs ask for without streaming.
const NON_STREAMING_MAX_TOKENS: u32 = 21_333;

/// The Anthropic Messages wire format: the `W` of
/// [`Anthropic`](super::Anthropic), holding its settings. Users never name
/// it (it is public only to be the alias's parameter).
#[derive(Clone, Debug, Default)]
#[allow(unreachable_pub)]
pub struct AnthropicMessages {
    pub(super) prompt_cache: PromptCache,
}

impl Format for AnthropicMessages {
    const PROVIDER: &'static str = PROVIDER;
    const PATH: &'static str = "/v1/messages";
    const DEFAULT_BASE_URL: &'static str = DEFAULT_BASE_URL;
    const DEFAULT_MODEL: &'static str = DEFAULT_MODEL;
    const DEFAULT_MAX_TOKENS: Option<u32> = Some(DEFAULT_MAX_TOKENS);
    const API_KEY: ApiKey = ApiKey::Required("ANTHROPIC_API_KEY");
    const BASE_URL_VARIABLE: &'static str = "ANTHROPIC_BASE_URL";
    const KEY_HEADER: (&'static str, &'static str) = ("x-api-key", "");
    // Anthropic's SDK obeys any positive `retry-after`; the run's deadline still bounds it.
    const MAX_RETRY_AFTER: std::time::Duration = std::time::Duration::MAX;

    type Response = MessagesResponse;
    type Decoder = super::MessagesStreamDecoder;

    /// As the official SDKs, which refuse a non-streamed call that may run
    /// past ten minutes: more than 21,333 output tokens (at the SDKs'
    /// assumed 128,000 tokens an hour).
    fn must_stream(max_tokens: Option<u32>) -> bool {
        max_tokens.is_some_and(|max| max > NON_STREAMING_MAX_TOKENS)
    }

    fn stream_decoder(&self) -> Self::Decoder {
        super::MessagesStreamDecoder::new()
    }

    fn headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        vec![(HeaderName::from_static("anthropic-version"), HeaderValue::from_static(API_VERSION))]
    }

    /// Checks the thinking rules; manual thinking on Claude 4 adds the
    /// interleaved-thinking beta, so the model may think between tool calls.
    /// A response schema the model or the API cannot take is an error here,
    /// before anything is sent (the API would answer 400).
    fn prepare(&self, call: CallSettings<'_>, request: &ModelRequest<'_>) -> Result<RequestHeaders, ModelError> {
        if let Some(schema) = request.response_schema {
            output_format(call.model, schema).map_err(|reason| {
                let message = format!(
                    "`{}` cannot give a native structured output: {reason}; use the output tool or the prompted \
                     output mode instead",
                    call.model
                );
                ModelError::new(ModelErrorKind::InvalidRequest, PROVIDER, message)
            })?;
        }
        let thinking = thinking_for(call).map_err(|error| error.into_model_error(PROVIDER))?;
        Ok(thinking
            .and_then(|thinking| thinking.beta)
            .map(|beta| (HeaderName::from_static("anthropic-beta"), HeaderValue::from_static(beta)))
            .into_iter()
            .collect())
    }

    /// The same bytes as serialising a `MessagesRequest` of the whole
    /// request, plus the cache breakpoints: on the system prompt (or, without
    /// one, the last tool) for the stable prefix, and on the last block of a
    /// final user turn for the conversation. The prefix's bytes never depend
    /// on the conversation, and the conversation's mark is written into the
    /// body after the reused message bytes are copied, so neither the prefix
    /// nor the cached messages change from call to call.
    fn write_body(&self, call: CallSettings<'_>, request: &ModelRequest<'_>, body: &mut Body<'_>) -> BodyResult {
        let cache = request.prompt_cache.unwrap_or(self.prompt_cache);
        let system = request.system.filter(|s| !s.is_empty());
        let prefix = cache.prefix().map(cache_control);
        // `prepare` rejected a setting the API rules out before the body is written.
        let thinking = thinking_for(call).ok().flatten();
        body.open(&MessagesRequestHead {
            model: call.model,
            max_tokens: call.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system: system.map(|text| match prefix {
                Some(cache_control) => System::Blocks([SystemBlock { kind: "text", text, cache_control }]),
                None => System::Text(text),
            }),
        })?;
        let conversation = cache.conversation().map(cache_control).filter(|_| ends_with_user_turn(request.messages));
        let mut marked = 0;
        body.messages_then("messages", None::<&()>, |out| match conversation {
            Some(mark) => {
                let before = out.len();
                mark_last_block(out, mark)?;
                marked = out.len() - before;
                Ok(())
            }
            None => Ok(()),
        })?;
        if let Some(mark) = conversation
            && let Some(from_end) = previous_mark(request.messages, !request.tools.is_empty(), marked)
        {
            // Not written when the bytes there are not the expected turn boundary (then only the cache misses).
            body.insert_back(from_end, PREVIOUS_MARK_AT, &mark_field(mark)?);
        }
        let mut tools = tools(request);
        if system.is_none()
            && let Some(last) = tools.last_mut()
        {
            last.cache_control = prefix;
        }
        body.close(&MessagesRequestTail {
            tools,
            temperature: call.temperature,
            thinking: thinking.as_ref().map(thinking_param),
            output_config: output_config(
                thinking.and_then(|t| t.effort),
                request.response_schema.and_then(|schema| output_format(call.model, schema).ok()),
            ),
            stream: call.stream,
        })
    }

    /// Claude Opus and Sonnet 4.5, Haiku 4.5 and later (and names this crate
    /// does not know, which are newer), for schemas Anthropic can express.
    fn response_schema_support(&self, model: &str, schema: &ResponseSchema) -> ResponseSchemaSupport {
        match output_format(model, schema) {
            Ok(_) => ResponseSchemaSupport::WithTools,
            Err(reason) => ResponseSchemaSupport::Unsupported(reason),
        }
    }

    fn render_run(&self, run: &[Message], _: &[Message], out: &mut Vec<u8>) -> serde_json::Result<()> {
        match run_message(run) {
            Some(message) => write_element(out, &message),
            None => Ok(()),
        }
    }

    fn response(&self, wire: MessagesResponse) -> Result<ModelResponse, ModelError> {
        ModelResponse::try_from(wire)
    }

    /// Parses `{"type":"error","error":{"type":…,"message":…}}`.
    fn error_body(body: &[u8]) -> Option<ApiError> {
        let parsed: ErrorResponse = serde_json::from_slice(body).ok()?;
        Some(ApiError::new(parsed.error.message, Some(parsed.error.kind)))
    }
}

/// `output_config`, when it has anything to say.
fn output_config(effort: Option<&'static str>, format: Option<OutputFormat>) -> Option<OutputConfig> {
    (effort.is_some() || format.is_some()).then_some(OutputConfig { effort, format })
}

/// The `output_config.format` for `schema` on `model`, or why there is none.
fn output_format(model: &str, schema: &ResponseSchema) -> Result<OutputFormat, String> {
    if super::reasoning::claude_version(model).is_some_and(|version| version < (4, 5)) {
        return Err(
            "Anthropic gives structured outputs on Claude Opus 4.5, Sonnet 4.5, Haiku 4.5 and later models only"
                .to_owned(),
        );
    }
    let schema = super::output_schema::anthropic_schema(&schema.schema)?;
    Ok(OutputFormat { kind: "json_schema", schema })
}

fn tools<'a>(request: &ModelRequest<'a>) -> Vec<Tool<'a>> {
    request
        .tools
        .iter()
        .map(|tool| Tool {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.input_schema,
            cache_control: None,
        })
        .collect()
}

/// Whether the last turn sent is a user turn: the last run of messages is
/// the user's and not left out as empty (see [`run_message`]). Thinking
/// blocks, which may not carry a breakpoint, are only ever in assistant turns.
fn ends_with_user_turn(messages: &[Message]) -> bool {
    let Some(last) = messages.last() else { return false };
    let run_start = messages.iter().rposition(|message| message.role != last.role).map_or(0, |index| index + 1);
    last.role == Role::User
        && messages[run_start..].iter().flat_map(|message| &message.content).any(|block| match block {
            ContentBlock::Text { text } => !text.trim().is_empty(),
            _ => true,
        })
}

fn cache_control(ttl: CacheTtl) -> CacheControl {
    let ttl = match ttl {
        CacheTtl::Extended => Some("1h"),
        // The API's default, five minutes; left unsaid so bodies stay as they were.
        CacheTtl::Standard => None,
    };
    CacheControl { kind: "ephemeral", ttl }
}

/// Adds `"cache_control"` to the last block of the last message of a body
/// written up to the end of its last message: an `InputMessage`, whose JSON
/// ends with its last block's `}`, then the content array's `]`, then the
/// message's `}`. Only the bytes of this request change; three move.
fn mark_last_block(out: &mut Vec<u8>, mark: CacheControl) -> serde_json::Result<()> {
    if !out.ends_with(b"}]}") {
        return Ok(());
    }
    let at = out.len() - 3;
    out.splice(at..at, mark_field(mark)?);
    Ok(())
}

/// `,"cache_control":{...}`: a breakpoint as the last field of a block.
fn mark_field(mark: CacheControl) -> serde_json::Result<Vec<u8>> {
    let mut field = b",\"cache_control\":".to_vec();
    serde_json::to_writer(&mut field, &mark)?;
    Ok(field)
}

/// How many blocks before a breakpoint the API looks for a cached prefix.
/// A moving breakpoint alone finds the previous call's entry only when the
/// last iteration (the assistant turn and the tool results after it) added
/// at most this many blocks.
const LOOKBACK_BLOCKS: usize = 20;

/// What the body holds where [`previous_mark`] goes: the end of a user
/// turn's last block, then the assistant turn after it.
const PREVIOUS_MARK_AT: &[u8] = b"}]},{\"role\":\"assistant\"";

/// For a request whose last iteration added more blocks than the lookback
/// (a dozen parallel tool calls, say), a second moving breakpoint where the
/// previous call had its last one: on the last block of the user turn
/// before the last assistant turn, so that the previous call's cache entry
/// is read exactly, however many blocks came after it. With the stable
/// prefix's and the last turn's that makes three, within the API's four.
///
/// Returns how many bytes before the end of the body written so far (the
/// messages array, closed, whose last turn carries `marked` bytes of
/// breakpoint) the mark goes, or `None` when the lookback suffices or the
/// last iteration is not sent as it is (another provider's turn, a request
/// without tools), where the previous call wrote no entry this one can read.
/// Costs nothing in the usual case: it counts the last iteration's blocks
/// and stops.
fn previous_mark(messages: &[Message], tools_offered: bool, marked: usize) -> Option<usize> {
    let open = run_start(messages, messages.len());
    let turn = run_start(messages, open);
    if open == 0 || turn == 0 || messages[turn].role != Role::Assistant {
        return None;
    }
    let iteration = &messages[turn..];
    if iteration.iter().map(|message| message.content.len()).sum::<usize>() <= LOOKBACK_BLOCKS
        || iteration.iter().any(|message| needs_view(message, PROVIDER, tools_offered))
    {
        return None;
    }
    run_message(&messages[run_start(messages, turn)..turn])?;
    let (assistant, user) = (run_message(&messages[turn..open])?, run_message(&messages[open..])?);
    if assistant.content.len() + user.content.len() <= LOOKBACK_BLOCKS {
        return None;
    }
    // `]`, the last turn with its mark, the assistant turn, each after its comma, then the `}]}` the mark precedes.
    Some(1 + (1 + json_len(&user)? + marked) + (1 + json_len(&assistant)?) + 3)
}

/// Where the run of same-role messages ending at `end` starts.
fn run_start(messages: &[Message], end: usize) -> usize {
    let Some(last) = end.checked_sub(1).map(|index| &messages[index]) else { return 0 };
    messages[..end].iter().rposition(|message| message.role != last.role).map_or(0, |index| index + 1)
}

/// The length of `value`'s JSON, without keeping it.
fn json_len(value: &impl serde::Serialize) -> Option<usize> {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).ok()?;
    Some(count.0)
}

/// The thinking fields for a call's settings (the request's reasoning
/// setting, else the model's), checked against the API's rules for the
/// model. Add [`AnthropicThinking::beta`] to the `anthropic-beta` header
/// when it is set.
pub(super) fn thinking_for(call: CallSettings<'_>) -> Result<Option<AnthropicThinking>, ReasoningError> {
    let Some(config) = call.reasoning else { return Ok(None) };
    let max_tokens = call.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    // This crate never forces a tool: typed output comes through a tool the model chooses.
    anthropic_thinking(config, call.model, max_tokens, call.temperature, false)
}

/// The `thinking` field for `thinking`.
fn thinking_param(thinking: &AnthropicThinking) -> ThinkingParam {
    match thinking.budget_tokens {
        Some(budget_tokens) => ThinkingParam::Enabled { budget_tokens, display: thinking.display },
        None => ThinkingParam::Adaptive { display: thinking.display },
    }
}

/// The conversation in the API's shape (see [`run_message`]).
#[cfg(test)]
fn messages(messages: &[Message]) -> Vec<InputMessage<'_>> {
    messages.chunk_by(|a, b| a.role == b.role).filter_map(run_message).collect()
}

/// One run of same-role messages in the API's shape: merged into one turn
/// (the API wants user and assistant turns to alternate), tool results first
/// (the API requires them to lead), empty text blocks dropped and an empty
/// turn left out (the API rejects them).
fn run_message(run: &[Message]) -> Option<InputMessage<'_>> {
    let role = match run[0].role {
        Role::User => WireRole::User,
        Role::Assistant => WireRole::Assistant,
    };
    let mut content: Vec<InputBlock<'_>> =
        run.iter().flat_map(|message| &message.content).filter_map(|block| input_block(role, block)).collect();
    if content.is_empty() {
        return None;
    }
    // A stable sort keeps the results in call order and the text in its order.
    content.sort_by_key(|block| !block.is_tool_result());
    Some(InputMessage { role, content })
}

fn input_block(role: WireRole, block: &ContentBlock) -> Option<InputBlock<'_>> {
    match block {
        ContentBlock::Reasoning(reasoning) if role == WireRole::Assistant => thinking_block(reasoning),
        // Reasoning in a user turn cannot be expressed.
        ContentBlock::Reasoning(_) => None,
        // The API rejects text blocks that are empty or only whitespace.
        ContentBlock::Text { text } if text.trim().is_empty() => None,
        ContentBlock::Text { text } => Some(InputBlock::Text { text: Cow::Borrowed(text) }),
        ContentBlock::ToolCall(call) if role == WireRole::Assistant => {
            Some(InputBlock::ToolUse { id: &call.id, name: &call.name, input: object_input(&call.input) })
        }
        ContentBlock::ToolResult(result) if role == WireRole::User => Some(InputBlock::ToolResult {
            tool_use_id: &result.call_id,
            content: &result.content,
            is_error: result.is_error(),
        }),
        // A call in a user turn or a result in an assistant turn cannot be
        // expressed; keep what it said as text rather than lose it.
        ContentBlock::ToolCall(call) => Some(InputBlock::Text { text: Cow::Owned(misplaced_call(call)) }),
        ContentBlock::ToolResult(result) => Some(InputBlock::Text { text: Cow::Owned(misplaced_result(result)) }),
    }
}

/// A reasoning block as the API issued it, byte for byte and in place.
/// Reasoning without an Anthropic signature cannot be sent: the API verifies
/// every thinking block, so text from another model would be rejected.
fn thinking_block(reasoning: &Reasoning) -> Option<InputBlock<'_>> {
    match reasoning.state_for(PROVIDER)? {
        ReasoningState::Signed { signature } => {
            let thinking = match reasoning.text.as_slice() {
                [one] => Cow::Borrowed(one.as_str()),
                parts => Cow::Owned(parts.concat()),
            };
            Some(InputBlock::Thinking { thinking, signature })
        }
        ReasoningState::Redacted { data } => Some(InputBlock::RedactedThinking { data }),
        _ => None,
    }
}

/// A thinking block of a response in neutral form, its signature (or
/// redacted data) kept for the next request.
pub(super) fn reasoning_from(model: Option<&String>, state: ReasoningState, text: Vec<String>) -> Reasoning {
    let opaque = OpaqueReasoning::new(PROVIDER, model.cloned(), state);
    Reasoning::with_opaque(text, Vec::new(), opaque)
}

impl TryFrom<MessagesResponse> for ModelResponse {
    type Error = ModelError;

    fn try_from(wire: MessagesResponse) -> Result<Self, ModelError> {
        let model = wire.model.as_ref();
        // Sized for every block: the content becomes a message every later
        // request of the conversation holds (collected through `filter_map`,
        // it would hold room for four).
        let mut content: Vec<ContentBlock> = Vec::with_capacity(wire.content.len());
        content.extend(wire.content.into_iter().enumerate().filter_map(|(index, block)| match block {
            OutputBlock::Text { text } => Some(ContentBlock::Text { text }),
            OutputBlock::ToolUse { id, name, input } => {
                // The API's id pattern rejects "": results need a real id to answer.
                let id = if id.is_empty() { synthetic_call_id("toolu_", index, &name) } else { id };
                Some(ContentBlock::ToolCall(ToolCall { id, name, input }))
            }
            OutputBlock::Thinking { thinking, signature } => Some(ContentBlock::Reasoning(reasoning_from(
                model,
                ReasoningState::Signed { signature },
                vec![thinking],
            ))),
            OutputBlock::RedactedThinking { data } => {
                Some(ContentBlock::Reasoning(reasoning_from(model, ReasoningState::Redacted { data }, Vec::new())))
            }
            OutputBlock::Other => None,
        }));
        // Always set by the API; a compatible server that leaves it out gets
        // the reason the content implies rather than a failed call.
        let stop_reason = match wire.stop_reason {
            Some(reason) => stop_reason_from(&reason),
            None if content.iter().any(|block| matches!(block, ContentBlock::ToolCall(_))) => StopReason::ToolUse,
            None => StopReason::EndTurn,
        };
        let usage = Usage {
            input_tokens: wire.usage.input_tokens,
            output_tokens: wire.usage.output_tokens,
            cache_read_tokens: wire.usage.cache_read_input_tokens.unwrap_or(0),
            cache_write_tokens: wire.usage.cache_creation_input_tokens.unwrap_or(0),
            // Thinking is billed as output; the API does not report it apart.
            reasoning_tokens: 0,
        };
        let mut response = ModelResponse::new(content).with_stop_reason(stop_reason).with_usage(usage);
        response.model = wire.model;
        response.id = wire.id;
        Ok(response.with_provider(PROVIDER))
    }
}

pub(super) fn stop_reason_from(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "pause_turn" => StopReason::PauseTurn,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::AnthropicMessages;
    use super::{messages, stop_reason_from};
    use crate::message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};
    use crate::providers::http::Format;
    use crate::stop_reason::StopReason;

    #[test]
    fn same_role_turns_merge_with_tool_results_first() {
        let history = vec![
            Message::user("hi"),
            Message::user(" \n"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::text("calling"),
                    ContentBlock::ToolCall(ToolCall::new("a", "t", json!({}))),
                    ContentBlock::ToolCall(ToolCall::new("b", "t", json!("{bad"))),
                ],
            ),
            Message::from_tool_results([ToolResult::success("a", "1")]),
            Message::user("please continue"),
            Message::from_tool_results([ToolResult::failure("b", FailureKind::InvalidArguments, "bad json")]),
        ];
        let wire = serde_json::to_value(messages(&history)).unwrap();
        assert_eq!(
            wire,
            json!([
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "id": "a", "name": "t", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "t", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "1"},
                    {"type": "tool_result", "tool_use_id": "b", "content": "bad json", "is_error": true},
                    {"type": "text", "text": "please continue"},
                ]},
            ])
        );
    }

    #[test]
    fn every_stop_reason_maps() {
        assert_eq!(stop_reason_from("end_turn"), StopReason::EndTurn);
        assert_eq!(stop_reason_from("tool_use"), StopReason::ToolUse);
        assert_eq!(stop_reason_from("max_tokens"), StopReason::MaxTokens);
        assert_eq!(stop_reason_from("stop_sequence"), StopReason::StopSequence);
        assert_eq!(stop_reason_from("pause_turn"), StopReason::PauseTurn);
        assert_eq!(stop_reason_from("refusal"), StopReason::Refusal);
        assert_eq!(stop_reason_from("new_reason"), StopReason::Other("new_reason".into()));
    }

    #[test]
    fn error_bodies_parse() {
        let body =
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#;
        let parsed = AnthropicMessages::error_body(body).unwrap();
        assert_eq!((parsed.message.as_str(), parsed.error_type.as_deref()), ("Overloaded", Some("overloaded_error")));
        assert!(AnthropicMessages::error_body(b"<html>").is_none());
    }
}

#[cfg(test)]
mod thinking_tests {
    use serde_json::json;

    use super::{messages, thinking_for};
    use crate::message::{ContentBlock, Message, ToolResult};
    use crate::model::{ModelRequest, ModelResponse};
    use crate::providers::anthropic::Anthropic;
    use crate::providers::anthropic::wire::MessagesResponse;
    use crate::reasoning::{OpaqueReasoning, Reasoning, ReasoningState};
    use crate::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningError};

    fn response_with_thinking() -> ModelResponse {
        let wire: MessagesResponse = serde_json::from_value(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "Let me check \u{e9} the weather.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}
            ],
            "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 50}
        }))
        .unwrap();
        ModelResponse::try_from(wire).unwrap()
    }

    #[test]
    fn response_content_holds_no_spare_room() {
        // Every later request of the conversation holds this content.
        let response = response_with_thinking();
        assert_eq!((response.content.len(), response.content.capacity()), (4, 4));
    }

    #[test]
    fn thinking_blocks_parse_into_signed_and_redacted_reasoning() {
        let response = response_with_thinking();
        let reasoning: Vec<&Reasoning> = response.reasoning().collect();
        assert_eq!(reasoning.len(), 2);
        assert_eq!(reasoning[0].text, vec!["Let me check \u{e9} the weather.".to_owned()]);
        let opaque = reasoning[0].opaque.as_ref().unwrap();
        assert_eq!((opaque.provider.as_str(), opaque.model.as_deref()), ("anthropic", Some("claude-sonnet-4-5")));
        assert_eq!(opaque.state, ReasoningState::Signed { signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h".into() });
        assert_eq!(
            reasoning[1].opaque.as_ref().unwrap().state,
            ReasoningState::Redacted { data: "EmwKAhgBEgy3va3pzix/LafPsn4a".into() }
        );
        assert_eq!(response.reasoning_text(), "Let me check \u{e9} the weather.");
        assert!(matches!(response.content[0], ContentBlock::Reasoning(_)));
    }

    #[test]
    fn thinking_goes_back_byte_for_byte_in_place_and_survives_serde() {
        let message = response_with_thinking().to_message("anthropic");
        // Save and resume: the JSON round trip keeps every byte.
        let saved = serde_json::to_string(&message).unwrap();
        let resumed: Message = serde_json::from_str(&saved).unwrap();
        assert_eq!(resumed, message);
        let history = vec![
            Message::user("weather?"),
            resumed,
            Message::from_tool_results([ToolResult::success("toolu_1", "sunny")]),
        ];
        let wire = serde_json::to_value(messages(&history)).unwrap();
        assert_eq!(
            wire[1],
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Let me check \u{e9} the weather.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}
            ]})
        );
    }

    #[test]
    fn reasoning_anthropic_cannot_verify_is_never_sent() {
        let foreign = OpaqueReasoning::new(
            "openai-responses",
            None,
            ReasoningState::Item { id: "rs_1".into(), encrypted_content: None },
        );
        let history = vec![Message::user("hi"), {
            let mut message = Message::new(
                crate::message::Role::Assistant,
                vec![
                    ContentBlock::Reasoning(Reasoning::from_text("plain thoughts")),
                    ContentBlock::Reasoning(Reasoning::with_opaque(Vec::new(), vec!["sum".into()], foreign)),
                    ContentBlock::text("hello"),
                ],
            );
            message.provider = None;
            message
        }];
        let wire = serde_json::to_value(messages(&history)).unwrap();
        assert_eq!(wire[1], json!({"role": "assistant", "content": [{"type": "text", "text": "hello"}]}));
    }

    #[test]
    fn the_body_carries_the_thinking_fields_of_the_setting() {
        let history = [Message::user("hi")];
        let model = Anthropic::builder().api_key("k").model("claude-opus-4-6").max_tokens(4096).build().unwrap();
        let adaptive = ModelRequest::new(&history).with_reasoning(ReasoningEffort::High);
        let body: serde_json::Value = serde_json::from_slice(&model.body(&adaptive, false).unwrap().to_vec()).unwrap();
        assert_eq!(
            (&body["thinking"], &body["output_config"]),
            (&json!({"type": "adaptive"}), &json!({"effort": "high"}))
        );

        let configured = ReasoningConfig::new(ReasoningEffort::Off).with_budget_tokens(2048);
        let model = model.with_model("claude-sonnet-4-5").with_reasoning(configured);
        let plain = ModelRequest::new(&history);
        let thinking = thinking_for(model.call_settings(&plain, false)).unwrap().unwrap();
        assert_eq!(thinking.beta, Some("interleaved-thinking-2025-05-14"));
        let body: serde_json::Value = serde_json::from_slice(&model.body(&plain, false).unwrap().to_vec()).unwrap();
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
        assert!(body.get("output_config").is_none());

        // The request's overrides are what is checked.
        let hot = ModelRequest::new(&history).with_temperature(0.5);
        assert_eq!(
            thinking_for(model.call_settings(&hot, false)),
            Err(ReasoningError::TemperatureWithThinking { temperature: 0.5 })
        );
        let small = ModelRequest::new(&history).with_max_tokens(2048);
        assert!(matches!(
            thinking_for(model.call_settings(&small, false)),
            Err(ReasoningError::BudgetNotBelowMaxTokens { .. })
        ));
        let off = model.clone().with_default_reasoning().with_model("claude-sonnet-4-5");
        let cool = ModelRequest::new(&history).with_temperature(0.3);
        assert_eq!(thinking_for(off.call_settings(&cool, false)), Ok(None));
        // The request's own setting wins over the model's.
        let request_off = ModelRequest::new(&history).with_reasoning(ReasoningConfig::off());
        assert_eq!(thinking_for(model.call_settings(&request_off, false)), Ok(None));
    }
}

#[cfg(test)]
mod body_tests {
    use serde_json::{Value, json};

    use super::{LOOKBACK_BLOCKS, ends_with_user_turn, messages, needs_view, run_start, tools};
    use crate::conversation::Conversation;
    use crate::message::{ContentBlock, Message, Role, ToolCall, ToolResult};
    use crate::model::{BodyCache, CacheTtl, ModelRequest, PromptCache};
    use crate::providers::anthropic::wire::MessagesRequest;
    use crate::providers::anthropic::{Anthropic, PROVIDER};
    use crate::tool::ToolDefinition;

    /// Models whose settings differ, as when one conversation switches
    /// models; the first two share a cache. The third caches nothing, the
    /// fourth keeps its prefix for an hour.
    fn models() -> Vec<Anthropic> {
        let base = Anthropic::builder().api_key("k").build().unwrap();
        vec![
            base.clone(),
            base.with_model("claude-opus-4-1"),
            Anthropic::builder()
                .api_key("k")
                .model("claude \"q\"")
                .max_tokens(8)
                .temperature(1.0)
                .prompt_cache(PromptCache::off())
                .build()
                .unwrap(),
            Anthropic::builder()
                .api_key("k")
                .model("claude-1h")
                .prompt_cache(PromptCache::auto().prefix_ttl(CacheTtl::Extended))
                .build()
                .unwrap(),
        ]
    }

    /// The body as the whole request serialised at once, with the cache
    /// breakpoints added to the parsed body (`serde_json` keeps key order).
    fn reference(model: &Anthropic, request: &ModelRequest<'_>) -> Vec<u8> {
        let view = request.view_for(PROVIDER);
        let plain = MessagesRequest {
            model: &model.model,
            max_tokens: request.max_tokens.or(model.max_tokens).unwrap(),
            system: request.system.filter(|s| !s.is_empty()),
            messages: messages(&view),
            tools: tools(request),
            temperature: request.temperature.or(model.temperature),
            thinking: None,
            output_config: None,
            stream: false,
        };
        let mut body = serde_json::to_value(&plain).unwrap();
        let prefix_mark = match model.model.as_str() {
            "claude \"q\"" => return serde_json::to_vec(&body).unwrap(),
            "claude-1h" => json!({"type": "ephemeral", "ttl": "1h"}),
            _ => json!({"type": "ephemeral"}),
        };
        if let Some(system) = plain.system {
            body["system"] = json!([{"type": "text", "text": system, "cache_control": prefix_mark}]);
        } else if let Some(last) = body.get_mut("tools").and_then(|tools| tools.as_array_mut()?.last_mut()) {
            last["cache_control"] = prefix_mark;
        }
        // Marked when the history ends with a user turn that is sent (in a
        // loop it always does: tool results or a prompt).
        if ends_with_user_turn(request.messages)
            && let Some(last) = body["messages"].as_array_mut().and_then(|messages| messages.last_mut())
            && last["role"] == "user"
            && let Some(block) = last["content"].as_array_mut().and_then(|content| content.last_mut())
        {
            block["cache_control"] = json!({"type": "ephemeral"});
            // A last iteration of more than 20 blocks, sent as it is: the previous call's mark too.
            let raw = request.messages;
            let own = raw[run_start(raw, run_start(raw, raw.len()))..]
                .iter()
                .all(|message| !needs_view(message, PROVIDER, !request.tools.is_empty()));
            let turns = body["messages"].as_array_mut().unwrap();
            let blocks = |turn: &Value| turn["content"].as_array().map_or(0, Vec::len);
            if let [.., previous, assistant, last] = turns.as_mut_slice()
                && own
                && previous["role"] == "user"
                && assistant["role"] == "assistant"
                && blocks(assistant) + blocks(last) > LOOKBACK_BLOCKS
                && let Some(block) = previous["content"].as_array_mut().and_then(|content| content.last_mut())
            {
                block["cache_control"] = json!({"type": "ephemeral"});
            }
        }
        // A `Value` holds the temperature as an f64; write it as the f32 it is.
        let text = serde_json::to_string(&body).unwrap();
        match plain.temperature {
            Some(t) => {
                text.replace(&serde_json::to_string(&f64::from(t)).unwrap(), &serde_json::to_string(&t).unwrap())
            }
            None => text,
        }
        .into_bytes()
    }

    /// A request's own setting overrides the model's: off sends the plain
    /// body; a one-hour conversation TTL lifts the prefix to one hour too
    /// (the API rejects a longer TTL after a shorter one); without a system
    /// prompt the prefix mark goes on the last tool.
    #[test]
    fn per_request_settings_override_the_models() {
        let model = &models()[0];
        let tools = vec![ToolDefinition::from_schema("a", "A.", json!({"type": "object"}))];
        let history = [Message::user("hi")];
        let body = |request: ModelRequest<'_>| {
            serde_json::from_slice::<serde_json::Value>(&model.body(&request, false).unwrap().to_vec()).unwrap()
        };
        let off =
            body(ModelRequest::new(&history).with_system("S").with_tools(&tools).with_prompt_cache(PromptCache::off()));
        assert_eq!(off["system"], json!("S"));
        assert!(!off.to_string().contains("cache_control"));
        let long = body(
            ModelRequest::new(&history)
                .with_system("S")
                .with_prompt_cache(PromptCache::auto().conversation_ttl(CacheTtl::Extended)),
        );
        assert_eq!(long["system"][0]["cache_control"], json!({"type": "ephemeral", "ttl": "1h"}));
        assert_eq!(long["messages"][0]["content"][0]["cache_control"], json!({"type": "ephemeral", "ttl": "1h"}));
        let no_system = body(ModelRequest::new(&history).with_tools(&tools));
        assert_eq!(no_system["tools"][0]["cache_control"], json!({"type": "ephemeral"}));
        let only_prefix = body(
            ModelRequest::new(&history)
                .with_tools(&tools)
                .with_prompt_cache(PromptCache::prefix_only(CacheTtl::Extended)),
        );
        assert_eq!(only_prefix.to_string().matches("cache_control").count(), 1);
    }

    /// Tool definitions and the system prompt serialise byte-identically on
    /// every call of a growing conversation, and never carry more than the
    /// API's four breakpoints.
    #[test]
    fn the_stable_prefix_is_byte_identical_across_calls() {
        let model = &models()[0];
        let tools = vec![
            ToolDefinition::from_schema("weather", "Weather for a city.", json!({"type": "object"})),
            ToolDefinition::from_schema(
                "search",
                "Search.",
                json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            ),
        ];
        let cache = BodyCache::default();
        let mut conversation = Conversation::new();
        let mut prefixes = Vec::new();
        for turn in 0..6 {
            conversation.push_user(format!("question {turn}"));
            let request = ModelRequest::new(conversation.messages())
                .with_system("Be brief.")
                .with_tools(&tools)
                .with_body_cache(&cache);
            let body = String::from_utf8(model.body(&request, false).unwrap().to_vec()).unwrap();
            assert!(body.matches("cache_control").count() <= 4, "{body}");
            assert_eq!(body.matches("cache_control").count(), 2, "{body}");
            let system_start = body.find(r#""system":"#).unwrap();
            let system_end = body.find(r#","messages":"#).unwrap();
            let tools_start = body.find(r#","tools":"#).unwrap();
            prefixes.push((body[system_start..system_end].to_owned(), body[tools_start..].to_owned()));
            conversation.push(Message::assistant(format!("answer {turn}")));
        }
        assert!(prefixes.windows(2).all(|pair| pair[0] == pair[1]), "{prefixes:?}");
    }

    /// Iterations of a dozen parallel tool calls (more blocks than the
    /// API's lookback): from the second call on, a second moving mark sits
    /// where the previous call's last one was, in the cached bytes as in
    /// bodies rendered afresh, and never more than three marks in all.
    #[test]
    fn wide_iterations_mark_where_the_previous_call_ended() {
        let tools = [ToolDefinition::from_schema("lookup", "Look up.", json!({"type": "object"}))];
        for model in models() {
            let cache = BodyCache::default();
            let mut conversation = Conversation::new();
            conversation.push_user("Look everything up.");
            let mut previous: Option<String> = None;
            for iteration in 0..4 {
                let request = ModelRequest::new(conversation.messages())
                    .with_system("S")
                    .with_tools(&tools)
                    .with_body_cache(&cache);
                let body = String::from_utf8(model.body(&request, false).unwrap().to_vec()).unwrap();
                let copies = conversation.messages().to_vec();
                let fresh = model.body(&ModelRequest::new(&copies).with_system("S").with_tools(&tools), false).unwrap();
                assert_eq!(body, String::from_utf8(fresh.to_vec()).unwrap(), "iteration {iteration}");
                assert_eq!(body, String::from_utf8(reference(&model, &request)).unwrap(), "iteration {iteration}");
                let parsed: Value = serde_json::from_str(&body).unwrap();
                if model.model != "claude \"q\"" {
                    let marks = body.matches("cache_control").count();
                    assert_eq!(marks, if iteration == 0 { 2 } else { 3 }, "{body}");
                    // The previous call's last block carries the new second mark.
                    if let Some(previous) = &previous {
                        let previous: Value = serde_json::from_str(previous).unwrap();
                        let ended = previous["messages"].as_array().unwrap().len() - 1;
                        let block = parsed["messages"][ended]["content"].as_array().unwrap().last().unwrap();
                        assert!(block.get("cache_control").is_some(), "{block}");
                    }
                }
                previous = Some(body);
                let calls: Vec<ToolCall> = (0..12)
                    .map(|n| ToolCall::new(format!("toolu_{iteration}_{n}"), "lookup", json!({"n": n})))
                    .collect();
                conversation.push(
                    Message::new(Role::Assistant, calls.iter().cloned().map(ContentBlock::ToolCall).collect())
                        .with_provider(PROVIDER),
                );
                conversation.push(Message::from_tool_results(
                    calls.iter().map(|call| ToolResult::success(&call.id, format!("record {}", call.id))),
                ));
            }
        }
    }

    crate::providers::cache_checks::body_cache_tests!(models, reference);
}
