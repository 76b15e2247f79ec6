//! The OpenAI Responses API on the wire (`POST {base}/responses`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `reasoning` object of a Responses request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ResponsesReasoning {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) summary: Option<&'static str>,
}

/// The request body.
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Debug, Serialize)]
pub(super) struct ResponsesRequest<'a> {
    pub(super) model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) instructions: Option<&'a str>,
    /// The stored response this request continues (`input` then holds only
    /// the new items).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) previous_response_id: Option<&'a str>,
    pub(super) input: Vec<InputItem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<FunctionTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) reasoning: Option<ResponsesReasoning>,
    /// `false` keeps nothing on OpenAI's side: every call sends the whole
    /// input. Only a stored response can be continued.
    pub(super) store: bool,
    pub(super) include: [&'static str; 1],
}

/// One item of `input`.
#[derive(Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum InputItem<'a> {
    Message {
        role: MessageRole,
        content: Vec<ContentPart<'a>>,
    },
    /// A reasoning item sent back as it came: the API decrypts and checks it.
    Reasoning {
        id: &'a str,
        summary: Vec<SummaryPart<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<&'a str>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        /// The arguments as a JSON string.
        arguments: Cow<'a, str>,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: Cow<'a, str>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum MessageRole {
    User,
    Assistant,
}

#[derive(Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum ContentPart<'a> {
    InputText { text: Cow<'a, str> },
    OutputText { text: Cow<'a, str> },
}

#[derive(Debug, PartialEq, Serialize)]
pub(super) struct SummaryPart<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) text: &'a str,
}

/// A function tool in the Responses shape (flat, unlike Chat Completions).
#[derive(Debug, Serialize)]
pub(super) struct FunctionTool<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) name: &'a str,
    pub(super) description: &'a str,
    pub(super) parameters: &'a Value,
    /// Sent always: the Responses API treats a missing `strict` as `true`.
    pub(super) strict: bool,
}

/// The success response body.
#[derive(Debug, Deserialize)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct ResponsesResponse {
    /// The response's id (for telemetry, and chaining with `previous_response_id`).
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) status: Option<String>,
    #[serde(default)]
    pub(super) incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    pub(super) error: Option<ResponseError>,
    #[serde(default)]
    pub(super) output: Vec<OutputItem>,
    #[serde(default)]
    pub(super) usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub(super) struct IncompleteDetails {
    #[serde(default)]
    pub(super) reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResponseError {
    #[serde(default)]
    pub(super) code: Option<String>,
    #[serde(default)]
    pub(super) message: String,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum OutputItem {
    Reasoning {
        id: String,
        #[serde(default)]
        summary: Vec<TextPart>,
        /// The raw reasoning text some models return (`reasoning_text` parts).
        #[serde(default)]
        content: Option<Vec<TextPart>>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    Message {
        #[serde(default)]
        content: Vec<OutputContent>,
    },
    FunctionCall {
        call_id: String,
        name: String,
        /// A JSON string.
        arguments: Value,
    },
    /// Items this crate does not use (built-in tools, ...).
    #[serde(other)]
    Other,
}

/// A `summary_text` or `reasoning_text` part.
#[derive(Debug, Deserialize)]
pub(super) struct TextPart {
    pub(super) text: String,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum OutputContent {
    OutputText {
        text: String,
    },
    Refusal {
        refusal: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[allow(clippy::struct_field_names)] // the API's names
pub(super) struct Usage {
    #[serde(default)]
    pub(super) input_tokens: u64,
    #[serde(default)]
    pub(super) output_tokens: u64,
    #[serde(default)]
    pub(super) input_tokens_details: Option<InputTokensDetails>,
    #[serde(default)]
    pub(super) output_tokens_details: Option<OutputTokensDetails>,
}

#[derive(Debug, Deserialize)]
pub(super) struct InputTokensDetails {
    #[serde(default)]
    pub(super) cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(super) struct OutputTokensDetails {
    #[serde(default)]
    pub(super) reasoning_tokens: Option<u64>,
}
