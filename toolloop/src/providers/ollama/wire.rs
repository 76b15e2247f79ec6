//! Ollama's chat API on the wire (`POST {host}/api/chat`, not streamed).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::providers::convert::FunctionTool;

/// The value of `think`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum OllamaThink {
    /// `true` or `false`.
    Enabled(bool),
    /// A named level.
    Level(&'static str),
}

/// The request body, as one struct: what the body built in pieces (see
/// `convert::body`) must equal byte for byte.
#[cfg(test)]
#[derive(Debug, Serialize)]
pub(super) struct ChatRequest<'a> {
    pub(super) model: &'a str,
    pub(super) messages: Vec<RequestMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<FunctionTool<'a>>,
    /// `false` for one JSON object back, `true` for a stream of them.
    pub(super) stream: bool,
    /// Always `false`: fail with an error rather than drop the start of a
    /// prompt that does not fit the context window (older servers ignore it).
    pub(super) truncate: bool,
    #[serde(skip_serializing_if = "Options::is_empty")]
    pub(super) options: Options,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) think: Option<OllamaThink>,
}

/// The fields of the request body before `messages`.
#[derive(Debug, Serialize)]
pub(super) struct ChatRequestHead<'a> {
    pub(super) model: &'a str,
}

/// The fields of the request body after `messages`.
#[derive(Debug, Serialize)]
pub(super) struct ChatRequestTail<'a> {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<FunctionTool<'a>>,
    /// Always `false`: one JSON object back, not a stream of them.
    pub(super) stream: bool,
    /// Always `false`: fail with an error rather than drop the start of a
    /// prompt that does not fit the context window (older servers ignore it).
    pub(super) truncate: bool,
    #[serde(skip_serializing_if = "Options::is_empty")]
    pub(super) options: Options,
    /// Whether (or how hard) a thinking model thinks; absent: the model's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) think: Option<OllamaThink>,
    /// Native structured output: the JSON schema the answer follows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) format: Option<&'a serde_json::Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Serialize)]
pub(super) struct RequestMessage<'a> {
    pub(super) role: Role,
    pub(super) content: Cow<'a, str>,
    /// On assistant messages: what the model thought before answering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) thinking: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tool_calls: Vec<RequestToolCall<'a>>,
    /// On `tool` messages: the name of the tool that answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tool_name: Option<&'a str>,
}

#[derive(Debug, Serialize)]
pub(super) struct RequestToolCall<'a> {
    pub(super) function: RequestFunctionCall<'a>,
}

#[derive(Debug, Serialize)]
pub(super) struct RequestFunctionCall<'a> {
    pub(super) name: &'a str,
    /// A JSON object, not a string.
    pub(super) arguments: Cow<'a, Value>,
}

#[derive(Debug, Default, Serialize)]
pub(super) struct Options {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) temperature: Option<f32>,
    /// The maximum output tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) num_predict: Option<u32>,
    /// The context window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) num_ctx: Option<u32>,
}

impl Options {
    fn is_empty(&self) -> bool {
        self.temperature.is_none() && self.num_predict.is_none() && self.num_ctx.is_none()
    }
}

/// The response body.
#[derive(Debug, Deserialize)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct ChatResponse {
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) created_at: Option<String>,
    pub(super) message: ResponseMessage,
    #[serde(default)]
    pub(super) done_reason: Option<String>,
    #[serde(default)]
    pub(super) prompt_eval_count: Option<u64>,
    #[serde(default)]
    pub(super) eval_count: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResponseMessage {
    #[serde(default)]
    pub(super) content: String,
    /// A thinking model's reasoning, when `think` was on.
    #[serde(default)]
    pub(super) thinking: Option<String>,
    #[serde(default)]
    pub(super) tool_calls: Option<Vec<ResponseToolCall>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResponseToolCall {
    /// Sent by recent versions only.
    #[serde(default)]
    pub(super) id: Option<String>,
    pub(super) function: ResponseFunctionCall,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResponseFunctionCall {
    pub(super) name: String,
    #[serde(default)]
    pub(super) arguments: Value,
}

/// The error body: `{"error": "..."}`.
#[derive(Debug, Deserialize)]
pub(super) struct ErrorResponse {
    pub(super) error: String,
}
