//! Neutral types to and from the Gemini wire format.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderValue};

use super::output_schema::response_json_schema;
use super::parts::Parts;
use super::reasoning::{gemini_thinking, gemini_version};
use super::schema::openapi_schema;
use super::wire::{
    Content, ErrorResponse, FunctionCall, FunctionDeclaration, FunctionResponse, GeminiThinking,
    GenerateContentResponse, GenerationConfig, Part, PartData, RequestHead, RequestTail, ResponseValue,
    Role as WireRole, SystemInstruction, TextPart, Tools,
};
use super::{DEFAULT_BASE_URL, DEFAULT_MODEL, PROVIDER};
use crate::message::{ContentBlock, Message, Role, ToolCall, ToolResult};
use crate::model::{
    ModelError, ModelErrorKind, ModelRequest, ModelResponse, ResponseAccumulator, ResponseSchema, ResponseSchemaSupport,
};
use crate::providers::convert::{misplaced_call, misplaced_result, object_input};
use crate::providers::http::{
    ApiError, ApiKey, Body, BodyResult, CallSettings, Format, RequestHeaders, Secret, write_element,
};
use crate::reasoning::ReasoningError;
use crate::reasoning::ReasoningState;

/// The signature the API documents for function calls its models did not
/// make (history from another model, calls written by hand): it skips the
/// check of the signature, on the Gemini API and on Vertex AI alike.
pub(super) const PLACEHOLDER_SIGNATURE: &str = "skip_thought_signature_validator";

/// The Gemini `generateContent` wire format: the `W` of
/// [`Gemini`](super::Gemini), holding its settings. Users never name it (it
/// is public only to be the alias's parameter).
#[derive(Clone, Debug, Default)]
#[allow(unreachable_pub)]
pub struct GeminiGenerateContent {
    /// Set for Vertex AI: the project and location its models live in.
    pub(super) vertex: Option<Vertex>,
    /// A bearer token sent with every request (Vertex AI).
    pub(super) token: Option<Token>,
    /// Tool parameters as the `OpenAPI` subset (`parameters`).
    pub(super) openapi_parameters: bool,
}

/// Where a Vertex AI endpoint's models live.
#[derive(Clone, Debug)]
pub(super) struct Vertex {
    pub(super) project: String,
    pub(super) location: String,
}

/// A Vertex AI access token: given once, or asked for on every request.
#[derive(Clone)]
pub(super) enum Token {
    Fixed(Secret),
    Source(Arc<dyn Fn() -> Result<String, String> + Send + Sync>),
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fixed(secret) => f.debug_tuple("Fixed").field(secret).finish(),
            Self::Source(_) => f.write_str("Source(..)"),
        }
    }
}

impl Format for GeminiGenerateContent {
    const PROVIDER: &'static str = PROVIDER;
    const PATH: &'static str = "/v1beta/models";
    const DEFAULT_BASE_URL: &'static str = DEFAULT_BASE_URL;
    const DEFAULT_MODEL: &'static str = DEFAULT_MODEL;
    const API_KEY: ApiKey = ApiKey::Required("GEMINI_API_KEY");
    const API_KEY_ALIASES: &'static [&'static str] = &["GOOGLE_API_KEY"];
    const BASE_URL_VARIABLE: &'static str = "GEMINI_BASE_URL";
    const KEY_HEADER: (&'static str, &'static str) = ("x-goog-api-key", "");

    type Response = GenerateContentResponse;
    type Decoder = super::GeminiStreamDecoder;

    fn path(&self) -> Cow<'static, str> {
        match &self.vertex {
            Some(vertex) => Cow::Owned(format!(
                "/v1/projects/{}/locations/{}/publishers/google/models",
                vertex.project, vertex.location
            )),
            None => Cow::Borrowed(Self::PATH),
        }
    }

    /// `/{model}:generateContent`, or `/{model}:streamGenerateContent?alt=sse`.
    fn call_path(&self, call: CallSettings<'_>) -> Option<String> {
        let model = call.model.strip_prefix("models/").unwrap_or(call.model);
        let method = if call.stream { "streamGenerateContent?alt=sse" } else { "generateContent" };
        Some(format!("/{model}:{method}"))
    }

    fn authenticates(&self) -> bool {
        self.token.is_some()
    }

    fn stream_decoder(&self) -> Self::Decoder {
        super::GeminiStreamDecoder::default()
    }

    /// Checks the thinking setting against the model's range and a response
    /// schema beside tools against the model (before Gemini 3 the API
    /// answers 400), and adds the bearer token when one is configured.
    fn prepare(&self, call: CallSettings<'_>, request: &ModelRequest<'_>) -> Result<RequestHeaders, ModelError> {
        thinking_for(call).map_err(|error| error.into_model_error(PROVIDER))?;
        if request.response_schema.is_some() && !request.tools.is_empty() && !schema_with_tools(call.model) {
            let message = format!(
                "`{}` cannot follow a response schema (`responseJsonSchema`) in a request that offers tools: only \
                 Gemini 3 and later models combine structured output with function calling; use the output tool \
                 or the prompted output mode",
                call.model
            );
            return Err(ModelError::new(ModelErrorKind::InvalidRequest, PROVIDER, message));
        }
        let Some(token) = &self.token else { return Ok(Vec::new()) };
        let token = match token {
            Token::Fixed(secret) => Cow::Borrowed(secret.expose()),
            Token::Source(source) => Cow::Owned(source().map_err(|message| {
                ModelError::new(ModelErrorKind::Authentication, PROVIDER, format!("no Vertex AI token: {message}"))
            })?),
        };
        let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            ModelError::new(ModelErrorKind::Authentication, PROVIDER, "the Vertex AI token cannot be sent in a header")
        })?;
        value.set_sensitive(true);
        Ok(vec![(AUTHORIZATION, value)])
    }

    /// `systemInstruction`, `contents`, then the tools and the generation
    /// settings: what changes from request to request is written around
    /// the contents, whose bytes the run's cache reuses.
    fn write_body(&self, call: CallSettings<'_>, request: &ModelRequest<'_>, body: &mut Body<'_>) -> BodyResult {
        let system = request.system.filter(|system| !system.is_empty());
        body.open(&RequestHead {
            system_instruction: system.map(|text| SystemInstruction { parts: [TextPart { text }] }),
        })?;
        body.messages("contents", None::<&()>)?;
        let tools = tools(request, self.openapi_parameters);
        body.close(&RequestTail { tools, generation_config: generation_config(call, request.response_schema) })
    }

    /// With tools on Gemini 3 and later (and names without a version, the
    /// newest models); before, only in requests that offer no tools.
    fn response_schema_support(&self, model: &str, _: &ResponseSchema) -> ResponseSchemaSupport {
        if schema_with_tools(model) { ResponseSchemaSupport::WithTools } else { ResponseSchemaSupport::WithoutTools }
    }

    fn render_run(&self, run: &[Message], through: &[Message], out: &mut Vec<u8>) -> serde_json::Result<()> {
        // Vertex AI pairs calls and responses by name and order: its parts have no ids.
        match run_content(run, through, self.vertex.is_none()) {
            Some(content) => write_element(out, &content),
            None => Ok(()),
        }
    }

    fn response(&self, wire: GenerateContentResponse) -> Result<ModelResponse, ModelError> {
        let mut parts = Parts::default();
        let mut events = Vec::new();
        parts.chunk(wire, &mut events);
        parts.end(&mut events);
        let mut accumulator = ResponseAccumulator::new();
        for event in &events {
            accumulator.push(event)?;
        }
        accumulator.finish()
    }

    /// Parses `{"error":{"code","message","status","details"}}`: the status
    /// (`RESOURCE_EXHAUSTED`, `INVALID_ARGUMENT`, ...) is the error type,
    /// or an `ErrorInfo` detail's reason when it says the key is bad
    /// (`API_KEY_INVALID`, sent with 400 `INVALID_ARGUMENT`), and a
    /// `RetryInfo` detail's `retryDelay` the wait before a retry.
    fn error_body(body: &[u8]) -> Option<ApiError> {
        let parsed: ErrorResponse = serde_json::from_slice(body).ok()?;
        let bad_key = parsed.error.details.iter().find_map(|detail| {
            let info = detail["@type"].as_str().is_some_and(|kind| kind.ends_with("google.rpc.ErrorInfo"));
            detail["reason"].as_str().filter(|reason| info && *reason == "API_KEY_INVALID").map(str::to_owned)
        });
        let mut error = ApiError::new(parsed.error.message, bad_key.or(parsed.error.status));
        error.retry_after = retry_delay(&parsed.error.details);
        Some(error)
    }
}

/// The `retryDelay` of a `google.rpc.RetryInfo` detail (`"37s"`, `"1.5s"`),
/// plus one second (the delay is rounded down to whole seconds: "Please retry in
/// 53.016s" comes with `"53s"`), as the fix proposed for Google's Python SDK
/// (python-genai #2114) waits.
pub(super) fn retry_delay(details: &[serde_json::Value]) -> Option<Duration> {
    let info = details
        .iter()
        .find(|detail| detail["@type"].as_str().is_some_and(|kind| kind.ends_with("google.rpc.RetryInfo")))?;
    let seconds: f64 = info["retryDelay"].as_str()?.strip_suffix('s')?.parse().ok()?;
    Duration::try_from_secs_f64(seconds + 1.0).ok()
}

/// The tools as one `functionDeclarations` tool, their parameters in full
/// JSON Schema or, with `openapi`, in the `OpenAPI` subset.
fn tools<'a>(request: &ModelRequest<'a>, openapi: bool) -> Vec<Tools<'a>> {
    if request.tools.is_empty() {
        return Vec::new();
    }
    let function_declarations = request
        .tools
        .iter()
        .map(|tool| FunctionDeclaration {
            name: &tool.name,
            description: &tool.description,
            parameters_json_schema: (!openapi).then_some(&tool.input_schema),
            // A tool of no arguments declares no parameters: the API refuses
            // an OBJECT without properties.
            parameters: openapi.then(|| openapi_schema(&tool.input_schema)).filter(takes_arguments),
        })
        .collect();
    vec![Tools { function_declarations }]
}

/// Whether a declaration's parameters say anything: not an empty schema,
/// nor an OBJECT with neither properties nor alternatives (a tool of no
/// arguments).
fn takes_arguments(parameters: &serde_json::Value) -> bool {
    let says_nothing = parameters.as_object().is_none_or(serde_json::Map::is_empty);
    !says_nothing
        && (parameters["type"] != "OBJECT"
            || parameters.get("properties").is_some()
            || parameters.get("anyOf").is_some())
}

/// Every generation setting of a call, in the one `generationConfig`: a
/// response schema as `responseJsonSchema` (the type's own schema, not the
/// strict shape: Gemini needs no closed objects), with the JSON MIME type
/// the field requires.
fn generation_config(call: CallSettings<'_>, response_schema: Option<&ResponseSchema>) -> GenerationConfig {
    GenerationConfig {
        max_output_tokens: call.max_tokens,
        temperature: call.temperature,
        // `prepare` rejected a setting the model rules out before the body is written.
        thinking_config: thinking_for(call).ok().flatten(),
        response_mime_type: response_schema.map(|_| "application/json"),
        response_json_schema: response_schema.map(|schema| response_json_schema(&schema.schema)),
    }
}

/// Whether `model` follows a response schema in a request with function
/// declarations: Gemini 3 and later (the API answers 400 "Function calling
/// with a response mime type: 'application/json' is unsupported" before).
fn schema_with_tools(model: &str) -> bool {
    gemini_version(model).is_none_or(|version| version >= (3, 0))
}

/// The `thinkingConfig` for a call's reasoning setting, checked against the model.
fn thinking_for(call: CallSettings<'_>) -> Result<Option<GeminiThinking>, ReasoningError> {
    match call.reasoning {
        Some(config) => gemini_thinking(config, call.model),
        None => Ok(None),
    }
}

/// The conversation in the API's shape (see [`run_content`]).
#[cfg(test)]
pub(super) fn contents(messages: &[Message]) -> Vec<serde_json::Value> {
    let mut contents = Vec::new();
    let mut start = 0;
    for run in messages.chunk_by(|a, b| a.role == b.role) {
        let through = &messages[..start + run.len()];
        start += run.len();
        if let Some(content) = run_content(run, through, true) {
            contents.push(serde_json::to_value(content).expect("contents serialise"));
        }
    }
    contents
}

/// One run of same-role messages as one content: a `user` turn (function
/// responses first, as the API pairs them with the calls before), or a
/// `model` turn with every part in order and each thought signature on the
/// part that carried it. Empty text is left out, and an empty turn. Calls
/// and responses carry their ids when `ids` (the Gemini API; not Vertex AI).
fn run_content<'a>(run: &'a [Message], through: &'a [Message], ids: bool) -> Option<Content<'a>> {
    let blocks = run.iter().flat_map(|message| &message.content);
    let (role, parts) = match run[0].role {
        Role::User => (WireRole::User, user_parts(blocks, through, ids)),
        Role::Assistant => (WireRole::Model, model_parts(blocks, ids)),
    };
    (!parts.is_empty()).then_some(Content { role, parts })
}

fn text_part<'a>(text: Cow<'a, str>, thought_signature: Option<&'a str>) -> Part<'a> {
    Part { data: PartData::Text { text, thought: false }, thought_signature }
}

fn user_parts<'a>(blocks: impl Iterator<Item = &'a ContentBlock>, through: &'a [Message], ids: bool) -> Vec<Part<'a>> {
    let mut responses = Vec::new();
    let mut rest = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text } if !text.trim().is_empty() => rest.push(text_part(Cow::Borrowed(text), None)),
            ContentBlock::ToolResult(result) => match call_of(result, through) {
                Some(call) => responses.push(Part {
                    data: PartData::FunctionResponse { function_response: function_response(result, &call.name, ids) },
                    thought_signature: None,
                }),
                None => rest.push(text_part(Cow::Owned(misplaced_result(result)), None)),
            },
            ContentBlock::ToolCall(call) => rest.push(text_part(Cow::Owned(misplaced_call(call)), None)),
            // Empty text, and reasoning (a user turn cannot carry it).
            _ => {}
        }
    }
    responses.extend(rest);
    responses
}

/// The call `result` answers: the last call with its id before it.
fn call_of<'a>(result: &ToolResult, through: &'a [Message]) -> Option<&'a ToolCall> {
    through
        .iter()
        .rev()
        .filter(|message| message.role == Role::Assistant)
        .find_map(|message| message.tool_calls().find(|call| call.id == result.call_id))
}

fn function_response<'a>(result: &'a ToolResult, name: &'a str, ids: bool) -> FunctionResponse<'a> {
    let response =
        if result.is_error() { ResponseValue::Error(&result.content) } else { ResponseValue::Output(&result.content) };
    FunctionResponse { id: ids.then_some(result.call_id.as_str()), name, response }
}

/// The parts of a model turn. A signature block goes on the part of the
/// block right after it, or stands alone (an empty text part) when none
/// can take it; the first function call of a turn that has no signature
/// gets the placeholder the API documents, since Gemini 3 requires one.
fn model_parts<'a>(blocks: impl Iterator<Item = &'a ContentBlock>, ids: bool) -> Vec<Part<'a>> {
    let mut parts: Vec<Part<'a>> = Vec::new();
    let mut pending: Option<&'a str> = None;
    let mut first_call = true;
    let alone = |signature: &'a str| text_part(Cow::Borrowed(""), Some(signature));
    for block in blocks {
        match block {
            ContentBlock::Reasoning(reasoning) => match reasoning.state_for(PROVIDER) {
                Some(ReasoningState::ThoughtSignature { signature }) => {
                    parts.extend(pending.replace(signature).map(alone));
                }
                Some(ReasoningState::Thought { signature }) => {
                    parts.extend(pending.take().map(alone));
                    let summary = reasoning.summary.concat();
                    if !summary.is_empty() || signature.is_some() {
                        parts.push(Part {
                            data: PartData::Text { text: Cow::Owned(summary), thought: true },
                            thought_signature: signature.as_deref(),
                        });
                    }
                }
                // Reasoning Gemini did not issue cannot be sent back.
                _ => {}
            },
            ContentBlock::Text { text } if text.trim().is_empty() && pending.is_none() => {}
            ContentBlock::Text { text } => parts.push(text_part(Cow::Borrowed(text), pending.take())),
            ContentBlock::ToolCall(call) => {
                let signature = pending.take().or(first_call.then_some(PLACEHOLDER_SIGNATURE));
                first_call = false;
                parts.push(Part {
                    data: PartData::FunctionCall {
                        function_call: FunctionCall {
                            id: ids.then_some(call.id.as_str()),
                            name: &call.name,
                            args: object_input(&call.input),
                        },
                    },
                    thought_signature: signature,
                });
            }
            ContentBlock::ToolResult(result) => {
                parts.extend(pending.take().map(alone));
                parts.push(text_part(Cow::Owned(misplaced_result(result)), None));
            }
        }
    }
    parts.extend(pending.map(alone));
    parts
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::{PLACEHOLDER_SIGNATURE, contents, retry_delay};
    use crate::message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};
    use crate::providers::gemini::GeminiGenerateContent;
    use crate::providers::http::Format;
    use crate::reasoning::{OpaqueReasoning, Reasoning, ReasoningState};

    fn signature(signature: &str) -> ContentBlock {
        let state = ReasoningState::ThoughtSignature { signature: signature.into() };
        ContentBlock::Reasoning(Reasoning::with_opaque(
            Vec::new(),
            Vec::new(),
            OpaqueReasoning::new("gemini", None, state),
        ))
    }

    #[test]
    fn signatures_go_back_on_their_parts_and_results_name_their_calls() {
        let thought = ReasoningState::Thought { signature: None };
        let history = vec![
            Message::user("weather in Paris and Rome?"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::Reasoning(Reasoning::with_opaque(
                        Vec::new(),
                        vec!["**Checking**".into()],
                        OpaqueReasoning::new("gemini", None, thought),
                    )),
                    signature("c2lnMQ=="),
                    ContentBlock::ToolCall(ToolCall::new("c1", "weather", json!({"city": "Paris"}))),
                    ContentBlock::ToolCall(ToolCall::new("c2", "weather", json!({"city": "Rome"}))),
                ],
            )
            .with_provider("gemini"),
            Message::from_tool_results([
                ToolResult::success("c1", "sunny"),
                ToolResult::failure("c2", FailureKind::ToolFailed, "offline"),
            ]),
            Message::new(Role::Assistant, vec![signature("c2lnMg=="), ContentBlock::text("Sunny in Paris.")])
                .with_provider("gemini"),
        ];
        assert_eq!(
            serde_json::Value::Array(contents(&history)),
            json!([
                {"role": "user", "parts": [{"text": "weather in Paris and Rome?"}]},
                {"role": "model", "parts": [
                    {"text": "**Checking**", "thought": true},
                    {"functionCall": {"id": "c1", "name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnMQ=="},
                    {"functionCall": {"id": "c2", "name": "weather", "args": {"city": "Rome"}}},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"id": "c1", "name": "weather", "response": {"output": "sunny"}}},
                    {"functionResponse": {"id": "c2", "name": "weather", "response": {"error": "offline"}}},
                ]},
                {"role": "model", "parts": [{"text": "Sunny in Paris.", "thoughtSignature": "c2lnMg=="}]},
            ])
        );
    }

    #[test]
    fn calls_without_a_signature_get_the_documented_placeholder_on_the_first() {
        let history = vec![
            Message::user("go"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::ToolCall(ToolCall::new("toolu_1", "a", json!("{bad"))),
                    ContentBlock::ToolCall(ToolCall::new("toolu_2", "b", json!({}))),
                ],
            )
            .with_provider("anthropic"),
        ];
        let wire = contents(&history);
        assert_eq!(wire[1]["parts"][0]["thoughtSignature"], PLACEHOLDER_SIGNATURE);
        assert_eq!(wire[1]["parts"][0]["functionCall"]["args"], json!({}));
        assert!(wire[1]["parts"][1].get("thoughtSignature").is_none());
    }

    #[test]
    fn a_signature_nothing_follows_stands_alone() {
        let history = vec![Message::user("hi"), Message::new(Role::Assistant, vec![signature("c2ln")])];
        assert_eq!(
            contents(&history)[1],
            json!({"role": "model", "parts": [{"text": "", "thoughtSignature": "c2ln"}]})
        );
    }

    #[test]
    fn error_bodies_parse_with_their_retry_delay() {
        let body = br#"{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.Help","links":[]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}"#;
        let parsed = GeminiGenerateContent::error_body(body).unwrap();
        assert_eq!(parsed.error_type.as_deref(), Some("RESOURCE_EXHAUSTED"));
        assert_eq!(parsed.retry_after, Some(Duration::from_secs(38)));
        assert_eq!(
            retry_delay(&[json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.5s"})]),
            Some(Duration::from_millis(1500))
        );
        assert!(GeminiGenerateContent::error_body(b"<html>").is_none());
    }

    /// A bad key comes as 400 `INVALID_ARGUMENT`; its `ErrorInfo` reason
    /// makes it an authentication error, not an invalid request.
    #[test]
    fn an_invalid_key_is_an_authentication_error() {
        let body = br#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}"#;
        let error = crate::providers::http::status_error("gemini", 400, body, GeminiGenerateContent::error_body);
        assert_eq!(error.kind(), crate::model::ModelErrorKind::Authentication, "{error}");
        assert_eq!(error.error_type(), Some("API_KEY_INVALID"));
        let other = br#"{"error":{"code":400,"message":"Invalid value","status":"INVALID_ARGUMENT"}}"#;
        let error = crate::providers::http::status_error("gemini", 400, other, GeminiGenerateContent::error_body);
        assert_eq!(error.kind(), crate::model::ModelErrorKind::InvalidRequest);
    }
}

#[cfg(test)]
mod body_tests {
    use serde_json::{Map, Value, json};

    use super::{contents, generation_config, tools};
    use crate::model::ModelRequest;
    use crate::providers::gemini::{Gemini, PROVIDER};
    use crate::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};

    /// Models whose settings differ, as when one conversation switches
    /// models; the first two share a cache.
    fn models() -> Vec<Gemini> {
        let base = Gemini::builder().api_key("k").build().unwrap();
        let thinking = ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto);
        vec![
            base.clone(),
            base.with_model("gemini-2.5-flash"),
            Gemini::builder().api_key("k").model("model \"q\"").max_tokens(512).reasoning(thinking).build().unwrap(),
        ]
    }

    /// The body as the whole request serialised at once.
    fn reference(model: &Gemini, request: &ModelRequest<'_>) -> Vec<u8> {
        let view = request.view_for(PROVIDER);
        let mut body = Map::new();
        if let Some(system) = request.system.filter(|system| !system.is_empty()) {
            body.insert("systemInstruction".into(), json!({"parts": [{"text": system}]}));
        }
        body.insert("contents".into(), Value::Array(contents(&view)));
        let tools = tools(request, false);
        if !tools.is_empty() {
            body.insert("tools".into(), serde_json::to_value(&tools).unwrap());
        }
        let call = model.call_settings(request, false);
        let config = serde_json::to_value(generation_config(call, request.response_schema)).unwrap();
        if config != json!({}) {
            body.insert("generationConfig".into(), config);
        }
        // A `Value` holds the temperature as an f64; write it as the f32 it is.
        let text = serde_json::to_string(&Value::Object(body)).unwrap();
        match call.temperature {
            Some(t) => {
                text.replace(&serde_json::to_string(&f64::from(t)).unwrap(), &serde_json::to_string(&t).unwrap())
            }
            None => text,
        }
        .into_bytes()
    }

    /// In the `OpenAPI` subset, only a tool of no arguments is declared
    /// without parameters: one whose input is a choice of shapes keeps them.
    #[test]
    fn the_openapi_subset_leaves_out_only_empty_parameters() {
        use crate::tool::ToolDefinition;
        let choice =
            json!({"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "string"}]});
        let defined = [
            ToolDefinition::from_schema("pick", "Pick.", choice),
            ToolDefinition::from_schema("now", "Now.", json!({"type": "object"})),
        ];
        let history = [crate::message::Message::user("hi")];
        let request = ModelRequest::new(&history).with_tools(&defined);
        let declared = serde_json::to_value(tools(&request, true)).unwrap();
        let declarations = &declared[0]["functionDeclarations"];
        assert!(declarations[0]["parameters"]["anyOf"].is_array(), "{declared}");
        assert!(declarations[1].get("parameters").is_none(), "{declared}");
    }

    crate::providers::cache_checks::body_cache_tests!(models, reference);
}
