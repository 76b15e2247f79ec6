//! Neutral types to and from the Anthropic wire format.

use std::borrow::Cow;

use reqwest::header::{HeaderName, HeaderValue};

use super::wire::{
    ErrorResponse, InputBlock, InputMessage, MessagesRequestHead, MessagesRequestTail, MessagesResponse, OutputBlock,
    Role as WireRole, Tool,
};
use super::{API_VERSION, AnthropicMessages, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS, DEFAULT_MODEL, PROVIDER};
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::model::{ModelError, ModelErrorKind, ModelRequest, ModelResponse};
use crate::providers::common::{misplaced_call, misplaced_result, object_input};
use crate::providers::http::{ApiError, ApiKey, Body, CallSettings, Format, write_element};
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// The most output tokens the official SDKs ask for without streaming.
const NON_STREAMING_MAX_TOKENS: u32 = 21_333;

impl Format for AnthropicMessages {
    const PROVIDER: &'static str = PROVIDER;
    const PATH: &'static str = "/v1/messages";
    const DEFAULT_BASE_URL: &'static str = DEFAULT_BASE_URL;
    const DEFAULT_MODEL: &'static str = DEFAULT_MODEL;
    const DEFAULT_MAX_TOKENS: Option<u32> = Some(DEFAULT_MAX_TOKENS);
    const API_KEY: ApiKey = ApiKey::Required("ANTHROPIC_API_KEY");
    const BASE_URL_VARIABLE: &'static str = "ANTHROPIC_BASE_URL";
    const KEY_HEADER: (&'static str, &'static str) = ("x-api-key", "");

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

    /// The same bytes as serialising a `MessagesRequest` of the whole request.
    fn write_body(
        &self,
        call: CallSettings<'_>,
        request: &ModelRequest<'_>,
        body: &mut Body<'_>,
    ) -> serde_json::Result<()> {
        body.open(&MessagesRequestHead {
            model: call.model,
            max_tokens: call.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system: request.system.filter(|s| !s.is_empty()),
        })?;
        body.messages("messages", None::<&()>)?;
        body.close(&MessagesRequestTail { tools: tools(request), temperature: call.temperature, stream: call.stream })
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
        Some(ApiError { message: parsed.error.message, error_type: Some(parsed.error.kind) })
    }
}

fn tools<'a>(request: &ModelRequest<'a>) -> Vec<Tool<'a>> {
    request
        .tools
        .iter()
        .map(|tool| Tool { name: &tool.name, description: &tool.description, input_schema: &tool.input_schema })
        .collect()
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

impl TryFrom<MessagesResponse> for ModelResponse {
    type Error = ModelError;

    fn try_from(wire: MessagesResponse) -> Result<Self, ModelError> {
        let content: Vec<ContentBlock> = wire
            .content
            .into_iter()
            .filter_map(|block| match block {
                OutputBlock::Text { text } => Some(ContentBlock::Text { text }),
                OutputBlock::ToolUse { id, name, input } => Some(ContentBlock::ToolCall(ToolCall { id, name, input })),
                OutputBlock::Other => None,
            })
            .collect();
        let Some(stop_reason) = wire.stop_reason else {
            return Err(ModelError::new(
                ModelErrorKind::MalformedResponse,
                PROVIDER,
                "the response has no stop_reason",
            ));
        };
        let usage = Usage {
            input_tokens: wire.usage.input_tokens,
            output_tokens: wire.usage.output_tokens,
            cache_read_tokens: wire.usage.cache_read_input_tokens.unwrap_or(0),
            cache_write_tokens: wire.usage.cache_creation_input_tokens.unwrap_or(0),
        };
        let mut response =
            ModelResponse::new(content).with_stop_reason(stop_reason_from(&stop_reason)).with_usage(usage);
        response.model = wire.model;
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

    use super::{messages, stop_reason_from};
    use crate::message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};
    use crate::providers::anthropic::AnthropicMessages;
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
mod body_tests {
    use super::{messages, tools};
    use crate::model::ModelRequest;
    use crate::providers::anthropic::wire::MessagesRequest;
    use crate::providers::anthropic::{Anthropic, PROVIDER};
    use crate::providers::cache_checks::{check_bodies, check_no_stale_bytes};

    /// Models whose settings differ, as when one conversation switches
    /// models; the first two share a cache.
    fn models() -> Vec<Anthropic> {
        let base = Anthropic::builder().api_key("k").build().unwrap();
        vec![
            base.clone(),
            base.with_model("claude-opus-4-1"),
            Anthropic::builder().api_key("k").model("claude \"q\"").max_tokens(8).temperature(1.0).build().unwrap(),
        ]
    }

    /// The body as the whole request serialised at once.
    fn reference(model: &Anthropic, request: &ModelRequest<'_>) -> Vec<u8> {
        let view = request.view_for(PROVIDER);
        serde_json::to_vec(&MessagesRequest {
            model: &model.model,
            max_tokens: request.max_tokens.or(model.max_tokens).unwrap(),
            system: request.system.filter(|s| !s.is_empty()),
            messages: messages(&view),
            tools: tools(request),
            temperature: request.temperature.or(model.temperature),
            stream: false,
        })
        .unwrap()
    }

    #[test]
    fn cached_bodies_are_byte_identical_and_render_each_settled_run_once() {
        check_bodies(&models(), &reference);
    }

    #[test]
    fn no_change_to_the_messages_reaches_a_stale_body() {
        check_no_stale_bytes(&models()[0], &reference);
    }
}
