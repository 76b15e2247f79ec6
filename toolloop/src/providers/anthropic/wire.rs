//! The Anthropic Messages API on the wire (`POST /v1/messages`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The request body, as one struct: what the body built in pieces (see
/// `convert::body`) must equal byte for byte.
#[cfg(test)]
#[derive(Debug, Serialize)]
pub(super) struct MessagesRequest<'a> {
    pub(super) model: &'a str,
    /// Required by the API.
    pub(super) max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) system: Option<&'a str>,
    pub(super) messages: Vec<InputMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) thinking: Option<ThinkingParam>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) output_config: Option<OutputConfig>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) stream: bool,
}

/// The fields of the request body before `messages`.
#[derive(Debug, Serialize)]
pub(super) struct MessagesRequestHead<'a> {
    pub(super) model: &'a str,
    /// Required by the API.
    pub(super) max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) system: Option<System<'a>>,
}

/// The system prompt: a string, or one text block when it carries a cache
/// breakpoint.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum System<'a> {
    Text(&'a str),
    Blocks([SystemBlock<'a>; 1]),
}

#[derive(Debug, Serialize)]
pub(super) struct SystemBlock<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) text: &'a str,
    pub(super) cache_control: CacheControl,
}

/// A cache breakpoint: `{"type":"ephemeral"}`, with `"ttl":"1h"` for the
/// one-hour cache (five minutes is the API's default and is left unsaid).
#[derive(Clone, Copy, Debug, Serialize)]
pub(super) struct CacheControl {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ttl: Option<&'static str>,
}

/// The fields of the request body after `messages`.
#[derive(Debug, Serialize)]
pub(super) struct MessagesRequestTail<'a> {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) thinking: Option<ThinkingParam>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) output_config: Option<OutputConfig>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) stream: bool,
}

/// The `thinking` field: extended thinking with a budget, or adaptive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum ThinkingParam {
    Enabled {
        budget_tokens: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        display: Option<&'static str>,
    },
    Adaptive {
        #[serde(skip_serializing_if = "Option::is_none")]
        display: Option<&'static str>,
    },
}

/// The `output_config` field: the effort of adaptive thinking, and the
/// answer's format (native structured output).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct OutputConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) format: Option<OutputFormat>,
}

/// `{"type": "json_schema", "schema": ...}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct OutputFormat {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) schema: serde_json::Value,
}

/// `user` or `assistant`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Role {
    User,
    Assistant,
}

#[derive(Debug, Serialize)]
pub(super) struct InputMessage<'a> {
    pub(super) role: Role,
    pub(super) content: Vec<InputBlock<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum InputBlock<'a> {
    /// Sent back exactly as received: the API checks the signature against it.
    Thinking {
        thinking: Cow<'a, str>,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    Text {
        text: Cow<'a, str>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Cow<'a, Value>,
    },
    ToolResult {
        tool_use_id: &'a str,
        /// Text only: the API rejects images and documents in error results.
        #[serde(skip_serializing_if = "str::is_empty")]
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl InputBlock<'_> {
    pub(super) fn is_tool_result(&self) -> bool {
        matches!(self, Self::ToolResult { .. })
    }
}

#[derive(Debug, Serialize)]
pub(super) struct Tool<'a> {
    pub(super) name: &'a str,
    pub(super) description: &'a str,
    pub(super) input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cache_control: Option<CacheControl>,
}

/// The success response body.
#[derive(Debug, Deserialize)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct MessagesResponse {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
    pub(super) content: Vec<OutputBlock>,
    #[serde(default)]
    pub(super) stop_reason: Option<String>,
    /// Compatible servers may leave it out, which the official SDKs accept.
    #[serde(default)]
    pub(super) usage: Usage,
}

/// A content block of the response. Deserialised by hand (see
/// `output_block.rs`), not as a `#[serde(tag = "type")]` enum: that
/// buffers each block (and its `input`) in an intermediate tree before
/// reading it, a second deserialiser's code and a copy on every call.
#[derive(Debug, PartialEq)]
pub(super) enum OutputBlock {
    Text {
        text: String,
    },
    ToolUse {
        /// Empty (or missing) from some compatible servers: replaced by one of ours.
        id: String,
        name: String,
        input: Value,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    /// Blocks this crate does not use (server tools, ...).
    Other,
}

#[derive(Debug, Default, Deserialize)]
#[allow(clippy::struct_field_names)] // the API's names
pub(super) struct Usage {
    #[serde(default)]
    pub(super) input_tokens: u64,
    #[serde(default)]
    pub(super) output_tokens: u64,
    #[serde(default)]
    pub(super) cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) cache_read_input_tokens: Option<u64>,
}

/// The error body: `{"type":"error","error":{"type":…,"message":…}}`.
#[derive(Debug, Deserialize)]
pub(super) struct ErrorResponse {
    pub(super) error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
pub(super) struct ErrorDetail {
    #[serde(rename = "type")]
    pub(super) kind: String,
    pub(super) message: String,
}
