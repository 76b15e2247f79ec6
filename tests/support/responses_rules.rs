//! A fake of the OpenAI Responses API's rules for reasoning items, for tests.
//!
//! The responses it builds carry reasoning items whose `encrypted_content`
//! seals (with a keyed hash) the item's id and the item that followed it;
//! it remembers which reasoning item each function call it issued came
//! after. It checks a request body the way the real API does:
//! - `encrypted_content` that was altered, or not issued for that item, is
//!   rejected (`invalid_encrypted_content`);
//! - a reasoning item must come directly before the item that followed it
//!   ("provided without its required following item");
//! - a function call issued after a reasoning item needs that item before
//!   it ("provided without its required 'reasoning' item");
//! - every `function_call_output` answers a `function_call` of the input
//!   (with `previous_response_id`: of the stored conversation or the input).
//!
//! And the rules of stored responses ([`ResponsesRules::respond_to`]):
//! - a response is stored only when its request says `store: true` (the
//!   API's default when `store` is left out);
//! - `previous_response_id` must name a stored response
//!   (`previous_response_not_found`), whose conversation (its input and
//!   output, and those of the responses it continued) the request continues;
//! - an item of that conversation sent again is a duplicate ("Duplicate
//!   item found with id ...").
//!
//! Error bodies and messages are the API's.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::rules::{Rejection, keyed_hash};

/// One output item of a response the fake builds.
#[derive(Clone, Debug)]
pub enum Item<'a> {
    /// A reasoning item with this summary text (none when empty).
    Reasoning(&'a str),
    /// An assistant message with this text.
    Message(&'a str),
    /// A function call: call id, name, arguments (sent as a JSON string).
    FunctionCall(&'a str, &'a str, Value),
}

/// The fake's key, counters and memory of the calls it issued.
#[derive(Debug)]
pub struct ResponsesRules {
    key: u64,
    next: AtomicUsize,
    /// Call id -> the id of the reasoning item it came after.
    required: Mutex<HashMap<String, String>>,
    /// Response id -> its whole conversation as input items, for stored responses.
    stored: Mutex<HashMap<String, Vec<Value>>>,
}

impl Default for ResponsesRules {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponsesRules {
    /// A fake with a fixed key and nothing issued.
    pub fn new() -> Self {
        Self {
            key: 0x0a1b_2c3d_4e5f_6071,
            next: AtomicUsize::new(1),
            required: Mutex::new(HashMap::new()),
            stored: Mutex::new(HashMap::new()),
        }
    }

    /// The `encrypted_content` of reasoning item `id` followed by
    /// `following` (`"message"` or `"call:<call_id>"`).
    pub fn seal(&self, id: &str, following: &str) -> String {
        let mac = keyed_hash(self.key, &[id.as_bytes(), following.as_bytes()]);
        format!("gAAAA|{id}|{following}|{mac:016x}")
    }

    /// A success body with `items`, in order, and usage reporting
    /// `reasoning_tokens`.
    pub fn respond(&self, items: &[Item<'_>], reasoning_tokens: u64) -> Value {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut output = Vec::new();
        let mut last_reasoning: Option<String> = None;
        for (index, item) in items.iter().enumerate() {
            match item {
                Item::Reasoning(summary) => {
                    let id = format!("rs_{n}_{index}");
                    let following = match items.get(index + 1) {
                        Some(Item::FunctionCall(call_id, ..)) => format!("call:{call_id}"),
                        _ => "message".to_owned(),
                    };
                    let summary: Vec<Value> = if summary.is_empty() {
                        Vec::new()
                    } else {
                        vec![json!({"type": "summary_text", "text": summary})]
                    };
                    output.push(json!({
                        "type": "reasoning", "id": id, "summary": summary,
                        "encrypted_content": self.seal(&id, &following)
                    }));
                    last_reasoning = Some(id);
                }
                Item::Message(text) => output.push(json!({
                    "type": "message", "id": format!("msg_{n}_{index}"), "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]
                })),
                Item::FunctionCall(call_id, name, arguments) => {
                    if let Some(reasoning) = &last_reasoning {
                        self.required.lock().unwrap().insert((*call_id).to_owned(), reasoning.clone());
                    }
                    output.push(json!({
                        "type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "name": name,
                        "arguments": arguments.to_string(), "status": "completed"
                    }));
                }
            }
        }
        json!({
            "id": format!("resp_fake_{n}"), "object": "response", "status": "completed",
            "error": null, "incomplete_details": null, "model": "gpt-fake",
            "output": output,
            "usage": {
                "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 20 + reasoning_tokens, "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": 30 + reasoning_tokens
            }
        })
    }

    /// [`respond`](Self::respond) to `request`, storing the response (with
    /// the conversation it ends) when the request asks for it.
    pub fn respond_to(&self, request: &Value, items: &[Item<'_>], reasoning_tokens: u64) -> Value {
        let response = self.respond(items, reasoning_tokens);
        if request.get("store") != Some(&Value::Bool(false)) {
            let mut conversation = self.previous(request).unwrap_or_default();
            conversation.extend(request["input"].as_array().into_iter().flatten().cloned());
            conversation.extend(response["output"].as_array().into_iter().flatten().cloned());
            let id = response["id"].as_str().unwrap_or_default().to_owned();
            self.stored.lock().unwrap().insert(id, conversation);
        }
        response
    }

    /// Deletes stored response `id` (as `DELETE /v1/responses/{id}`, or
    /// the end of its retention, would).
    pub fn delete(&self, id: &str) {
        self.stored.lock().unwrap().remove(id);
    }

    /// Whether the fake holds response `id`.
    pub fn is_stored(&self, id: &str) -> bool {
        self.stored.lock().unwrap().contains_key(id)
    }

    /// The stored conversation `request` continues, if it names one it holds.
    fn previous(&self, request: &Value) -> Option<Vec<Value>> {
        let id = request.get("previous_response_id")?.as_str()?;
        self.stored.lock().unwrap().get(id).cloned()
    }

    /// Checks a request body as the API would.
    pub fn check(&self, request: &Value) -> Result<(), Rejection> {
        let input = request["input"].as_array().map(Vec::as_slice).unwrap_or_default();
        let earlier = match request.get("previous_response_id").filter(|id| !id.is_null()) {
            None => Vec::new(),
            Some(id) => self.previous(request).ok_or_else(|| {
                invalid(
                    &format!("Previous response with id '{}' not found.", id.as_str().unwrap_or_default()),
                    Some("previous_response_id"),
                    Some("previous_response_not_found"),
                )
            })?,
        };
        for item in input {
            let id = item_id(item);
            if id.is_some() && earlier.iter().any(|old| old["type"] == item["type"] && item_id(old) == id) {
                return Err(invalid(
                    &format!(
                        "Duplicate item found with id {}. Remove duplicate items from your input and try again.",
                        id.unwrap_or_default()
                    ),
                    Some("input"),
                    None,
                ));
            }
        }
        // The rules below hold for the whole conversation; the stored part passed them already.
        let whole: Vec<Value> = earlier.iter().chain(input).cloned().collect();
        let input = whole.as_slice();
        let required = self.required.lock().unwrap();
        for (position, item) in input.iter().enumerate().skip(earlier.len()) {
            match item["type"].as_str() {
                Some("reasoning") => self.check_reasoning(item, input.get(position + 1))?,
                Some("function_call") => {
                    let call_id = item["call_id"].as_str().unwrap_or_default();
                    if let Some(reasoning) = required.get(call_id) {
                        let before = &input[..position];
                        if !before.iter().any(|i| i["type"] == "reasoning" && i["id"] == reasoning.as_str()) {
                            return Err(invalid(
                                &format!(
                                    "Item 'fc_{call_id}' of type 'function_call' was provided without its required 'reasoning' item: '{reasoning}'."
                                ),
                                Some("input"),
                                None,
                            ));
                        }
                    }
                }
                Some("function_call_output") => {
                    let call_id = item["call_id"].as_str().unwrap_or_default();
                    if !input.iter().any(|i| i["type"] == "function_call" && i["call_id"] == call_id) {
                        return Err(invalid(
                            &format!("No tool call found for function call output with call_id {call_id}."),
                            Some("input"),
                            None,
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check_reasoning(&self, item: &Value, next: Option<&Value>) -> Result<(), Rejection> {
        let id = item["id"].as_str().unwrap_or_default();
        let content = item["encrypted_content"].as_str().unwrap_or_default();
        let sealed: Vec<&str> = content.split('|').collect();
        let following = match sealed.as_slice() {
            ["gAAAA", sealed_id, following, _] if *sealed_id == id && self.seal(id, following) == content => *following,
            _ => {
                return Err(invalid(
                    &format!("The encrypted content {} could not be verified.", excerpt(content)),
                    None,
                    Some("invalid_encrypted_content"),
                ));
            }
        };
        let followed = match (following.strip_prefix("call:"), next) {
            (Some(call_id), Some(next)) => next["type"] == "function_call" && next["call_id"] == call_id,
            (None, Some(next)) => next["type"] == "message" && next["role"] == "assistant",
            (_, None) => false,
        };
        if followed {
            Ok(())
        } else {
            Err(invalid(
                &format!("Item '{id}' of type 'reasoning' was provided without its required following item."),
                Some("input"),
                None,
            ))
        }
    }
}

/// What makes an item the same item: a reasoning item's id, a call's or
/// call output's `call_id`.
fn item_id(item: &Value) -> Option<&str> {
    match item["type"].as_str()? {
        "reasoning" => item["id"].as_str(),
        "function_call" | "function_call_output" => item["call_id"].as_str(),
        _ => None,
    }
}

/// How the API quotes encrypted content in errors: `gAAA...Rg==`.
fn excerpt(content: &str) -> String {
    let chars: Vec<char> = content.chars().collect();
    if chars.len() <= 8 {
        return content.to_owned();
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}...{tail}")
}

/// An `invalid_request_error` body.
fn invalid(message: &str, param: Option<&str>, code: Option<&str>) -> Rejection {
    Rejection {
        status: 400,
        body: json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}),
    }
}
