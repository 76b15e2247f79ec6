//! OpenAI Chat Completions on the wire (`POST {base}/chat/completions`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::providers::convert::FunctionTool;

/// The request body, as one struct: what the body built in pieces (see
/// `convert::body`) must equal byte for byte.
#[cfg(test)]
#[derive(Debug, Serialize)]
pub(super) struct ChatRequest<'a> {
    pub(super) model: &'a str,
    pub(super) messages: Vec<RequestMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<FunctionTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) stream: bool,
    /// `{"include_usage": true}` when streaming: usage arrives in a last chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) stream_options: Option<StreamOptions>,
}

/// Chat Completions' streaming options.
#[derive(Debug, Serialize)]
pub(super) struct StreamOptions {
    pub(super) include_usage: bool,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) prompt_cache_retention: Option<&'static str>,
    /// How hard a reasoning model thinks (`low`, `medium`, `high`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) reasoning_effort: Option<&'static str>,
    /// Native structured output: `{"type": "json_schema", "json_schema": {...}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) response_format: Option<ResponseFormat<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) stream_options: Option<StreamOptions>,
}

/// `response_format` asking for JSON that follows a schema.
#[derive(Debug, Serialize)]
pub(super) struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) json_schema: JsonSchemaFormat<'a>,
}

/// The schema of a `json_schema` response format.
#[derive(Debug, Serialize)]
pub(super) struct JsonSchemaFormat<'a> {
    pub(super) name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) description: Option<&'a str>,
    pub(super) schema: &'a Value,
    pub(super) strict: bool,
}

#[derive(Debug, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub(super) enum RequestMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: Cow<'a, str>,
    },
    Assistant {
        /// Absent when the turn holds only tool calls.
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<RequestToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Debug, PartialEq, Serialize)]
pub(super) struct RequestToolCall<'a> {
    pub(super) id: &'a str,
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) function: RequestFunctionCall<'a>,
}

#[derive(Debug, PartialEq, Serialize)]
pub(super) struct RequestFunctionCall<'a> {
    pub(super) name: &'a str,
    /// The arguments as a JSON string.
    pub(super) arguments: Cow<'a, str>,
}

/// The success response body.
#[derive(Debug, Deserialize)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct ChatResponse {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
    pub(super) choices: Vec<Choice>,
    #[serde(default)]
    pub(super) usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Choice {
    pub(super) message: ResponseMessage,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResponseMessage {
    #[serde(default)]
    pub(super) content: Option<MessageContent>,
    #[serde(default)]
    pub(super) refusal: Option<String>,
    /// The reasoning OpenAI-compatible servers (`vLLM`, `DeepSeek`, `llama.cpp`) return.
    #[serde(default)]
    pub(super) reasoning_content: Option<String>,
    #[serde(default)]
    pub(super) tool_calls: Option<Vec<ResponseToolCall>>,
}

/// A message's content: a string, or (some compatible servers) an array of
/// parts whose text parts make up the text. `reasoning_content` (vLLM,
/// `DeepSeek`, LM Studio) is a separate field and is not taken as the answer.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum MessageContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Deserialize)]
pub(super) struct ContentPart {
    #[serde(default, rename = "type")]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) text: Option<String>,
}

impl MessageContent {
    /// The text: a string as it is, or the text parts joined.
    pub(super) fn into_text(self) -> String {
        match self {
            Self::Text(text) => text,
            Self::Parts(parts) => parts
                .into_iter()
                .filter(|part| matches!(part.kind.as_deref(), None | Some("text" | "output_text")))
                .filter_map(|part| part.text)
                .collect(),
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct ResponseToolCall {
    /// Some compatible servers (llama.cpp, NIM) omit it, others send "".
    #[serde(default)]
    pub(super) id: String,
    pub(super) function: ResponseFunctionCall,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResponseFunctionCall {
    pub(super) name: String,
    /// A JSON string; some compatible servers send an object instead, or nothing.
    #[serde(default)]
    pub(super) arguments: Value,
}

#[derive(Debug, Deserialize)]
pub(super) struct Usage {
    #[serde(default)]
    pub(super) prompt_tokens: u64,
    #[serde(default)]
    pub(super) completion_tokens: u64,
    #[serde(default)]
    pub(super) prompt_tokens_details: Option<PromptTokensDetails>,
    #[serde(default)]
    pub(super) completion_tokens_details: Option<CompletionTokensDetails>,
}

#[derive(Debug, Deserialize)]
pub(super) struct CompletionTokensDetails {
    #[serde(default)]
    pub(super) reasoning_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(super) struct PromptTokensDetails {
    #[serde(default)]
    pub(super) cached_tokens: Option<u64>,
}

/// The error body: `{"error":{"message","type","param","code"}}`.
#[derive(Debug, Deserialize)]
pub(super) struct ErrorResponse {
    pub(super) error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
pub(super) struct ErrorDetail {
    pub(super) message: String,
    #[serde(default, rename = "type")]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) code: Option<Value>,
}
