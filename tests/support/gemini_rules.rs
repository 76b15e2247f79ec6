//! A fake of the Gemini API (`generateContent`, `streamGenerateContent`)
//! that enforces its rules, for tests.
//!
//! It answers with the parts a test scripts, signing them as Gemini 3 does
//! (the first function call of a response, else its last part) with a keyed
//! hash of (content position, part position, what the part says), so a
//! signature is valid only byte for byte, on the part that carried it. It
//! checks every request the way the real API does:
//! - the key in `x-goog-api-key`, never in the URL; the model and method in
//!   the path (`/v1beta/models/{model}:generateContent`, or
//!   `:streamGenerateContent?alt=sse`, answered with server-sent events);
//! - `contents` not empty, parts not empty, roles `user` / `model`
//!   alternating; a function call turn right after a user turn or a
//!   function response turn, a function response turn right after a
//!   function call turn with as many responses as calls, each answering a
//!   call of the same name (and id, when both carry one);
//! - on Gemini 3 models, the first function call of every step of the
//!   current turn (since the last user message that is not only function
//!   responses) carries a thought signature; every signature is base64 and
//!   either one the fake issued for that part or the placeholder the API
//!   documents for calls its models did not make;
//! - `thinkingBudget` and `thinkingLevel` together are rejected, and a
//!   level on a model before Gemini 3;
//! - structured output: `responseSchema` and `responseJsonSchema` not
//!   both; either one only with `responseMimeType: "application/json"`; a
//!   JSON MIME type beside function declarations only on Gemini 3 and later
//!   ("Function calling with a response mime type: 'application/json' is
//!   unsupported" before); in `responseJsonSchema`, no keyword beside a
//!   `$ref` but `$` ones. Keywords the field does not read are ignored, as
//!   the API ignores them.
//!
//! Error bodies are Google's (`{"error": {"code", "message", "status"}}`)
//! with the API's messages, quoted from its responses; the one for a
//! response that answers no call of its name or id is the fake's wording
//! (the API's own is not documented), as are the structured-output ones
//! but the function-calling one.

use serde_json::{Map, Value, json};

use crate::rules::{Rejection, keyed_hash};
use crate::{RecordedRequest, Reply, streamed};

/// The placeholders the API documents for signatures it did not issue.
pub const PLACEHOLDERS: [&str; 2] = ["skip_thought_signature_validator", "context_engineering_is_the_way_to_go"];

/// One part of a response the fake builds.
#[derive(Clone, Debug)]
pub enum Part<'a> {
    /// A thought summary (`thought: true`), sent when the request asks for thoughts.
    Thought(&'a str),
    /// Text.
    Text(&'a str),
    /// A function call: name and arguments.
    Call(&'a str, Value),
}

/// The fake's signing key and settings.
#[derive(Clone, Debug)]
pub struct GeminiRules {
    key: u64,
    call_ids: bool,
}

impl Default for GeminiRules {
    fn default() -> Self {
        Self::new()
    }
}

/// What a request asks for, from its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The model named in the path.
    pub model: String,
    /// Whether the stream method was called.
    pub stream: bool,
    /// Whether it is Vertex AI's path (`/v1/projects/{p}/locations/{l}/publishers/google/models/...`).
    pub vertex: bool,
}

impl GeminiRules {
    /// A fake with a fixed key, giving its function calls ids.
    pub fn new() -> Self {
        Self { key: 0x6e6d_0003_5157_0042, call_ids: true }
    }

    /// A fake that, like some models and endpoints, gives calls no ids.
    pub fn without_call_ids(mut self) -> Self {
        self.call_ids = false;
        self
    }

    /// The signature of `part` (a request or response part) at part
    /// `index` of the content at `content` in `contents`.
    pub fn sign(&self, content: usize, index: usize, part: &Value) -> String {
        let payload = signed_payload(part);
        let hash = keyed_hash(self.key, &[b"gemini", payload.as_bytes(), &pos(content), &pos(index)]);
        base64(&hash.to_be_bytes())
    }

    /// The model and method a request path names, if it is one of the API's.
    pub fn call(path: &str) -> Option<Call> {
        let (rest, vertex) = if let Some(rest) = path.strip_prefix("/v1beta/models/") {
            (rest, false)
        } else {
            let rest = path.strip_prefix("/v1/projects/")?;
            let (_, rest) = rest.split_once("/locations/")?;
            (rest.split_once("/publishers/google/models/")?.1, true)
        };
        let (model, method) = rest.split_once(':')?;
        match method {
            "generateContent" => Some(Call { model: model.to_owned(), stream: false, vertex }),
            "streamGenerateContent?alt=sse" => Some(Call { model: model.to_owned(), stream: true, vertex }),
            _ => None,
        }
    }

    /// Answers `request`: a rejection when it breaks a rule, else `parts`
    /// as a response (streamed when the stream method was called).
    pub fn reply(&self, request: &RecordedRequest, parts: &[Part<'_>]) -> Reply {
        let call = match self.admit(request) {
            Ok(call) => call,
            Err(rejection) => return rejection.reply(),
        };
        let body = request.json();
        let response = self.respond(&body, &call.model, parts);
        if call.stream {
            streamed::reply("text/event-stream", streamed::gemini(&response))
        } else {
            Reply::json(200, &response)
        }
    }

    /// Checks the path, the key and the body of `request`.
    pub fn admit(&self, request: &RecordedRequest) -> Result<Call, Rejection> {
        if request.path.contains("key=") {
            return Err(error(400, "INVALID_ARGUMENT", "API keys are not accepted in the URL by this fake."));
        }
        let Some(call) = Self::call(&request.path) else {
            return Err(error(404, "NOT_FOUND", &format!("{} is not found for API version v1beta", request.path)));
        };
        let identified = if call.vertex {
            request.header("authorization").is_some_and(|value| value.starts_with("Bearer "))
        } else {
            request.header("x-goog-api-key").is_some()
        };
        if !identified {
            return Err(error(
                403,
                "PERMISSION_DENIED",
                "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
            ));
        }
        let body = request.json();
        if call.vertex {
            check_vertex_fields(&body)?;
        }
        self.check(&call.model, &body)?;
        Ok(call)
    }

    /// A success body answering `request` (its JSON body) with `parts`: the
    /// response becomes the content at `request.contents.len()`, and its
    /// signatures are issued for that place.
    pub fn respond(&self, request: &Value, model: &str, parts: &[Part<'_>]) -> Value {
        let content = request["contents"].as_array().map_or(0, Vec::len);
        let thoughts = request["generationConfig"]["thinkingConfig"]["includeThoughts"] == json!(true);
        let mut wire: Vec<Value> = parts
            .iter()
            .filter(|part| thoughts || !matches!(part, Part::Thought(_)))
            .map(|part| match part {
                Part::Thought(text) => json!({"text": text, "thought": true}),
                Part::Text(text) => json!({"text": text}),
                Part::Call(name, args) => json!({"functionCall": {"name": name, "args": args}}),
            })
            .collect();
        for (index, part) in wire.iter_mut().enumerate() {
            if self.call_ids && part.get("functionCall").is_some() {
                let id = keyed_hash(self.key, &[b"id", &pos(content), &pos(index)]);
                part["functionCall"]["id"] = json!(format!("{:08x}", id & 0xffff_ffff));
            }
        }
        let signed = wire.iter().position(|part| part.get("functionCall").is_some()).or(wire.len().checked_sub(1));
        if let Some(index) = signed {
            let signature = self.sign(content, index, &wire[index]);
            wire[index]["thoughtSignature"] = json!(signature);
        }
        let prompt = 100 + 10 * content as u64;
        json!({
            "candidates": [{"content": {"role": "model", "parts": wire}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {
                "promptTokenCount": prompt,
                "cachedContentTokenCount": if content > 1 { 64 } else { 0 },
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 30,
                "totalTokenCount": prompt + 50
            },
            "modelVersion": model,
            "responseId": format!("resp{content}")
        })
    }

    /// Checks a request body for `model` as the API would.
    pub fn check(&self, model: &str, request: &Value) -> Result<(), Rejection> {
        check_thinking(model, &request["generationConfig"]["thinkingConfig"])?;
        check_declarations(request)?;
        check_output(model, request)?;
        let Some(contents) = request["contents"].as_array().filter(|contents| !contents.is_empty()) else {
            return Err(invalid("* GenerateContentRequest.contents: contents is not specified\n"));
        };
        for (index, content) in contents.iter().enumerate() {
            if !matches!(content["role"].as_str(), Some("user" | "model")) {
                return Err(invalid("Please use a valid role: user, model."));
            }
            if content["parts"].as_array().is_none_or(Vec::is_empty) {
                return Err(invalid(&format!(
                    "* GenerateContentRequest.contents[{index}].parts: contents.parts must not be empty.\n"
                )));
            }
            if index > 0 && contents[index - 1]["role"] == content["role"] {
                return Err(invalid("Please ensure that multiturn requests alternate between user and model."));
            }
        }
        check_function_turns(contents)?;
        self.check_signatures(model, contents)
    }

    fn check_signatures(&self, model: &str, contents: &[Value]) -> Result<(), Rejection> {
        for (index, content) in contents.iter().enumerate().filter(|(_, c)| c["role"] == "model") {
            for (part_index, part) in parts(content).iter().enumerate() {
                let Some(signature) = part.get("thoughtSignature") else { continue };
                let signature = signature.as_str().unwrap_or_default();
                if !is_base64(signature) {
                    return Err(invalid(&format!(
                        "Invalid value at 'contents[{index}].parts[{part_index}].thought_signature' (TYPE_BYTES), Base64 decoding failed for \"{signature}\""
                    )));
                }
                if !PLACEHOLDERS.contains(&signature) && signature != self.sign(index, part_index, part) {
                    return Err(invalid("Corrupted thought signature."));
                }
            }
        }
        if !is_gemini_3(model) {
            return Ok(());
        }
        // The current turn: since the last user content that is not only function responses.
        let start = contents
            .iter()
            .rposition(|content| {
                content["role"] == "user" && parts(content).iter().any(|p| p.get("functionResponse").is_none())
            })
            .unwrap_or(0);
        for (index, content) in contents.iter().enumerate().skip(start) {
            let first_call = parts(content).iter().find(|part| part.get("functionCall").is_some());
            if let Some(call) = first_call.filter(|call| call.get("thoughtSignature").is_none()) {
                let name = call["functionCall"]["name"].as_str().unwrap_or_default();
                return Err(invalid(&format!(
                    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{name}` , position {}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                    index + 1
                )));
            }
        }
        Ok(())
    }
}

/// The parts of a content.
fn parts(content: &Value) -> &[Value] {
    content["parts"].as_array().map(Vec::as_slice).unwrap_or_default()
}

fn has(content: &Value, field: &str) -> bool {
    parts(content).iter().any(|part| part.get(field).is_some())
}

/// Function declarations: parameters in one form (`parameters`, the
/// `OpenAPI` subset, or `parametersJsonSchema`), and in the subset no
/// OBJECT without properties and no empty `enum` or `anyOf`.
fn check_declarations(request: &Value) -> Result<(), Rejection> {
    fn check_subset(schema: &Value, at: &str) -> Result<(), Rejection> {
        if schema["type"] == "OBJECT" && schema["properties"].as_object().is_none_or(serde_json::Map::is_empty) {
            return Err(invalid(&format!("* {at}.properties: should be non-empty for OBJECT type\n")));
        }
        for keyword in ["enum", "anyOf"] {
            if schema[keyword].as_array().is_some_and(Vec::is_empty) {
                return Err(invalid(&format!("* {at}.{keyword}: must not be empty\n")));
            }
        }
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            check_subset(property, &format!("{at}.properties[{name}]"))?;
        }
        for (index, branch) in schema["anyOf"].as_array().into_iter().flatten().enumerate() {
            check_subset(branch, &format!("{at}.any_of[{index}]"))?;
        }
        if schema.get("items").is_some() {
            check_subset(&schema["items"], &format!("{at}.items"))?;
        }
        Ok(())
    }
    for tool in request["tools"].as_array().into_iter().flatten() {
        for (index, declaration) in tool["functionDeclarations"].as_array().into_iter().flatten().enumerate() {
            let at = format!("GenerateContentRequest.tools[0].function_declarations[{index}]");
            if declaration.get("parameters").is_some() && declaration.get("parametersJsonSchema").is_some() {
                return Err(invalid(&format!("* {at}: parameters and parameters_json_schema cannot both be set\n")));
            }
            if let Some(parameters) = declaration.get("parameters") {
                check_subset(parameters, &format!("{at}.parameters"))?;
            }
        }
    }
    Ok(())
}

/// Vertex AI's `FunctionCall` and `FunctionResponse` have no `id` (only the
/// Gemini Developer API's do): it rejects one as an unknown field.
fn check_vertex_fields(request: &Value) -> Result<(), Rejection> {
    for (c, content) in request["contents"].as_array().into_iter().flatten().enumerate() {
        for (p, part) in parts(content).iter().enumerate() {
            for (field, name) in [("functionCall", "function_call"), ("functionResponse", "function_response")] {
                if part.get(field).is_some_and(|value| value.get("id").is_some()) {
                    return Err(invalid(&format!(
                        "Invalid JSON payload received. Unknown name \"id\" at 'contents[{c}].parts[{p}].{name}': Cannot find field."
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Function call and function response turns, in order and paired.
fn check_function_turns(contents: &[Value]) -> Result<(), Rejection> {
    for (index, content) in contents.iter().enumerate() {
        let previous = index.checked_sub(1).map(|i| &contents[i]);
        if content["role"] == "model" && has(content, "functionCall") && previous.is_none_or(|p| p["role"] != "user") {
            return Err(invalid(
                "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
            ));
        }
        if content["role"] != "user" || !has(content, "functionResponse") {
            continue;
        }
        let Some(call_turn) = previous.filter(|p| p["role"] == "model" && has(p, "functionCall")) else {
            return Err(invalid(
                "Please ensure that function response turn comes immediately after a function call turn.",
            ));
        };
        let calls: Vec<&Value> = parts(call_turn).iter().filter_map(|p| p.get("functionCall")).collect();
        let responses: Vec<&Value> = parts(content).iter().filter_map(|p| p.get("functionResponse")).collect();
        if calls.len() != responses.len() {
            return Err(invalid(
                "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
            ));
        }
        for response in responses {
            let answers = |call: &&Value| {
                call["name"] == response["name"]
                    && (call.get("id").is_none() || response.get("id").is_none() || call["id"] == response["id"])
            };
            if !calls.iter().any(answers) || !response["response"].is_object() {
                return Err(invalid(&format!(
                    "Please ensure that each function response part answers a function call of the function call turn by name and id: `{}` answers none.",
                    response["name"].as_str().unwrap_or_default()
                )));
            }
        }
    }
    Ok(())
}

/// The structured-output settings of `generationConfig`.
fn check_output(model: &str, request: &Value) -> Result<(), Rejection> {
    let config = &request["generationConfig"];
    let json_schema = config.get("responseJsonSchema");
    let schema = json_schema.or(config.get("responseSchema"));
    if json_schema.is_some() && config.get("responseSchema").is_some() {
        return Err(invalid("generation_config: response_schema and response_json_schema cannot both be set."));
    }
    let mime = config["responseMimeType"].as_str().unwrap_or("text/plain");
    if schema.is_some() && !matches!(mime, "application/json" | "text/x.enum") {
        return Err(invalid(&format!(
            "generation_config.response_mime_type: a response schema needs `application/json` or `text/x.enum`, got `{mime}`."
        )));
    }
    let declares_functions = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|tool| tool["functionDeclarations"].as_array().is_some_and(|list| !list.is_empty()));
    if mime == "application/json" && declares_functions && !is_gemini_3(model) {
        return Err(invalid("Function calling with a response mime type: 'application/json' is unsupported"));
    }
    match json_schema {
        Some(schema) => lone_references(schema, "generation_config.response_json_schema").map_err(|m| invalid(&m)),
        None => Ok(()),
    }
}

/// Every `$ref` of `schema` without keywords beside it but `$` ones.
fn lone_references(schema: &Value, path: &str) -> Result<(), String> {
    match schema {
        Value::Object(object) => {
            if object.contains_key("$ref")
                && let Some(beside) = object.keys().find(|key| !key.starts_with('$'))
            {
                return Err(format!("{path}: `{beside}` cannot be set beside `$ref`."));
            }
            object.iter().try_for_each(|(key, value)| lone_references(value, &format!("{path}.{key}")))
        }
        Value::Array(list) => {
            list.iter().enumerate().try_for_each(|(index, value)| lone_references(value, &format!("{path}[{index}]")))
        }
        _ => Ok(()),
    }
}

fn check_thinking(model: &str, thinking: &Value) -> Result<(), Rejection> {
    let level = thinking.get("thinkingLevel");
    if level.is_some() && thinking.get("thinkingBudget").is_some() {
        return Err(invalid(
            "Unable to submit request because thinking_budget and thinking_level are not supported together.",
        ));
    }
    if let Some(level) = level {
        if !is_gemini_3(model) {
            return Err(invalid("Thinking level is not supported for this model."));
        }
        if !matches!(level.as_str(), Some("minimal" | "low" | "medium" | "high")) {
            return Err(invalid(&format!(
                "Invalid value at 'generation_config.thinking_config.thinking_level' (type.googleapis.com/google.ai.generativelanguage.v1beta.ThinkingConfig.ThinkingLevel), {level}"
            )));
        }
    }
    Ok(())
}

/// Gemini 3 and later (and names without a version, the newest models).
pub fn is_gemini_3(model: &str) -> bool {
    let version = model.split_once("gemini-").map(|(_, rest)| rest.split(['-', '.']).next().unwrap_or_default());
    version.and_then(|major| major.parse::<u32>().ok()).is_none_or(|major| major >= 3)
}

/// What a signature covers: the part without its signature and call id.
fn signed_payload(part: &Value) -> String {
    // `retain` keeps the order of the other fields (`remove` may not).
    let mut part = part.as_object().cloned().unwrap_or_else(Map::new);
    part.retain(|field, _| field != "thoughtSignature");
    if let Some(call) = part.get_mut("functionCall").and_then(Value::as_object_mut) {
        call.retain(|field, _| field != "id");
    }
    Value::Object(part).to_string()
}

fn pos(n: usize) -> [u8; 8] {
    (n as u64).to_le_bytes()
}

/// A Google error body.
pub fn error(code: u16, status: &str, message: &str) -> Rejection {
    Rejection { status: code, body: json!({"error": {"code": code, "message": message, "status": status}}) }
}

/// An `INVALID_ARGUMENT` body.
fn invalid(message: &str) -> Rejection {
    error(400, "INVALID_ARGUMENT", message)
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Whether `text` decodes as base64 (standard or URL-safe, as Google's
/// JSON parser takes bytes).
fn is_base64(text: &str) -> bool {
    let body = text.trim_end_matches('=');
    text.len() - body.len() <= 2
        && !body.is_empty()
        && body.len() % 4 != 1
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_'))
}
