//! The Anthropic Messages stream (`"stream": true`): server-sent events
//! decoded into neutral [`StreamEvent`]s.
//!
//! A stream is `message_start`, then for each content block a
//! `content_block_start`, its deltas and a `content_block_stop`, then
//! `message_delta` (stop reason, cumulative usage) and `message_stop`;
//! `ping`s may come anywhere, an `error` event ends it. Each content block's
//! `index` is its position in the final message, and becomes the neutral index.

mod one_pass;

use serde::Deserialize;
use serde_json::Value;

use super::PROVIDER;
use super::convert::{reasoning_from, stop_reason_from};
use super::wire::ErrorDetail;
use crate::model::{ModelError, StreamEvent};
use crate::providers::convert::synthetic_call_id;
use crate::providers::http::{StreamDecoder, ended_early, kind_for_status, malformed_frame, stream_error};
use crate::reasoning::ReasoningState;
use crate::usage::Usage;

/// Decodes one Messages stream.
#[derive(Debug, Default)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct MessagesStreamDecoder {
    started: bool,
    /// The answering model, which reasoning blocks are tied to.
    model: Option<String>,
    /// Every block seen, by index, with what is known about it.
    blocks: Vec<(usize, Block)>,
    usage: Usage,
    stop_reason: Option<String>,
    done: bool,
}

#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        /// The `input` of `content_block_start`, used when no delta follows.
        input: Option<Value>,
        had_deltas: bool,
    },
    Thinking {
        text: String,
        signature: String,
    },
    Redacted {
        data: String,
    },
    /// A block this crate does not use (server tools, ...): its deltas are
    /// skipped, as the non-streamed response drops the block.
    Ignored,
    Stopped,
}

impl StreamDecoder for MessagesStreamDecoder {
    fn decode(&mut self, _event: Option<&str>, data: &str, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        let event: Event =
            serde_json::from_str(data).map_err(|error| malformed_frame(PROVIDER, "an event", &error, data))?;
        match event {
            Event::MessageStart { message } => {
                if self.started {
                    return Err(malformed("message_start arrived twice"));
                }
                self.started = true;
                self.model.clone_from(&message.model);
                out.push(StreamEvent::Started {
                    model: message.model.clone(),
                    provider: Some(PROVIDER.to_owned()),
                    id: message.id,
                });
                if let Some(usage) = message.usage {
                    usage.apply(&mut self.usage);
                    out.push(StreamEvent::Usage(self.usage));
                }
            }
            Event::ContentBlockStart { index, content_block } => self.block_start(index, content_block, out)?,
            Event::ContentBlockDelta { index, delta } => self.block_delta(index, delta, out)?,
            Event::ContentBlockStop { index } => self.block_stop(index, out)?,
            Event::MessageDelta { delta, usage } => {
                self.require_start("message_delta")?;
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(usage) = usage {
                    usage.apply(&mut self.usage);
                    out.push(StreamEvent::Usage(self.usage));
                }
            }
            Event::MessageStop => {
                self.require_start("message_stop")?;
                let Some(stop_reason) = self.stop_reason.as_deref() else {
                    return Err(malformed("the response has no stop_reason"));
                };
                out.push(StreamEvent::Finished { stop_reason: stop_reason_from(stop_reason) });
                self.done = true;
            }
            Event::Error { error } => {
                return Err(stream_error(PROVIDER, error_kind(&error.kind), error.message, Some(error.kind)));
            }
            // New event types may be added at any time (the API's
            // versioning policy): they are skipped.
            Event::Ping | Event::Other => {}
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.done { Ok(()) } else { Err(ended_early(PROVIDER, "message_stop")) }
    }
}

impl MessagesStreamDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn block_start(&mut self, index: usize, block: StartBlock, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        self.require_start("content_block_start")?;
        if self.position(index).is_some() {
            return Err(malformed(&format!("content block {index} started twice")));
        }
        let block = match block {
            StartBlock::Text { text } => {
                // Opens the block even when no delta follows, as the
                // non-streamed message keeps empty text blocks.
                out.push(StreamEvent::TextDelta { index, text });
                Block::Text
            }
            StartBlock::ToolUse { id, name, input } => {
                // As the non-streamed response: results need a real id to answer.
                let id = if id.is_empty() { synthetic_call_id("toolu_", index, &name) } else { id };
                out.push(StreamEvent::ToolCallStarted { index, id, name });
                Block::ToolUse { input, had_deltas: false }
            }
            StartBlock::Thinking { thinking, signature } => {
                // The block opens with its `ReasoningFinished` if no delta has text.
                if !thinking.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { index, text: thinking.clone() });
                }
                Block::Thinking { text: thinking, signature }
            }
            StartBlock::RedactedThinking { data } => Block::Redacted { data },
            StartBlock::Other => Block::Ignored,
        };
        self.blocks.push((index, block));
        Ok(())
    }

    fn block_delta(&mut self, index: usize, delta: Delta, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        match (self.open_block(index)?, delta) {
            (Block::Text, Delta::Text { text }) => out.push(StreamEvent::TextDelta { index, text }),
            (Block::ToolUse { had_deltas, .. }, Delta::InputJson { partial_json }) => {
                *had_deltas = true;
                out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment: partial_json });
            }
            (Block::Thinking { text, .. }, Delta::Thinking { thinking }) => {
                text.push_str(&thinking);
                out.push(StreamEvent::ReasoningDelta { index, text: thinking });
            }
            (Block::Thinking { signature, .. }, Delta::Signature { signature: piece }) => signature.push_str(&piece),
            // Deltas this crate does not use (citations) and deltas of
            // ignored blocks.
            (Block::Ignored, _) | (_, Delta::Other) => {}
            (_, delta) => {
                return Err(malformed(&format!("a {} for content block {index} of another kind", delta.name())));
            }
        }
        Ok(())
    }

    fn block_stop(&mut self, index: usize, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        match std::mem::replace(self.open_block(index)?, Block::Stopped) {
            Block::ToolUse { input, had_deltas } => {
                // Without deltas the start's input is the whole input (a
                // tool without parameters gets `{}`).
                let input = (!had_deltas).then(|| input.unwrap_or_else(|| Value::Object(serde_json::Map::new())));
                out.push(StreamEvent::ToolCallFinished { index, input });
            }
            // As the non-streamed response holds them (see `convert`).
            Block::Thinking { text, signature } => out.push(StreamEvent::ReasoningFinished {
                index,
                reasoning: reasoning_from(self.model.as_ref(), ReasoningState::Signed { signature }, vec![text]),
            }),
            Block::Redacted { data } => out.push(StreamEvent::ReasoningFinished {
                index,
                reasoning: reasoning_from(self.model.as_ref(), ReasoningState::Redacted { data }, Vec::new()),
            }),
            Block::Text | Block::Ignored | Block::Stopped => {}
        }
        Ok(())
    }

    fn position(&self, index: usize) -> Option<usize> {
        self.blocks.iter().rposition(|(i, _)| *i == index)
    }

    /// The block at `index`, which must have started and not stopped.
    fn open_block(&mut self, index: usize) -> Result<&mut Block, ModelError> {
        match self.position(index) {
            None => Err(malformed(&format!("an event for content block {index}, which never started"))),
            Some(at) if matches!(self.blocks[at].1, Block::Stopped) => {
                Err(malformed(&format!("an event for content block {index}, which already stopped")))
            }
            Some(at) => Ok(&mut self.blocks[at].1),
        }
    }

    fn require_start(&self, event: &str) -> Result<(), ModelError> {
        if self.started { Ok(()) } else { Err(malformed(&format!("{event} arrived before message_start"))) }
    }
}

fn malformed(message: &str) -> ModelError {
    ModelError::new(crate::model::ModelErrorKind::MalformedResponse, PROVIDER, message.to_owned())
}

/// The kind of an error event, as the non-streamed call would classify
/// the same error type arriving with its HTTP status. An error type this
/// crate does not know is a server failure: the response had begun.
fn error_kind(error_type: &str) -> crate::model::ModelErrorKind {
    let status = match error_type {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => 500,
    };
    kind_for_status(status, Some(error_type))
}

/// One event of the stream, by its `type`. Deserialised by hand in one
/// pass (`stream/one_pass.rs`), not as a `#[serde(tag = "type")]` enum:
/// that buffers every event, and its delta again, in an intermediate
/// tree before reading it, on each of a stream's many events.
#[derive(Debug)]
enum Event {
    MessageStart { message: StartMessage },
    ContentBlockStart { index: usize, content_block: StartBlock },
    ContentBlockDelta { index: usize, delta: Delta },
    ContentBlockStop { index: usize },
    MessageDelta { delta: MessageDeltaBody, usage: Option<StreamUsage> },
    MessageStop,
    Ping,
    Error { error: ErrorDetail },
    Other,
}

#[derive(Debug, Deserialize)]
struct StartMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<StreamUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    #[serde(other)]
    Other,
}

/// A block's delta, by its `type` (deserialised by hand, as [`Event`]).
#[derive(Debug, PartialEq)]
enum Delta {
    Text { text: String },
    InputJson { partial_json: String },
    Thinking { thinking: String },
    Signature { signature: String },
    Other,
}

impl Delta {
    fn name(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text_delta",
            Self::InputJson { .. } => "input_json_delta",
            Self::Thinking { .. } => "thinking_delta",
            Self::Signature { .. } => "signature_delta",
            Self::Other => "delta",
        }
    }
}

#[derive(Debug, Deserialize)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Usage as the stream reports it: `message_start` has the input side,
/// `message_delta` cumulative totals; a field left out keeps its value.
#[derive(Debug, Deserialize)]
#[allow(clippy::struct_field_names)] // the API's names
struct StreamUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl StreamUsage {
    fn apply(&self, usage: &mut Usage) {
        let set = |field: &mut u64, value: Option<u64>| {
            if let Some(value) = value {
                *field = value;
            }
        };
        set(&mut usage.input_tokens, self.input_tokens);
        set(&mut usage.output_tokens, self.output_tokens);
        set(&mut usage.cache_write_tokens, self.cache_creation_input_tokens);
        set(&mut usage.cache_read_tokens, self.cache_read_input_tokens);
    }
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)] // transcripts read best with `json!` arguments
mod tests {
    use std::fmt::Write as _;

    use serde_json::json;

    use super::MessagesStreamDecoder;
    use crate::model::{ModelErrorKind, ModelResponse, StreamEvent};
    use crate::providers::anthropic::wire::MessagesResponse;
    use crate::providers::http::testing::{Decoded, decode_all_splits};

    /// An SSE body of `(event name, data)` pairs.
    fn sse(events: &[(&str, serde_json::Value)]) -> String {
        events.iter().fold(String::new(), |mut body, (name, data)| {
            let _ = write!(body, "event: {name}\ndata: {data}\n\n");
            body
        })
    }

    async fn decode(body: &str) -> Decoded {
        decode_all_splits(MessagesStreamDecoder::new, body, true).await
    }

    /// What the non-streamed call makes of `body`.
    fn non_streamed(body: serde_json::Value) -> ModelResponse {
        ModelResponse::try_from(serde_json::from_value::<MessagesResponse>(body).unwrap()).unwrap()
    }

    fn message_start() -> (&'static str, serde_json::Value) {
        (
            "message_start",
            json!({"type": "message_start", "message": {
                "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 472, "output_tokens": 2, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 100}
            }}),
        )
    }

    fn block_start(index: usize, block: serde_json::Value) -> (&'static str, serde_json::Value) {
        ("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": block}))
    }

    fn delta(index: usize, delta: serde_json::Value) -> (&'static str, serde_json::Value) {
        ("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": delta}))
    }

    fn text(index: usize, text: &str) -> (&'static str, serde_json::Value) {
        delta(index, json!({"type": "text_delta", "text": text}))
    }

    fn json_delta(index: usize, partial: &str) -> (&'static str, serde_json::Value) {
        delta(index, json!({"type": "input_json_delta", "partial_json": partial}))
    }

    fn block_stop(index: usize) -> (&'static str, serde_json::Value) {
        ("content_block_stop", json!({"type": "content_block_stop", "index": index}))
    }

    fn message_end(stop_reason: &str, output_tokens: u64) -> [(&'static str, serde_json::Value); 2] {
        [
            (
                "message_delta",
                json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]
    }

    fn usage_json(output_tokens: u64) -> serde_json::Value {
        json!({"input_tokens": 472, "output_tokens": output_tokens, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 100})
    }

    #[tokio::test]
    async fn text_and_two_parallel_tool_calls_accumulate_to_the_non_streamed_response() {
        let mut events = vec![
            message_start(),
            block_start(0, json!({"type": "text", "text": ""})),
            ("ping", json!({"type": "ping"})),
            text(0, "Let me check "),
            text(0, "both cities — ☀️."),
            block_stop(0),
            block_start(1, json!({"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}})),
            json_delta(1, ""),
            json_delta(1, "{\"city\": \"Pa"),
            json_delta(1, "ris\", \"days\": [1, "),
            json_delta(1, "2]}"),
            block_stop(1),
            block_start(2, json!({"type": "tool_use", "id": "toolu_02", "name": "get_weather", "input": {}})),
            json_delta(2, "{\"city\":"),
            json_delta(2, " \"Oslo\"}"),
            block_stop(2),
            block_start(3, json!({"type": "tool_use", "id": "toolu_03", "name": "now", "input": {}})),
            block_stop(3),
        ];
        events.extend(message_end("tool_use", 89));
        let decoded = decode(&sse(&events)).await;
        let response = decoded.result.unwrap();
        let expected = non_streamed(json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "Let me check both cities — ☀️."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris", "days": [1, 2]}},
                {"type": "tool_use", "id": "toolu_02", "name": "get_weather", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "toolu_03", "name": "now", "input": {}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null, "usage": usage_json(89)
        }));
        assert_eq!(response, expected);
        assert_eq!(response.reasoning().count(), 0);
        // The tool calls stream as they form.
        assert!(decoded.events.contains(&StreamEvent::ToolCallArgumentsDelta { index: 1, fragment: "2]}".into() }));
        assert!(decoded.events.contains(&StreamEvent::ToolCallFinished { index: 1, input: None }));
        assert!(decoded.events.contains(&StreamEvent::ToolCallFinished { index: 3, input: Some(json!({})) }));
    }

    #[tokio::test]
    async fn thinking_with_its_signature_and_redacted_thinking_are_kept_as_reasoning() {
        let mut events = vec![
            message_start(),
            block_start(0, json!({"type": "thinking", "thinking": "", "signature": ""})),
            delta(0, json!({"type": "thinking_delta", "thinking": "The user wants "})),
            delta(0, json!({"type": "thinking_delta", "thinking": "a haiku."})),
            delta(0, json!({"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"})),
            block_stop(0),
            block_start(1, json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"})),
            block_stop(1),
            block_start(2, json!({"type": "text", "text": ""})),
            text(2, "Autumn leaves fall"),
            delta(2, json!({"type": "citations_delta", "citation": {"type": "char_location"}})),
            block_stop(2),
        ];
        events.extend(message_end("end_turn", 120));
        let response = decode(&sse(&events)).await.result.unwrap();
        let expected = non_streamed(json!({
            "id": "msg_01", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "The user wants a haiku.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
                {"type": "text", "text": "Autumn leaves fall"}
            ],
            "stop_reason": "end_turn", "usage": usage_json(120)
        }));
        assert_eq!(response, expected);
        let reasoning: Vec<_> = response.reasoning().collect();
        assert_eq!(reasoning.len(), 2);
        assert_eq!(reasoning[0].text, ["The user wants a haiku."]);
        assert!(!reasoning[0].is_opaque_to("anthropic") && reasoning[1].is_opaque_to("openai-responses"));
    }

    #[tokio::test]
    async fn server_tool_blocks_are_skipped_as_the_non_streamed_response_skips_them() {
        let mut events = vec![
            message_start(),
            block_start(0, json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}})),
            json_delta(0, "{\"query\": \"rust\"}"),
            block_stop(0),
            block_start(1, json!({"type": "text", "text": ""})),
            text(1, "Found it."),
            block_stop(1),
            ("a_future_event", json!({"type": "a_future_event"})),
        ];
        events.extend(message_end("end_turn", 5));
        let response = decode(&sse(&events)).await.result.unwrap();
        assert_eq!(response.content, vec![crate::message::ContentBlock::text("Found it.")]);
    }

    #[tokio::test]
    async fn an_error_event_mid_stream_is_a_typed_error() {
        let events = [
            message_start(),
            block_start(0, json!({"type": "text", "text": ""})),
            text(0, "Hel"),
            ("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        ];
        let decoded = decode(&sse(&events)).await;
        let error = decoded.result.unwrap_err();
        assert_eq!(
            (error.kind(), error.error_type(), error.message()),
            (ModelErrorKind::Overloaded, Some("overloaded_error"), "Overloaded")
        );
        assert!(error.is_retryable());
        // The deltas before it were handed out: the run layer discards them.
        assert!(decoded.events.contains(&StreamEvent::TextDelta { index: 0, text: "Hel".into() }));
        for (error_type, kind) in [
            ("rate_limit_error", ModelErrorKind::RateLimited),
            ("api_error", ModelErrorKind::Server),
            ("invalid_request_error", ModelErrorKind::InvalidRequest),
            ("something_new", ModelErrorKind::Server),
        ] {
            assert_eq!(super::error_kind(error_type), kind, "{error_type}");
        }
    }

    #[tokio::test]
    async fn broken_streams_are_typed_errors() {
        let start = sse(&[message_start()]);
        let text_block = sse(&[block_start(0, json!({"type": "text", "text": ""}))]);
        let cases = [
            // Not JSON.
            (
                format!("{start}event: content_block_delta\ndata: {{\"type\": \"content_bl\n\n"),
                ModelErrorKind::MalformedResponse,
            ),
            // A delta for a block that never started.
            (format!("{start}{}", sse(&[text(4, "x")])), ModelErrorKind::MalformedResponse),
            // A delta after the block stopped.
            (format!("{start}{text_block}{}", sse(&[block_stop(0), text(0, "x")])), ModelErrorKind::MalformedResponse),
            // A delta of the wrong kind.
            (format!("{start}{text_block}{}", sse(&[json_delta(0, "{}")])), ModelErrorKind::MalformedResponse),
            // A block that starts twice.
            (format!("{start}{text_block}{text_block}"), ModelErrorKind::MalformedResponse),
            // Content before message_start.
            (text_block.clone(), ModelErrorKind::MalformedResponse),
            // No stop reason.
            (
                format!("{start}{}", sse(&[("message_stop", json!({"type": "message_stop"}))])),
                ModelErrorKind::MalformedResponse,
            ),
            // Cut off before message_stop.
            (format!("{start}{text_block}{}", sse(&[text(0, "Hel")])), ModelErrorKind::Connection),
        ];
        for (body, kind) in cases {
            let error = decode(&body).await.result.unwrap_err();
            assert_eq!(error.kind(), kind, "{body}\n{error}");
        }
    }

    #[tokio::test]
    async fn nothing_after_message_stop_is_read() {
        let mut events = vec![message_start()];
        events.extend(message_end("end_turn", 1));
        let mut body = sse(&events);
        body.push_str("event: error\ndata: not even json\n\n");
        assert_eq!(decode(&body).await.result.unwrap().stop_reason, crate::stop_reason::StopReason::EndTurn);
    }
}
