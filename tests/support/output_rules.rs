//! Fakes of the five APIs' structured-output rules, for tests.
//!
//! Each fake answers a scripted conversation ([`Turn`]s), in the API's
//! shape (streamed when the request asks for `stream: true`), after
//! checking the request the way the real API does:
//! - OpenAI Chat Completions `response_format` and Responses `text.format`:
//!   `type` is `json_schema` (or `json_object`/`text`), the schema has a
//!   `name` of letters, digits, `_` and `-` (up to 64), its root is an
//!   object, and with `strict: true` every object has
//!   `additionalProperties: false` and lists every property in `required`
//!   (`Invalid schema for response_format '...': In context=(...), ...`).
//!   Tools stay callable: a scripted tool call is returned while a schema
//!   is set, as the API does.
//! - Anthropic `output_config.format`: only on Claude Opus/Sonnet 4.5,
//!   Haiku 4.5 and later; every object has `additionalProperties: false`;
//!   numeric bounds, string lengths and `maxItems` are rejected; tools
//!   stay callable.
//! - Ollama `format`: a JSON schema object or `"json"`. The server holds the
//!   whole answer to the schema's grammar, so with tools offered too the
//!   model can never call one: the fake then answers with empty content and
//!   no tool calls, as the real server does.
//! - Gemini `generationConfig.responseJsonSchema`: the rules of
//!   [`gemini_rules`](crate::gemini_rules) (the JSON MIME type, no schema
//!   beside function declarations before Gemini 3, lone `$ref`s), with the
//!   rest of the API's (signatures, turn order). A refusal is a response
//!   blocked for safety (`finishReason: SAFETY`, no content), a cut-off
//!   answer ends with `MAX_TOKENS`.
//!
//! Error bodies are the APIs' shapes; messages quote the APIs where their
//! wording is known (Anthropic's model message is paraphrased).

use std::collections::VecDeque;

use serde_json::{Value, json};

use crate::gemini_rules::{GeminiRules, Part};
use crate::rules::Rejection;
use crate::{RecordedRequest, Reply, streamed};

/// One scripted model turn.
#[derive(Clone, Debug)]
pub enum Turn {
    /// A tool call: id, tool name, arguments.
    Call(&'static str, &'static str, Value),
    /// A text answer.
    Answer(String),
    /// A refusal (OpenAI `refusal`, Anthropic `stop_reason: refusal`).
    Refusal(String),
    /// A text answer cut off at the output token limit.
    CutOff(String),
}

impl Turn {
    /// A text answer.
    pub fn answer(text: impl Into<String>) -> Self {
        Self::Answer(text.into())
    }
}

/// Which API a fake plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// OpenAI Chat Completions.
    Chat,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama `/api/chat`.
    Ollama,
    /// Gemini `generateContent` (the model and the method in the path).
    Gemini,
}

/// A responder for [`TestServer::respond_with`](crate::TestServer::respond_with)
/// playing `api` through `turns`, one a request.
pub fn fake(api: Api, turns: Vec<Turn>) -> impl FnMut(&RecordedRequest) -> Reply + Send + 'static {
    let mut turns: VecDeque<Turn> = turns.into();
    let gemini_rules = GeminiRules::new();
    move |request| {
        if api == Api::Gemini {
            return gemini_reply(&gemini_rules, request, &mut turns);
        }
        let body = request.json();
        if let Err(rejection) = check(api, &body) {
            return rejection.reply();
        }
        let Some(turn) = turns.pop_front() else {
            return Reply::json(500, &json!({"error": {"message": "the fake's script is exhausted"}}));
        };
        let grammar_only = api == Api::Ollama
            && body.get("format").is_some_and(|f| !f.is_null())
            && body["tools"].as_array().is_some_and(|tools| !tools.is_empty());
        let whole = if grammar_only { ollama(&Turn::answer("")) } else { respond(api, &turn) };
        if body["stream"] == json!(true) {
            match api {
                Api::Chat => streamed::reply("text/event-stream", streamed::chat(&whole)),
                Api::Responses => streamed::reply("text/event-stream", streamed::responses(&whole)),
                Api::Anthropic => streamed::reply("text/event-stream", streamed::anthropic(&whole)),
                Api::Ollama => streamed::reply("application/x-ndjson", streamed::ollama(&whole)),
                Api::Gemini => unreachable!("answered by `gemini_reply`"),
            }
        } else {
            Reply::json(200, &whole)
        }
    }
}

/// Checks a request body's structured-output settings as `api` would
/// (Gemini: for a Gemini 3 model; [`GeminiRules::check`] takes the model).
pub fn check(api: Api, body: &Value) -> Result<(), Rejection> {
    match api {
        Api::Gemini => GeminiRules::new().check("gemini-3-flash-preview", body),
        Api::Chat => match body.get("response_format") {
            Some(format) => check_openai_format(format, &format["json_schema"], "response_format", openai_error),
            None => Ok(()),
        },
        Api::Responses => match body["text"].get("format") {
            Some(format) => check_openai_format(format, format, "text.format", openai_error),
            None => Ok(()),
        },
        Api::Anthropic => check_anthropic(body),
        Api::Ollama => match body.get("format") {
            None | Some(Value::Object(_)) => Ok(()),
            Some(Value::String(json)) if json == "json" => Ok(()),
            Some(other) => Err(Rejection { status: 400, body: json!({"error": format!("invalid format: {other}")}) }),
        },
    }
}

fn openai_error(message: &str, param: &str) -> Rejection {
    Rejection {
        status: 400,
        body: json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": null}}),
    }
}

/// `format` is `response_format` (Chat) or `text.format` (Responses);
/// `schema_holder` is the object holding `name`, `schema` and `strict`.
fn check_openai_format(
    format: &Value,
    schema_holder: &Value,
    param: &str,
    error: fn(&str, &str) -> Rejection,
) -> Result<(), Rejection> {
    match format["type"].as_str() {
        Some("text" | "json_object") => return Ok(()),
        Some("json_schema") => {}
        other => {
            return Err(error(
                &format!("Invalid value: {other:?}. Supported values are: 'text', 'json_object', and 'json_schema'."),
                &format!("{param}.type"),
            ));
        }
    }
    let name = schema_holder["name"].as_str().unwrap_or_default();
    let valid_name = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid_name {
        return Err(error(
            &format!(
                "Invalid '{param}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            ),
            &format!("{param}.name"),
        ));
    }
    let schema = &schema_holder["schema"];
    if schema["type"] != "object" {
        return Err(error(
            &format!(
                "Invalid schema for response_format '{name}': schema must be a JSON Schema of 'type: \"object\"', got 'type: {}'.",
                schema["type"]
            ),
            param,
        ));
    }
    if schema_holder["strict"] == json!(true) {
        check_strict(schema, &mut Vec::new())
            .map_err(|problem| error(&format!("Invalid schema for response_format '{name}': {problem}"), param))?;
    }
    Ok(())
}

/// OpenAI's strict-mode rules on every object of `schema`.
fn check_strict(schema: &Value, context: &mut Vec<String>) -> Result<(), String> {
    let Some(object) = schema.as_object() else { return Ok(()) };
    let where_ = || format!("In context=({})", context.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", "));
    let is_object = object
        .get("type")
        .is_some_and(|t| t == "object" || t.as_array().is_some_and(|ts| ts.iter().any(|t| t == "object")));
    if is_object || object.contains_key("properties") {
        if object.get("additionalProperties") != Some(&json!(false)) {
            return Err(format!("{}, 'additionalProperties' is required to be supplied and to be false.", where_()));
        }
        let properties = object.get("properties").and_then(Value::as_object);
        let required: Vec<&str> =
            object.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        for key in properties.into_iter().flat_map(|p| p.keys()) {
            if !required.contains(&key.as_str()) {
                return Err(format!(
                    "{}, 'required' is required to be supplied and to be an array including every key in properties. Missing '{key}'.",
                    where_()
                ));
            }
        }
        for (key, property) in properties.into_iter().flatten() {
            context.extend(["properties".to_owned(), key.clone()]);
            check_strict(property, context)?;
            context.truncate(context.len() - 2);
        }
    }
    if let Some(items) = object.get("items") {
        context.push("items".to_owned());
        check_strict(items, context)?;
        context.pop();
    }
    for key in ["anyOf", "allOf"] {
        for (index, child) in object.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
            context.extend([key.to_owned(), index.to_string()]);
            check_strict(child, context)?;
            context.truncate(context.len() - 2);
        }
    }
    Ok(())
}

fn anthropic_error(message: &str) -> Rejection {
    Rejection {
        status: 400,
        body: json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}, "request_id": "req_fake"}),
    }
}

/// The `(major, minor)` of a Claude model id (`claude-sonnet-4-5-20250929`, `claude-3-5-haiku-latest`).
fn claude_version(model: &str) -> Option<(u32, u32)> {
    let (_, name) = model.split_once("claude-")?;
    let number = |token: &str| (!token.is_empty() && token.len() <= 2).then(|| token.parse::<u32>().ok()).flatten();
    let mut tokens = name.split('-');
    let major = tokens.by_ref().find_map(number)?;
    Some((major, tokens.next().and_then(number).unwrap_or(0)))
}

fn check_anthropic(body: &Value) -> Result<(), Rejection> {
    let Some(format) = body["output_config"].get("format") else { return Ok(()) };
    let model = body["model"].as_str().unwrap_or_default();
    if claude_version(model).is_some_and(|version| version < (4, 5)) {
        return Err(anthropic_error(&format!("'{model}' does not support structured outputs (output_config.format).")));
    }
    if format["type"] != "json_schema" {
        return Err(anthropic_error("output_config.format.type: Input should be 'json_schema'"));
    }
    check_anthropic_schema(&format["schema"], "output_config.format.schema")
        .map_err(|message| anthropic_error(&message))
}

/// Anthropic's JSON Schema limitations, on every subschema.
fn check_anthropic_schema(schema: &Value, path: &str) -> Result<(), String> {
    let Some(object) = schema.as_object() else { return Ok(()) };
    for keyword in [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
    ] {
        if object.contains_key(keyword) {
            return Err(format!("{path}: property '{keyword}' is not supported"));
        }
    }
    if object.get("minItems").and_then(Value::as_u64).is_some_and(|min| min > 1) {
        return Err(format!("{path}: 'minItems' values other than 0 or 1 are not supported"));
    }
    if object.contains_key("$ref") {
        return Err(format!("{path}: recursive schemas are not supported"));
    }
    let is_object = object.get("type") == Some(&json!("object")) || object.contains_key("properties");
    if is_object && object.get("additionalProperties") != Some(&json!(false)) {
        return Err(format!("{path}: For 'object' type, 'additionalProperties' must be explicitly set to false"));
    }
    for (key, property) in object.get("properties").and_then(Value::as_object).into_iter().flatten() {
        check_anthropic_schema(property, &format!("{path}.properties.{key}"))?;
    }
    if let Some(items) = object.get("items") {
        check_anthropic_schema(items, &format!("{path}.items"))?;
    }
    for key in ["anyOf", "allOf"] {
        for (index, child) in object.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
            check_anthropic_schema(child, &format!("{path}.{key}.{index}"))?;
        }
    }
    Ok(())
}

/// Answers a Gemini request: the API's rules first (path, key, turns,
/// signatures, structured output), then the next turn, signed as Gemini 3
/// signs it.
fn gemini_reply(rules: &GeminiRules, request: &RecordedRequest, turns: &mut VecDeque<Turn>) -> Reply {
    let call = match rules.admit(request) {
        Ok(call) => call,
        Err(rejection) => return rejection.reply(),
    };
    let Some(turn) = turns.pop_front() else {
        return Reply::json(500, &json!({"error": {"message": "the fake's script is exhausted"}}));
    };
    let body = request.json();
    let whole = gemini(rules, &body, &call.model, &turn);
    if call.stream { streamed::reply("text/event-stream", streamed::gemini(&whole)) } else { Reply::json(200, &whole) }
}

/// The whole response to `request` (its body) for `turn`.
fn gemini(rules: &GeminiRules, request: &Value, model: &str, turn: &Turn) -> Value {
    let (parts, finish) = match turn {
        Turn::Call(_, name, input) => (vec![Part::Call(name, input.clone())], "STOP"),
        Turn::Answer(text) => (vec![Part::Text(text)], "STOP"),
        Turn::Refusal(_) => (Vec::new(), "SAFETY"),
        Turn::CutOff(text) => (vec![Part::Text(text)], "MAX_TOKENS"),
    };
    let mut response = rules.respond(request, model, &parts);
    let candidate = &mut response["candidates"][0];
    candidate["finishReason"] = json!(finish);
    if finish == "SAFETY" {
        // A blocked candidate has no content, and says which rating blocked it.
        candidate.as_object_mut().expect("a candidate").remove("content");
        candidate["safetyRatings"] =
            json!([{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true}]);
    }
    response
}

/// The whole (non-streamed) response body of `turn` in `api`'s shape
/// (Gemini's, unsigned, for a request of one user turn).
pub fn respond(api: Api, turn: &Turn) -> Value {
    match api {
        Api::Gemini => gemini(&GeminiRules::new(), &json!({"contents": [{}]}), "gemini-3-flash-preview", turn),
        Api::Chat => chat(turn),
        Api::Responses => responses(turn),
        Api::Anthropic => anthropic(turn),
        Api::Ollama => ollama(turn),
    }
}

fn chat(turn: &Turn) -> Value {
    let (message, finish) = match turn {
        Turn::Call(id, name, input) => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}}]}),
            "tool_calls",
        ),
        Turn::Answer(text) => (json!({"role": "assistant", "content": text, "refusal": null}), "stop"),
        Turn::Refusal(text) => (json!({"role": "assistant", "content": null, "refusal": text}), "stop"),
        Turn::CutOff(text) => (json!({"role": "assistant", "content": text, "refusal": null}), "length"),
    };
    json!({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": "gpt-fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

fn responses(turn: &Turn) -> Value {
    let message = |part: Value| json!({"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant", "content": [part]});
    let (item, status, incomplete) = match turn {
        Turn::Call(id, name, input) => (
            json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name, "arguments": input.to_string(), "status": "completed"}),
            "completed",
            Value::Null,
        ),
        Turn::Answer(text) => {
            (message(json!({"type": "output_text", "text": text, "annotations": []})), "completed", Value::Null)
        }
        Turn::Refusal(text) => (message(json!({"type": "refusal", "refusal": text})), "completed", Value::Null),
        Turn::CutOff(text) => (
            message(json!({"type": "output_text", "text": text, "annotations": []})),
            "incomplete",
            json!({"reason": "max_output_tokens"}),
        ),
    };
    json!({
        "id": "resp_fake", "object": "response", "status": status, "error": null, "incomplete_details": incomplete,
        "model": "gpt-fake", "output": [item],
        "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    })
}

fn anthropic(turn: &Turn) -> Value {
    let (content, stop) = match turn {
        Turn::Call(id, name, input) => {
            (json!([{"type": "tool_use", "id": id, "name": name, "input": input}]), "tool_use")
        }
        Turn::Answer(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
        Turn::Refusal(text) => (json!([{"type": "text", "text": text}]), "refusal"),
        Turn::CutOff(text) => (json!([{"type": "text", "text": text}]), "max_tokens"),
    };
    json!({
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    })
}

fn ollama(turn: &Turn) -> Value {
    let (message, reason) = match turn {
        Turn::Call(_, name, input) => (
            json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": input}}]}),
            "stop",
        ),
        Turn::Answer(text) | Turn::Refusal(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Turn::CutOff(text) => (json!({"role": "assistant", "content": text}), "length"),
    };
    json!({
        "model": "llama-fake", "created_at": "2026-01-01T00:00:00Z", "message": message,
        "done_reason": reason, "done": true, "prompt_eval_count": 10, "eval_count": 5
    })
}
