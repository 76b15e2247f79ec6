//! The OpenAI Chat Completions stream (`"stream": true` with
//! `stream_options.include_usage`): `chat.completion.chunk`s as server-sent
//! events, ending with `data: [DONE]`, decoded into neutral [`StreamEvent`]s.
//!
//! A chunk's `choices[0].delta` carries content, refusal, reasoning
//! (`reasoning_content` from `DeepSeek` and vLLM, `reasoning` from others)
//! and tool call pieces keyed by `index`; `finish_reason` arrives in the last
//! chunk with choices; with `include_usage` one more chunk has no choices and
//! the usage. An error mid-stream arrives as a chunk `{"error": {...}}`.
//!
//! Neutral indices follow the order of the non-streamed response: reasoning
//! 0, text 1, refusal 2, then the tool calls from 3 in the order they began.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::PROVIDER;
use super::convert::{stop_reason_from, usage};
use super::wire::{ErrorDetail, Usage as WireUsage};
use crate::model::{ModelError, ModelErrorKind, StreamEvent};
use crate::providers::convert::synthetic_call_id;
use crate::providers::http::{StreamDecoder, ended_early, kind_for_status, malformed_frame, stream_error};
use crate::stop_reason::StopReason;

const REASONING: usize = 0;
const TEXT: usize = 1;
const REFUSAL: usize = 2;
const FIRST_CALL: usize = 3;

/// Decodes one Chat Completions stream.
#[derive(Debug, Default)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct ChatStreamDecoder {
    phase: Phase,
    reasoning: bool,
    refused: bool,
    calls: Vec<Call>,
    finish_reason: Option<String>,
}

/// Where a stream is.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No chunk yet.
    #[default]
    Waiting,
    Streaming,
    /// `finish_reason` arrived and the tool calls were closed; usage may follow.
    Finishing,
    /// `[DONE]` arrived.
    Done,
}

/// A tool call as its pieces arrive.
#[derive(Debug)]
struct Call {
    /// The call's `index` on the wire.
    wire_index: usize,
    id: Option<String>,
    /// Set once the call has a name and [`StreamEvent::ToolCallStarted`] went out.
    started: bool,
    name: Option<String>,
    /// Arguments that arrived before the name (some servers).
    early_arguments: String,
    /// Arguments sent as a JSON object instead of text (some servers).
    object: Option<Value>,
}

impl StreamDecoder for ChatStreamDecoder {
    fn decode(&mut self, _event: Option<&str>, data: &str, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.phase == Phase::Done {
            return Ok(());
        }
        if data.trim() == "[DONE]" {
            return self.close(out);
        }
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|error| malformed_frame(PROVIDER, "a chunk", &error, data))?;
        if let Some(error) = chunk.error {
            return Err(api_error(*error));
        }
        // Azure's first chunk holds only prompt filter results, with an
        // empty model and id: the response starts with the first real chunk.
        let announces = !chunk.choices.is_empty() || chunk.usage.is_some();
        if self.phase == Phase::Waiting && announces {
            self.phase = Phase::Streaming;
            let model = chunk.model.filter(|model| !model.is_empty()).map(Cow::into_owned);
            let id = chunk.id.filter(|id| !id.is_empty()).map(Cow::into_owned);
            out.push(StreamEvent::Started { model, provider: Some(PROVIDER.to_owned()), id });
        }
        // Only the first choice is used, as in the non-streamed response.
        if let Some(choice) = chunk.choices.into_iter().find(|choice| choice.index == 0) {
            self.delta(choice.delta, out)?;
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
                self.close_calls(out)?;
            }
        }
        if chunk.usage.is_some() {
            out.push(StreamEvent::Usage(usage(chunk.usage.map(|usage| *usage))));
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.phase == Phase::Done { Ok(()) } else { Err(ended_early(PROVIDER, "[DONE]")) }
    }
}

impl ChatStreamDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn delta(&mut self, delta: Delta, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if let Some(text) = delta.reasoning_content.or(delta.reasoning).filter(|t| !t.is_empty()) {
            self.reasoning = true;
            out.push(StreamEvent::ReasoningDelta { index: REASONING, text });
        }
        // Empty content is left out, as the non-streamed response leaves it out.
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            out.push(StreamEvent::TextDelta { index: TEXT, text });
        }
        if let Some(text) = delta.refusal {
            if !self.refused {
                self.refused = true;
                // Opens the block: an empty refusal is still a refusal.
                out.push(StreamEvent::TextDelta { index: REFUSAL, text: String::new() });
            }
            if !text.is_empty() {
                out.push(StreamEvent::TextDelta { index: REFUSAL, text });
            }
        }
        for piece in delta.tool_calls.unwrap_or_default() {
            self.tool_call_piece(piece, out)?;
        }
        Ok(())
    }

    fn tool_call_piece(&mut self, piece: ToolCallDelta, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.phase == Phase::Finishing {
            return Err(malformed("a tool call piece arrived after finish_reason"));
        }
        let id = piece.id.filter(|id| !id.is_empty());
        // Without an index (some servers), a new id means a new call.
        let wire_index = piece.index.unwrap_or_else(|| match self.calls.last() {
            Some(last) if id.is_none() || id == last.id => last.wire_index,
            Some(last) => last.wire_index + 1,
            None => 0,
        });
        let position = if let Some(position) = self.calls.iter().position(|call| call.wire_index == wire_index) {
            position
        } else {
            self.calls.push(Call {
                wire_index,
                id: None,
                started: false,
                name: None,
                early_arguments: String::new(),
                object: None,
            });
            self.calls.len() - 1
        };
        let index = FIRST_CALL + position;
        let call = &mut self.calls[position];
        if call.id.is_none() {
            call.id = id;
        }
        let function = piece.function.unwrap_or_default();
        if call.name.is_none() {
            call.name = function.name.filter(|name| !name.is_empty());
        }
        if !call.started && call.name.is_some() {
            call.started = true;
            let name = call.name.clone().unwrap_or_default();
            // Results are matched to calls by id, so a call without one gets
            // a unique one of ours, as in the non-streamed response.
            let id = call.id.clone().unwrap_or_else(|| synthetic_call_id("call_", position, &name));
            call.id = Some(id.clone());
            out.push(StreamEvent::ToolCallStarted { index, id, name });
            if !call.early_arguments.is_empty() {
                let fragment = std::mem::take(&mut call.early_arguments);
                out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment });
            }
        }
        match function.arguments {
            None | Some(Value::Null) => {}
            Some(Value::String(fragment)) if fragment.is_empty() => {}
            Some(Value::String(fragment)) if call.started => {
                out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment });
            }
            Some(Value::String(fragment)) => call.early_arguments.push_str(&fragment),
            Some(object) => {
                if call.started {
                    out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment: object.to_string() });
                }
                call.object = Some(object);
            }
        }
        Ok(())
    }

    /// Closes every tool call: `finish_reason` has arrived.
    fn close_calls(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.phase == Phase::Finishing {
            return Ok(());
        }
        self.phase = Phase::Finishing;
        for (position, call) in self.calls.iter_mut().enumerate() {
            if !call.started {
                return Err(malformed(&format!("tool call {} never got a name", call.wire_index)));
            }
            out.push(StreamEvent::ToolCallFinished { index: FIRST_CALL + position, input: call.object.take() });
        }
        Ok(())
    }

    /// `[DONE]`: the response is complete.
    fn close(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.phase == Phase::Waiting {
            return Err(malformed("the stream ended without a chunk"));
        }
        self.close_calls(out)?;
        let stop_reason = if self.refused {
            StopReason::Refusal
        } else {
            stop_reason_from(self.finish_reason.as_deref(), !self.calls.is_empty())
        };
        out.push(StreamEvent::Finished { stop_reason });
        self.phase = Phase::Done;
        Ok(())
    }
}

fn malformed(message: &str) -> ModelError {
    ModelError::new(ModelErrorKind::MalformedResponse, PROVIDER, message.to_owned())
}

/// The error a stream's error chunk (or a Responses `error` event) reports;
/// the error type is the `code` when it is a string, else the `type`, as for
/// error bodies.
fn api_error(error: ErrorDetail) -> ModelError {
    let error_type = match error.code {
        Some(Value::String(code)) => Some(code),
        _ => error.kind,
    };
    stream_error(PROVIDER, error_kind(error_type.as_deref()), error.message, error_type)
}

/// The kind of an error reported inside a stream, as the non-streamed call
/// would classify the same error arriving with its HTTP status. An error
/// this crate does not know is a server failure: the response had begun.
pub(crate) fn error_kind(error_type: Option<&str>) -> ModelErrorKind {
    let status = match error_type.unwrap_or_default() {
        "invalid_request_error" | "invalid_prompt" | "context_length_exceeded" => 400,
        "authentication_error" | "invalid_api_key" => 401,
        "permission_error" | "permission_denied" => 403,
        "not_found_error" | "model_not_found" => 404,
        "rate_limit_exceeded" | "rate_limit_error" | "insufficient_quota" => 429,
        "overloaded" | "overloaded_error" | "service_unavailable" => 503,
        _ => 500,
    };
    kind_for_status(status, error_type)
}

/// `id` and `model` repeat in every chunk and are read from the first only:
/// borrowed from the data (unless escaped), not allocated per chunk. The
/// usage (once per stream) and an error (rarely) are boxed, so that the
/// chunk every text delta arrives in stays small to move.
#[derive(Debug, Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Box<WireUsage>>,
    #[serde(default)]
    error: Option<Box<ErrorDetail>>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    /// Text pieces; some compatible servers send the whole object.
    #[serde(default)]
    arguments: Option<Value>,
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)] // transcripts read best with `json!` arguments
mod tests {
    use std::fmt::Write as _;

    use serde_json::{Value, json};

    use super::ChatStreamDecoder;
    use crate::model::{ModelErrorKind, ModelResponse, StreamEvent};
    use crate::providers::http::testing::{Decoded, decode_all_splits};
    use crate::providers::openai::wire::ChatResponse;
    use crate::stop_reason::StopReason;

    /// An SSE body of unnamed events, each chunk completed with the fields
    /// every chunk has, then `[DONE]`.
    fn sse(chunks: &[Value], done: bool) -> String {
        let mut body = String::new();
        for chunk in chunks {
            let mut chunk = chunk.clone();
            if chunk.get("error").is_none() {
                let object = chunk.as_object_mut().unwrap();
                object.insert("id".into(), json!("chatcmpl-1"));
                object.insert("object".into(), json!("chat.completion.chunk"));
                object.insert("model".into(), json!("gpt-4.1-2025-04-14"));
                object.entry("choices").or_insert(json!([]));
            }
            let _ = write!(body, "data: {chunk}\n\n");
        }
        if done {
            body.push_str("data: [DONE]\n\n");
        }
        body
    }

    fn delta(delta: Value) -> Value {
        json!({"choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]})
    }

    fn finish(reason: &str) -> Value {
        json!({"choices": [{"index": 0, "delta": {}, "logprobs": null, "finish_reason": reason}]})
    }

    fn usage_chunk() -> Value {
        json!({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 100}}})
    }

    fn call_piece(index: usize, id: Option<&str>, name: Option<&str>, arguments: &str) -> Value {
        let mut function = json!({"arguments": arguments});
        if let Some(name) = name {
            function["name"] = json!(name);
        }
        let mut piece = json!({"index": index, "function": function});
        if let Some(id) = id {
            piece["id"] = json!(id);
            piece["type"] = json!("function");
        }
        delta(json!({"tool_calls": [piece]}))
    }

    async fn decode(body: &str) -> Decoded {
        decode_all_splits(ChatStreamDecoder::new, body, true).await
    }

    fn non_streamed(body: Value) -> ModelResponse {
        ModelResponse::try_from(serde_json::from_value::<ChatResponse>(body).unwrap()).unwrap()
    }

    #[tokio::test]
    async fn text_and_two_parallel_tool_calls_accumulate_to_the_non_streamed_response() {
        let chunks = [
            delta(json!({"role": "assistant", "content": "", "refusal": null})),
            delta(json!({"content": "Checking "})),
            delta(json!({"content": "both — ☀️."})),
            call_piece(0, Some("call_a"), Some("get_weather"), ""),
            call_piece(0, None, None, "{\"city\": \"Pa"),
            call_piece(0, None, None, "ris\", \"days\": [1, 2]}"),
            call_piece(1, Some("call_b"), Some("get_weather"), ""),
            call_piece(1, None, None, "{\"city\":"),
            call_piece(1, None, None, " \"Oslo\""),
            call_piece(2, Some("call_c"), Some("now"), ""),
            finish("tool_calls"),
            usage_chunk(),
        ];
        let decoded = decode(&sse(&chunks, true)).await;
        let response = decoded.result.unwrap();
        let expected = non_streamed(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1-2025-04-14",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Checking both — ☀️.", "refusal": null,
                "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"days\": [1, 2]}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\""}},
                    {"id": "call_c", "type": "function", "function": {"name": "now", "arguments": ""}}
                ]}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150, "prompt_tokens_details": {"cached_tokens": 100}}
        }));
        assert_eq!(response, expected);
        // Invalid JSON is kept raw, as the non-streamed response keeps it.
        assert_eq!(response.tool_calls().nth(1).unwrap().input, json!("{\"city\": \"Oslo\""));
        assert_eq!(response.reasoning().count(), 0);
        assert!(decoded.events.contains(&StreamEvent::ToolCallStarted {
            index: 4,
            id: "call_b".into(),
            name: "get_weather".into()
        }));
    }

    #[tokio::test]
    async fn reasoning_content_refusals_and_missing_ids() {
        let chunks = [
            delta(json!({"role": "assistant", "reasoning_content": "Think"})),
            delta(json!({"reasoning": "ing."})),
            delta(json!({"refusal": "I can't "})),
            delta(json!({"refusal": "help."})),
            finish("stop"),
        ];
        let response = decode(&sse(&chunks, true)).await.result.unwrap();
        let expected = non_streamed(
            json!({"id": "chatcmpl-1", "model": "gpt-4.1-2025-04-14", "choices": [{"finish_reason": "stop",
            "message": {"role": "assistant", "content": null, "reasoning_content": "Thinking.", "refusal": "I can't help."}}]}),
        );
        assert_eq!(response, expected);
        assert_eq!(response.stop_reason, StopReason::Refusal);
        assert_eq!(response.reasoning_text(), "Thinking.");

        // A server without ids (llama.cpp): unique ones of ours; arguments
        // sent as an object are used as they are.
        let chunks = [
            delta(json!({"tool_calls": [{"index": 0, "function": {"name": "a", "arguments": {"x": 1.5}}}]})),
            delta(json!({"tool_calls": [{"index": 1, "function": {"name": "b", "arguments": "{}"}}]})),
            finish("stop"),
        ];
        // Ids of ours differ from call to call, so one split only.
        let decoded =
            crate::providers::http::testing::decode(ChatStreamDecoder::new(), &sse(&chunks, true), true, 5).await;
        let response = decoded.result.unwrap();
        let ids: Vec<&str> = response.tool_calls().map(|call| call.id.as_str()).collect();
        assert!(ids.iter().all(|id| id.starts_with("call_")) && ids[0] != ids[1], "{ids:?}");
        assert_eq!(response.tool_calls().next().unwrap().input, json!({"x": 1.5}));
        assert_eq!(response.stop_reason, StopReason::ToolUse);
    }

    #[tokio::test]
    async fn an_error_chunk_mid_stream_is_a_typed_error() {
        let chunks = [
            delta(json!({"content": "Hel"})),
            json!({"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}),
        ];
        let error = decode(&sse(&chunks, false)).await.result.unwrap_err();
        assert_eq!((error.kind(), error.error_type()), (ModelErrorKind::Server, Some("server_error")));
        let chunks = [json!({"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}})];
        let error = decode(&sse(&chunks, false)).await.result.unwrap_err();
        assert_eq!((error.kind(), error.error_type()), (ModelErrorKind::RateLimited, Some("rate_limit_exceeded")));
    }

    #[tokio::test]
    async fn broken_streams_are_typed_errors() {
        let cases = [
            // Not JSON.
            ("data: {\"choices\": [\n\n".to_owned(), ModelErrorKind::MalformedResponse),
            // A call that never gets a name.
            (
                sse(&[call_piece(0, Some("call_a"), None, "{}"), finish("tool_calls")], true),
                ModelErrorKind::MalformedResponse,
            ),
            // A call piece after finish_reason.
            (
                sse(&[finish("stop"), call_piece(0, Some("a"), Some("t"), "{}")], true),
                ModelErrorKind::MalformedResponse,
            ),
            // No [DONE]: cut off, even after finish_reason.
            (sse(&[delta(json!({"content": "Hi"})), finish("stop")], false), ModelErrorKind::Connection),
            // [DONE] alone.
            ("data: [DONE]\n\n".to_owned(), ModelErrorKind::MalformedResponse),
        ];
        for (body, kind) in cases {
            let error = decode(&body).await.result.unwrap_err();
            assert_eq!(error.kind(), kind, "{body}\n{error}");
        }
    }

    #[tokio::test]
    async fn chunks_without_choices_before_the_first_delta_are_skipped() {
        // Azure sends prompt filter results in a chunk without choices first.
        let chunks =
            [json!({"choices": [], "prompt_filter_results": []}), delta(json!({"content": "Hi"})), finish("length")];
        let response = decode(&sse(&chunks, true)).await.result.unwrap();
        assert_eq!((response.text(), response.stop_reason), ("Hi".to_owned(), StopReason::MaxTokens));
    }

    /// Azure OpenAI's first chunk carries only prompt filter results, with
    /// an empty model and id: the model and id come from the next chunk.
    #[tokio::test]
    async fn an_azure_filter_chunk_does_not_start_the_response() {
        let filter = json!({"id": "", "object": "", "created": 0, "model": "", "choices": [],
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]});
        let chunk = |delta: Value, finish: Value| {
            json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-2024-11-20",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        };
        let body: String = [
            filter,
            chunk(json!({"role": "assistant", "content": "Hi"}), Value::Null),
            chunk(json!({}), json!("stop")),
        ]
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .chain(std::iter::once("data: [DONE]\n\n".to_owned()))
        .collect();
        let response = decode(&body).await.result.unwrap();
        assert_eq!(
            (response.model.as_deref(), response.id.as_deref()),
            (Some("gpt-4o-2024-11-20"), Some("chatcmpl-9"))
        );
        assert_eq!(response.text(), "Hi");
    }
}
