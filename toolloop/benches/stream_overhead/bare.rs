//! The floor: the same streamed call made by hand with `reqwest`, the
//! `eventsource-stream` SSE parser and `serde_json`, no framework. It does
//! the work toolloop does for a streamed call: send the request, parse every
//! event, hand each text delta to the caller as it arrives, and build the
//! whole response (text, the tool call with its arguments parsed, stop
//! reason, usage).

use eventsource_stream::Eventsource as _;
use futures_util::StreamExt as _;
use serde::Deserialize;
use serde_json::{Value, json};

/// What a streamed call accumulates to.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub(crate) text: String,
    pub(crate) call: Option<(String, String, Value)>,
    pub(crate) stop_reason: String,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
}

/// One streamed call to `url` (Anthropic Messages when `anthropic`, else
/// OpenAI Chat Completions); `on_text` sees every text delta as it arrives.
pub(crate) async fn stream_call(
    client: &reqwest::Client,
    url: &str,
    anthropic: bool,
    on_text: &mut dyn FnMut(&str),
) -> Answer {
    let (body, key_header, key) = if anthropic {
        (
            json!({
                "model": "stub", "max_tokens": 1024, "stream": true,
                "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
                "tools": [{"name": "lookup", "description": "Look a key up.", "input_schema":
                    {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}]
            }),
            "x-api-key",
            "sk-bench",
        )
    } else {
        (
            json!({
                "model": "stub", "stream": true, "stream_options": {"include_usage": true},
                "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
                "tools": [{"type": "function", "function": {"name": "lookup", "description": "Look a key up.",
                    "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}}]
            }),
            "authorization",
            "Bearer sk-bench",
        )
    };
    let response = client
        .post(url)
        .header(key_header, key)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(serde_json::to_vec(&body).unwrap())
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    let mut events = response.bytes_stream().eventsource();
    let mut answer = Answer::default();
    let mut arguments = String::new();
    while let Some(event) = events.next().await {
        let event = event.unwrap();
        let done = if anthropic {
            anthropic_event(&event.data, &mut answer, &mut arguments, on_text)
        } else {
            openai_event(&event.data, &mut answer, &mut arguments, on_text)
        };
        if done {
            break;
        }
    }
    if let Some((_, _, input)) = &mut answer.call {
        *input = serde_json::from_str(&arguments).unwrap();
    }
    answer
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnthropicEvent {
    MessageStart {
        message: AnthropicMessage,
    },
    ContentBlockStart {
        content_block: AnthropicBlock,
    },
    ContentBlockDelta {
        delta: AnthropicDelta,
    },
    MessageDelta {
        delta: AnthropicStop,
        usage: AnthropicUsage,
    },
    MessageStop,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct AnthropicMessage {
    usage: AnthropicUsage,
}

#[derive(Deserialize)]
struct AnthropicUsage {
    #[serde(default)]
    input_tokens: u64,
    output_tokens: u64,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnthropicBlock {
    Text,
    ToolUse { id: String, name: String },
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnthropicDelta {
    TextDelta { text: String },
    InputJsonDelta { partial_json: String },
}

#[derive(Deserialize)]
struct AnthropicStop {
    stop_reason: String,
}

/// Handles one Anthropic event; `true` at `message_stop`.
fn anthropic_event(data: &str, answer: &mut Answer, arguments: &mut String, on_text: &mut dyn FnMut(&str)) -> bool {
    match serde_json::from_str(data).unwrap() {
        AnthropicEvent::MessageStart { message } => {
            answer.input_tokens = message.usage.input_tokens;
            answer.output_tokens = message.usage.output_tokens;
        }
        AnthropicEvent::ContentBlockStart { content_block: AnthropicBlock::ToolUse { id, name } } => {
            answer.call = Some((id, name, Value::Null));
        }
        AnthropicEvent::ContentBlockDelta { delta: AnthropicDelta::TextDelta { text } } => {
            on_text(&text);
            answer.text.push_str(&text);
        }
        AnthropicEvent::ContentBlockDelta { delta: AnthropicDelta::InputJsonDelta { partial_json } } => {
            arguments.push_str(&partial_json);
        }
        AnthropicEvent::MessageDelta { delta, usage } => {
            answer.stop_reason = delta.stop_reason;
            answer.output_tokens = usage.output_tokens;
        }
        AnthropicEvent::MessageStop => return true,
        AnthropicEvent::ContentBlockStart { content_block: AnthropicBlock::Text } | AnthropicEvent::Other => {}
    }
    false
}

#[derive(Deserialize)]
struct OpenAiChunk {
    choices: Vec<OpenAiChoice>,
    usage: Option<OpenAiUsage>,
}

#[derive(Deserialize)]
struct OpenAiChoice {
    delta: OpenAiDelta,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct OpenAiDelta {
    content: Option<String>,
    tool_calls: Option<Vec<OpenAiToolCall>>,
}

#[derive(Deserialize)]
struct OpenAiToolCall {
    id: Option<String>,
    function: OpenAiFunction,
}

#[derive(Deserialize)]
struct OpenAiFunction {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct OpenAiUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
}

/// Handles one OpenAI chunk; `true` at `[DONE]`.
fn openai_event(data: &str, answer: &mut Answer, arguments: &mut String, on_text: &mut dyn FnMut(&str)) -> bool {
    if data == "[DONE]" {
        return true;
    }
    let chunk: OpenAiChunk = serde_json::from_str(data).unwrap();
    for choice in chunk.choices {
        if let Some(text) = choice.delta.content.filter(|text| !text.is_empty()) {
            on_text(&text);
            answer.text.push_str(&text);
        }
        for call in choice.delta.tool_calls.unwrap_or_default() {
            if let (Some(id), Some(name)) = (call.id, call.function.name) {
                answer.call = Some((id, name, Value::Null));
            }
            arguments.push_str(call.function.arguments.as_deref().unwrap_or_default());
        }
        if let Some(reason) = choice.finish_reason {
            answer.stop_reason = reason;
        }
    }
    if let Some(usage) = chunk.usage {
        answer.input_tokens = usage.prompt_tokens;
        answer.output_tokens = usage.completion_tokens;
    }
    false
}
