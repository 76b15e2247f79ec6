//! Neutral types to and from the Anthropic wire format.

use std::borrow::Cow;

use super::wire::{
    ErrorResponse, InputBlock, InputMessage, MessagesRequestHead, MessagesRequestTail, MessagesResponse, OutputBlock,
    Role as WireRole, Tool,
};
use crate::message::{ContentBlock, Role, ToolCall};
use crate::model::{ModelError, ModelErrorKind, ModelRequest, ModelResponse};
use crate::providers::http::ApiError;
use crate::providers::shared::{close_body, object_input, open_body, write_element, write_messages};
use crate::stop_reason::StopReason;
use crate::usage::Usage;

use super::PROVIDER;

/// Builds the request body: the same bytes as serialising a
/// `MessagesRequest` of the whole conversation, with the conversation's
/// settled messages copied from its wire cache. `max_tokens` and
/// `temperature` are the request's overrides, else the client's settings.
pub(super) fn body(
    model: &str,
    max_tokens: u32,
    temperature: Option<f32>,
    request: &ModelRequest<'_>,
) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    let head = MessagesRequestHead {
        model,
        max_tokens: request.max_tokens.unwrap_or(max_tokens),
        system: request.system.filter(|s| !s.is_empty()),
    };
    open_body(&mut out, &head)?;
    write_messages(&mut out, WIRE_FORMAT, request, None::<&()>, &mut |run, _, out| match run_message(run) {
        Some(message) => write_element(out, &message),
        None => Ok(()),
    })?;
    let tail = MessagesRequestTail {
        tools: request
            .tools
            .iter()
            .map(|tool| Tool { name: &tool.name, description: &tool.description, input_schema: &tool.input_schema })
            .collect(),
        temperature: request.temperature.or(temperature),
    };
    close_body(&mut out, &tail)?;
    Ok(out)
}

/// Names the message rendering of [`run_message`] in a conversation's wire cache.
const WIRE_FORMAT: &str = "anthropic-messages";

/// The conversation in the API's shape (see [`run_message`]).
#[cfg(test)]
fn messages(messages: &[crate::message::Message]) -> Vec<InputMessage<'_>> {
    messages.chunk_by(|a, b| a.role == b.role).filter_map(run_message).collect()
}

/// One run of same-role messages in the API's shape: merged into one turn
/// (the API wants user and assistant turns to alternate), tool results first
/// (the API requires them to lead), empty text blocks dropped and an empty
/// turn left out (the API rejects them).
fn run_message(run: &[crate::message::Message]) -> Option<InputMessage<'_>> {
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
        ContentBlock::ToolCall(call) => {
            Some(InputBlock::Text { text: Cow::Owned(format!("[called tool `{}` with {}]", call.name, call.input)) })
        }
        ContentBlock::ToolResult(result) => {
            Some(InputBlock::Text { text: Cow::Owned(format!("[tool result: {}]", result.content)) })
        }
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

/// Parses `{"type":"error","error":{"type":…,"message":…}}`.
pub(super) fn error_body(body: &[u8]) -> Option<ApiError> {
    let parsed: ErrorResponse = serde_json::from_slice(body).ok()?;
    Some(ApiError { message: parsed.error.message, error_type: Some(parsed.error.kind) })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{error_body, messages, stop_reason_from};
    use crate::message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};
    use crate::stop_reason::StopReason;

    #[test]
    fn same_role_turns_merge_with_tool_results_first() {
        let history = vec![
            Message::user("hi"),
            Message::user(" \n"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("calling"),
                    ContentBlock::ToolCall(ToolCall::new("a", "t", json!({}))),
                    ContentBlock::ToolCall(ToolCall::new("b", "t", json!("{bad"))),
                ],
                provider: None,
            },
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
        let parsed = error_body(body).unwrap();
        assert_eq!((parsed.message.as_str(), parsed.error_type.as_deref()), ("Overloaded", Some("overloaded_error")));
        assert!(error_body(b"<html>").is_none());
    }
}

#[cfg(test)]
mod body_tests {
    use super::{body, messages};
    use crate::model::ModelRequest;
    use crate::providers::anthropic::wire::{MessagesRequest, Tool};
    use crate::providers::cache_checks::{Variant, check_bodies, check_flattened_view};

    /// Client settings that change from request to request, as when one
    /// conversation switches models.
    fn settings(variant: Variant) -> (&'static str, u32, Option<f32>) {
        match variant.index % 3 {
            0 => ("claude-sonnet-4-5", 4096, None),
            1 => ("claude-opus-4-1", 1024, Some(0.2)),
            _ => ("claude \"q\"", 8, Some(1.0)),
        }
    }

    fn cached_or_not(request: &ModelRequest<'_>, variant: Variant) -> Vec<u8> {
        let (model, max_tokens, temperature) = settings(variant);
        body(model, max_tokens, temperature, request).unwrap()
    }

    /// The body as the whole request serialised at once.
    fn reference(request: &ModelRequest<'_>, variant: Variant) -> Vec<u8> {
        let (model, max_tokens, temperature) = settings(variant);
        serde_json::to_vec(&MessagesRequest {
            model,
            max_tokens: request.max_tokens.unwrap_or(max_tokens),
            system: request.system.filter(|s| !s.is_empty()),
            messages: messages(request.messages),
            tools: request
                .tools
                .iter()
                .map(|tool| Tool { name: &tool.name, description: &tool.description, input_schema: &tool.input_schema })
                .collect(),
            temperature: request.temperature.or(temperature),
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
