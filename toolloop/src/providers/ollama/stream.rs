//! Ollama's streamed chat (`"stream": true`): one JSON object per line,
//! decoded into neutral [`StreamEvent`]s.
//!
//! Each line carries a piece of `message.content` or `message.thinking`, or
//! whole tool calls (Ollama does not stream their arguments); the last line
//! has `"done": true`, the `done_reason` and the token counts. An error
//! after the response began arrives as a line `{"error": "..."}`.
//!
//! Neutral indices follow the order of the non-streamed response: thinking
//! 0, text 1, then the tool calls from 2 in the order they arrived.

use serde::Deserialize;

use super::PROVIDER;
use super::convert::{stop_reason, synthetic_id, tool_input};
use super::wire::ResponseToolCall;
use crate::model::{ModelError, ModelErrorKind, StreamEvent};
use crate::providers::http::{StreamDecoder, ended_early, malformed_frame, stream_error};
use crate::usage::Usage;

const THINKING: usize = 0;
const TEXT: usize = 1;
const FIRST_CALL: usize = 2;

/// Decodes one streamed chat response.
#[derive(Debug)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct ChatStreamDecoder {
    /// The client's request number, for tool call ids (as in the
    /// non-streamed response).
    sequence: u64,
    started: bool,
    thinking: bool,
    calls: usize,
    done: bool,
}

impl StreamDecoder for ChatStreamDecoder {
    fn decode(&mut self, _event: Option<&str>, data: &str, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|error| malformed_frame(PROVIDER, "a line", &error, data))?;
        if let Some(message) = chunk.error {
            // The status was 200 and the model was running: a server failure.
            return Err(stream_error(PROVIDER, ModelErrorKind::Server, message, None));
        }
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Started { model: chunk.model, provider: Some(PROVIDER.to_owned()), id: None });
        }
        let message = chunk.message.unwrap_or_default();
        if let Some(text) = message.thinking.filter(|t| !t.is_empty()) {
            self.thinking = true;
            out.push(StreamEvent::ReasoningDelta { index: THINKING, text });
        }
        if !message.content.is_empty() {
            out.push(StreamEvent::TextDelta { index: TEXT, text: message.content });
        }
        for call in message.tool_calls.unwrap_or_default() {
            let position = self.calls;
            self.calls += 1;
            let index = FIRST_CALL + position;
            let name = call.function.name;
            let input = tool_input(call.function.arguments);
            let id = match call.id.filter(|id| !id.is_empty()) {
                Some(id) => id,
                None => synthetic_id(chunk.created_at.as_deref(), self.sequence, position, &name, &input),
            };
            out.push(StreamEvent::ToolCallStarted { index, id, name });
            // For display: the arguments arrive whole, and are used exactly.
            let fragment = match &input {
                serde_json::Value::String(raw) => raw.clone(),
                other => other.to_string(),
            };
            out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment });
            out.push(StreamEvent::ToolCallFinished { index, input: Some(input) });
        }
        if chunk.done {
            let usage = Usage::new(chunk.prompt_eval_count.unwrap_or(0), chunk.eval_count.unwrap_or(0));
            out.push(StreamEvent::Usage(usage));
            out.push(StreamEvent::Finished { stop_reason: stop_reason(chunk.done_reason.as_deref(), self.calls > 0) });
            self.done = true;
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.done { Ok(()) } else { Err(ended_early(PROVIDER, "\"done\": true")) }
    }
}

impl ChatStreamDecoder {
    /// A decoder for the client's request number `sequence`.
    pub(crate) fn new(sequence: u64) -> Self {
        Self { sequence, started: false, thinking: false, calls: 0, done: false }
    }
}

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    message: Option<ChunkMessage>,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ChunkMessage {
    #[serde(default)]
    content: String,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ResponseToolCall>>,
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)] // transcripts read best with `json!` arguments
mod tests {
    use std::fmt::Write as _;

    use serde_json::{Value, json};

    use super::ChatStreamDecoder;
    use crate::model::{ModelErrorKind, StreamEvent};
    use crate::providers::http::testing::{Decoded, decode_all_splits};
    use crate::providers::ollama::convert::response;
    use crate::stop_reason::StopReason;

    const CREATED: &str = "2025-10-26T17:21:21.196249Z";

    fn ndjson(lines: &[Value]) -> String {
        lines.iter().fold(String::new(), |mut body, line| {
            let _ = writeln!(body, "{line}");
            body
        })
    }

    fn piece(message: Value) -> Value {
        json!({"model": "qwen3", "created_at": CREATED, "message": message, "done": false})
    }

    fn done(reason: &str) -> Value {
        json!({"model": "qwen3", "created_at": "2025-10-26T17:21:22Z", "message": {"role": "assistant", "content": ""},
            "done": true, "done_reason": reason, "total_duration": 4_353_619_900u64,
            "prompt_eval_count": 42, "eval_count": 17})
    }

    async fn decode(body: &str) -> Decoded {
        decode_all_splits(|| ChatStreamDecoder::new(7), body, false).await
    }

    #[tokio::test]
    async fn thinking_text_and_two_tool_calls_accumulate_to_the_non_streamed_response() {
        let lines = [
            piece(json!({"role": "assistant", "content": "", "thinking": "The user "})),
            piece(json!({"role": "assistant", "content": "", "thinking": "wants weather."})),
            piece(json!({"role": "assistant", "content": "Checking "})),
            piece(json!({"role": "assistant", "content": "both — ☀️."})),
            piece(json!({"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2.5]}}},
                {"id": "call_kept", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\""}}
            ]})),
            done("stop"),
        ];
        let decoded = decode(&ndjson(&lines)).await;
        let streamed = decoded.result.unwrap();
        // The non-streamed response to the same request number, with the
        // timestamp of the line that carried the calls.
        let body = json!({"model": "qwen3", "created_at": CREATED,
            "message": {"role": "assistant", "content": "Checking both — ☀️.", "thinking": "The user wants weather.", "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2.5]}}},
                {"id": "call_kept", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\""}}
            ]},
            "done": true, "done_reason": "stop", "prompt_eval_count": 42, "eval_count": 17});
        assert_eq!(streamed, response(serde_json::from_value(body).unwrap(), 7));
        assert_eq!(streamed.stop_reason, StopReason::ToolUse);
        assert_eq!(streamed.tool_calls().nth(1).unwrap().input, json!("{\"city\": \"Oslo\""));
        assert_eq!(streamed.reasoning_text(), "The user wants weather.");
        assert!(decoded.events.contains(&StreamEvent::ToolCallArgumentsDelta {
            index: 2,
            fragment: "{\"city\":\"Paris\",\"days\":[1,2.5]}".into()
        }));
    }

    #[tokio::test]
    async fn the_done_reason_and_counts_come_from_the_last_line() {
        let lines = [piece(json!({"role": "assistant", "content": "Hi"})), done("length")];
        let response = decode(&ndjson(&lines)).await.result.unwrap();
        assert_eq!((response.text(), response.stop_reason), ("Hi".to_owned(), StopReason::MaxTokens));
        assert_eq!((response.usage.input_tokens, response.usage.output_tokens), (42, 17));
        assert_eq!(response.model.as_deref(), Some("qwen3"));
    }

    #[tokio::test]
    async fn errors_and_broken_streams_are_typed() {
        let cases = [
            (
                ndjson(&[
                    piece(json!({"content": "Yes"})),
                    json!({"error": "an error was encountered while running the model"}),
                ]),
                ModelErrorKind::Server,
            ),
            (
                format!("{}{{\"model\": \"qwen3\", \"mess\n", ndjson(&[piece(json!({"content": "Yes"}))])),
                ModelErrorKind::MalformedResponse,
            ),
            (ndjson(&[piece(json!({"content": "Yes"}))]), ModelErrorKind::Connection),
        ];
        for (body, kind) in cases {
            let error = decode(&body).await.result.unwrap_err();
            assert_eq!(error.kind(), kind, "{body}\n{error}");
        }
    }
}
