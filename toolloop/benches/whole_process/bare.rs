//! The yardstick: the same conversations driven by a hand-written loop of
//! `reqwest` + `serde_json` (and `eventsource-stream` when streamed), no
//! framework. The history is a `Vec<serde_json::Value>` serialised whole at
//! every call; the response is parsed into a `Value` (whole) or into small
//! typed event structs (streamed, text and tool-call arguments accumulated as
//! they arrive); the tool is dispatched by hand.

use eventsource_stream::Eventsource as _;
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What the `lookup` tool answers, shared with the toolloop driver so that
/// both loops send the model the same bytes.
pub(crate) fn lookup(key: &str) -> String {
    format!("value of {key}: 42")
}

/// One conversation: a client and where the stub is.
pub(crate) struct Bare<'a> {
    pub(crate) client: &'a reqwest::Client,
    /// `http://127.0.0.1:PORT/{calls}`.
    pub(crate) base: &'a str,
}

#[derive(Serialize)]
struct OpenAiRequest<'a> {
    model: &'a str,
    messages: &'a [Value],
    tools: &'a Value,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
}

#[derive(Serialize)]
struct AnthropicRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    system: &'a str,
    messages: &'a [Value],
    tools: &'a Value,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

fn openai_tools() -> Value {
    json!([{
        "type": "function",
        "function": {
            "name": "lookup", "description": "Look a key up.",
            "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
        }
    }])
}

fn anthropic_tools() -> Value {
    json!([{
        "name": "lookup", "description": "Look a key up.",
        "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
    }])
}

impl Bare<'_> {
    async fn post(&self, path: &str, anthropic: bool, body: Vec<u8>) -> reqwest::Response {
        let request = self.client.post(format!("{}{path}", self.base)).header("content-type", "application/json");
        let request = if anthropic {
            request.header("x-api-key", "sk-bench").header("anthropic-version", "2023-06-01")
        } else {
            request.header("authorization", "Bearer sk-bench")
        };
        let response = request.body(body).send().await.unwrap();
        assert!(response.status().is_success());
        response
    }

    /// One OpenAI Chat Completions conversation; returns its model calls.
    pub(crate) async fn openai(&self) -> usize {
        let tools = openai_tools();
        let mut messages = vec![
            json!({"role": "system", "content": "You look keys up."}),
            json!({"role": "user", "content": "Look up every key."}),
        ];
        let mut calls = 0;
        loop {
            let request = OpenAiRequest {
                model: "stub",
                messages: &messages,
                tools: &tools,
                stream: false,
                stream_options: None,
            };
            let body = serde_json::to_vec(&request).unwrap();
            let response = self.post("/v1/chat/completions", false, body).await.bytes().await.unwrap();
            calls += 1;
            let mut response: Value = serde_json::from_slice(&response).unwrap();
            let message = response["choices"][0]["message"].take();
            let tool_calls = message["tool_calls"].as_array().cloned().unwrap_or_default();
            messages.push(message);
            if tool_calls.is_empty() {
                return calls;
            }
            for call in tool_calls {
                let arguments: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
                let content = lookup(arguments["key"].as_str().unwrap());
                messages.push(json!({"role": "tool", "tool_call_id": call["id"], "content": content}));
            }
        }
    }

    /// One Anthropic Messages conversation; returns its model calls.
    pub(crate) async fn anthropic(&self) -> usize {
        let tools = anthropic_tools();
        let mut messages = vec![json!({"role": "user", "content": "Look up every key."})];
        let mut calls = 0;
        loop {
            let request = AnthropicRequest {
                model: "stub",
                max_tokens: 1024,
                system: "You look keys up.",
                messages: &messages,
                tools: &tools,
                stream: false,
            };
            let body = serde_json::to_vec(&request).unwrap();
            let response = self.post("/v1/messages", true, body).await.bytes().await.unwrap();
            calls += 1;
            let mut response: Value = serde_json::from_slice(&response).unwrap();
            let content = response["content"].take();
            let results: Vec<Value> = content
                .as_array()
                .unwrap()
                .iter()
                .filter(|block| block["type"] == "tool_use")
                .map(|block| {
                    let content = lookup(block["input"]["key"].as_str().unwrap());
                    json!({"type": "tool_result", "tool_use_id": block["id"], "content": content})
                })
                .collect();
            messages.push(json!({"role": "assistant", "content": content}));
            if results.is_empty() {
                return calls;
            }
            messages.push(json!({"role": "user", "content": results}));
        }
    }

    /// One streamed OpenAI Chat Completions conversation; returns its model
    /// calls and the events read.
    pub(crate) async fn openai_streamed(&self) -> (usize, usize) {
        let tools = openai_tools();
        let mut messages = vec![
            json!({"role": "system", "content": "You look keys up."}),
            json!({"role": "user", "content": "Look up every key."}),
        ];
        let (mut calls, mut events) = (0, 0);
        loop {
            let request = OpenAiRequest {
                model: "stub",
                messages: &messages,
                tools: &tools,
                stream: true,
                stream_options: Some(json!({"include_usage": true})),
            };
            let body = serde_json::to_vec(&request).unwrap();
            let response = self.post("/v1/chat/completions", false, body).await;
            calls += 1;
            let mut stream = response.bytes_stream().eventsource();
            let mut answer = Answer::default();
            while let Some(event) = stream.next().await {
                events += 1;
                if answer.openai_event(&event.unwrap().data) {
                    break;
                }
            }
            let mut message = json!({"role": "assistant", "content": answer.text});
            let Some((id, name)) = answer.call else {
                messages.push(message);
                return (calls, events);
            };
            let arguments: Value = serde_json::from_str(&answer.arguments).unwrap();
            let content = lookup(arguments["key"].as_str().unwrap());
            message["tool_calls"] =
                json!([{"id": id, "type": "function", "function": {"name": name, "arguments": answer.arguments}}]);
            messages.push(message);
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
        }
    }

    /// One streamed Anthropic Messages conversation; returns its model calls
    /// and the events read.
    pub(crate) async fn anthropic_streamed(&self) -> (usize, usize) {
        let tools = anthropic_tools();
        let mut messages = vec![json!({"role": "user", "content": "Look up every key."})];
        let (mut calls, mut events) = (0, 0);
        loop {
            let request = AnthropicRequest {
                model: "stub",
                max_tokens: 1024,
                system: "You look keys up.",
                messages: &messages,
                tools: &tools,
                stream: true,
            };
            let body = serde_json::to_vec(&request).unwrap();
            let response = self.post("/v1/messages", true, body).await;
            calls += 1;
            let mut stream = response.bytes_stream().eventsource();
            let mut answer = Answer::default();
            while let Some(event) = stream.next().await {
                events += 1;
                if answer.anthropic_event(&event.unwrap().data) {
                    break;
                }
            }
            let mut content = vec![json!({"type": "text", "text": answer.text})];
            let Some((id, name)) = answer.call else {
                messages.push(json!({"role": "assistant", "content": content}));
                return (calls, events);
            };
            let input: Value = serde_json::from_str(&answer.arguments).unwrap();
            let result = lookup(input["key"].as_str().unwrap());
            content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            messages.push(json!({"role": "assistant", "content": content}));
            messages.push(
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": result}]}),
            );
        }
    }
}

/// What a streamed answer accumulates to.
#[derive(Default)]
struct Answer {
    text: String,
    /// The tool call's id and name.
    call: Option<(String, String)>,
    arguments: String,
    stop_reason: String,
    input_tokens: u64,
    output_tokens: u64,
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

impl Answer {
    /// Folds in one Anthropic event; `true` at `message_stop`.
    fn anthropic_event(&mut self, data: &str) -> bool {
        match serde_json::from_str(data).unwrap() {
            AnthropicEvent::MessageStart { message } => {
                self.input_tokens = message.usage.input_tokens;
                self.output_tokens = message.usage.output_tokens;
            }
            AnthropicEvent::ContentBlockStart { content_block: AnthropicBlock::ToolUse { id, name } } => {
                self.call = Some((id, name));
            }
            AnthropicEvent::ContentBlockDelta { delta: AnthropicDelta::TextDelta { text } } => {
                self.text.push_str(&text);
            }
            AnthropicEvent::ContentBlockDelta { delta: AnthropicDelta::InputJsonDelta { partial_json } } => {
                self.arguments.push_str(&partial_json);
            }
            AnthropicEvent::MessageDelta { delta, usage } => {
                self.stop_reason = delta.stop_reason;
                self.output_tokens = usage.output_tokens;
            }
            AnthropicEvent::MessageStop => return true,
            AnthropicEvent::ContentBlockStart { content_block: AnthropicBlock::Text } | AnthropicEvent::Other => {}
        }
        false
    }

    /// Folds in one OpenAI chunk; `true` at `[DONE]`.
    fn openai_event(&mut self, data: &str) -> bool {
        if data == "[DONE]" {
            assert!(!self.stop_reason.is_empty() && self.output_tokens > 0 && self.input_tokens > 0);
            return true;
        }
        let chunk: OpenAiChunk = serde_json::from_str(data).unwrap();
        for choice in chunk.choices {
            if let Some(text) = choice.delta.content {
                self.text.push_str(&text);
            }
            for call in choice.delta.tool_calls.unwrap_or_default() {
                if let (Some(id), Some(name)) = (call.id, call.function.name) {
                    self.call = Some((id, name));
                }
                self.arguments.push_str(call.function.arguments.as_deref().unwrap_or_default());
            }
            if let Some(reason) = choice.finish_reason {
                self.stop_reason = reason;
            }
        }
        if let Some(usage) = chunk.usage {
            self.input_tokens = usage.prompt_tokens;
            self.output_tokens = usage.completion_tokens;
        }
        false
    }
}
