//! The Gemini API on the wire (`models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`). Field names are the API's (JSON in
//! lower camel case).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `thinkingConfig` object of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GeminiThinking {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thinking_budget: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thinking_level: Option<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) include_thoughts: bool,
}

/// The fields of the request body before `contents`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RequestHead<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) system_instruction: Option<SystemInstruction<'a>>,
}

/// `systemInstruction`: one text part (its role is left out, as the API allows).
#[derive(Debug, Serialize)]
pub(super) struct SystemInstruction<'a> {
    pub(super) parts: [TextPart<'a>; 1],
}

#[derive(Debug, Serialize)]
pub(super) struct TextPart<'a> {
    pub(super) text: &'a str,
}

/// The fields of the request body after `contents`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RequestTail<'a> {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<Tools<'a>>,
    #[serde(skip_serializing_if = "GenerationConfig::is_empty")]
    pub(super) generation_config: GenerationConfig,
}

/// `tools`: the function declarations, in one tool.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Tools<'a> {
    pub(super) function_declarations: Vec<FunctionDeclaration<'a>>,
}

/// One function the model may call; its parameters as full JSON Schema
/// (`parametersJsonSchema`), which the API takes as it is, or converted to
/// the `OpenAPI` subset (`parameters`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FunctionDeclaration<'a> {
    pub(super) name: &'a str,
    pub(super) description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) parameters_json_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) parameters: Option<Value>,
}

/// `generationConfig`: every generation setting of a request, written in
/// this one place.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) thinking_config: Option<GeminiThinking>,
    /// `application/json` with a response schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) response_mime_type: Option<&'static str>,
    /// The answer's schema, as JSON Schema (the API reads a subset of it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) response_json_schema: Option<Value>,
}

impl GenerationConfig {
    fn is_empty(&self) -> bool {
        self.max_output_tokens.is_none()
            && self.temperature.is_none()
            && self.thinking_config.is_none()
            && self.response_mime_type.is_none()
            && self.response_json_schema.is_none()
    }
}

/// `user` or `model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Role {
    User,
    Model,
}

/// One turn of `contents`.
#[derive(Debug, Serialize)]
pub(super) struct Content<'a> {
    pub(super) role: Role,
    pub(super) parts: Vec<Part<'a>>,
}

/// One part of a turn sent: its data and, on a model turn, the thought
/// signature it was issued with.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Part<'a> {
    #[serde(flatten)]
    pub(super) data: PartData<'a>,
    /// Sent back byte for byte on the part that carried it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) thought_signature: Option<&'a str>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum PartData<'a> {
    Text {
        text: Cow<'a, str>,
        /// A thought summary sent back.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        thought: bool,
    },
    FunctionCall {
        #[serde(rename = "functionCall")]
        function_call: FunctionCall<'a>,
    },
    FunctionResponse {
        #[serde(rename = "functionResponse")]
        function_response: FunctionResponse<'a>,
    },
}

/// A call as the model made it; `id` only on the Gemini API (Vertex AI's
/// `FunctionCall` has no such field and rejects it).
#[derive(Debug, Serialize)]
pub(super) struct FunctionCall<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) id: Option<&'a str>,
    pub(super) name: &'a str,
    pub(super) args: Cow<'a, Value>,
}

/// The answer to a call: the result under `output`, or the failure under
/// `error`, as the API documents for `response`; `id` as on [`FunctionCall`].
#[derive(Debug, Serialize)]
pub(super) struct FunctionResponse<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) id: Option<&'a str>,
    pub(super) name: &'a str,
    pub(super) response: ResponseValue<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum ResponseValue<'a> {
    Output(&'a str),
    Error(&'a str),
}

/// The success response body, and each chunk of a streamed one.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct GenerateContentResponse {
    #[serde(default)]
    pub(super) candidates: Vec<Candidate>,
    #[serde(default)]
    pub(super) prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    pub(super) usage_metadata: Option<UsageMetadata>,
    #[serde(default)]
    pub(super) model_version: Option<String>,
    #[serde(default)]
    pub(super) response_id: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Candidate {
    #[serde(default)]
    pub(super) content: Option<CandidateContent>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct CandidateContent {
    #[serde(default)]
    pub(super) parts: Vec<ResponsePart>,
}

/// A part of a response. Parts this crate does not use (inline data,
/// executable code) have none of these fields and are skipped.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ResponsePart {
    #[serde(default)]
    pub(super) text: Option<String>,
    #[serde(default)]
    pub(super) thought: bool,
    #[serde(default)]
    pub(super) thought_signature: Option<String>,
    #[serde(default)]
    pub(super) function_call: Option<ResponseFunctionCall>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResponseFunctionCall {
    /// Missing on models and endpoints that do not number calls: replaced
    /// by one of ours.
    #[serde(default)]
    pub(super) id: Option<String>,
    pub(super) name: String,
    #[serde(default)]
    pub(super) args: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PromptFeedback {
    #[serde(default)]
    pub(super) block_reason: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::struct_field_names)] // the API's names
pub(super) struct UsageMetadata {
    /// Every prompt token, cached ones included.
    #[serde(default)]
    pub(super) prompt_token_count: u64,
    #[serde(default)]
    pub(super) cached_content_token_count: u64,
    /// Output tokens of the answer, thoughts excluded.
    #[serde(default)]
    pub(super) candidates_token_count: u64,
    #[serde(default)]
    pub(super) thoughts_token_count: u64,
    /// Prompt tokens of tool use (built-in tools' results).
    #[serde(default)]
    pub(super) tool_use_prompt_token_count: u64,
}

/// The error body: `{"error":{"code","message","status","details"}}`
/// (streamed errors arrive as an event of the same shape).
#[derive(Debug, Deserialize)]
pub(super) struct ErrorResponse {
    pub(super) error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
pub(super) struct ErrorDetail {
    #[serde(default)]
    pub(super) code: Option<u16>,
    #[serde(default)]
    pub(super) message: String,
    #[serde(default)]
    pub(super) status: Option<String>,
    #[serde(default)]
    pub(super) details: Vec<Value>,
}
