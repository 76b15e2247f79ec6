//! A fake of the Anthropic Messages API's rules for thinking, for tests.
//!
//! It signs the thinking blocks of the responses it builds with a keyed
//! hash of (thinking text, position of the assistant turn, position of the
//! block in the turn), and checks a request body the way the real API does:
//! - a `thinking` block whose text or signature changed, or that moved to
//!   another turn or another place in its turn, fails its signature check;
//!   so does `redacted_thinking` data that changed or moved;
//! - with thinking enabled, the final assistant turn, when it holds tool
//!   use, must start with a thinking block (the API's "Expected `thinking`
//!   or `redacted_thinking`, but found `tool_use`");
//! - with thinking off, a final assistant message may not hold thinking;
//! - thinking needs `temperature` unset or 1, `budget_tokens` of at least
//!   1024 and below `max_tokens`, and no forced `tool_choice`.
//!
//! Error bodies and messages are the API's (messages quoted from its
//! responses; the signature messages keep the API's wording).

use serde_json::{Value, json};

use crate::rules::{Rejection, keyed_hash};

const DOCS: &str = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

/// One block of a response the fake builds.
#[derive(Clone, Debug)]
pub enum Block<'a> {
    /// A `thinking` block, signed by the fake.
    Thinking(&'a str),
    /// A `redacted_thinking` block with data issued by the fake.
    RedactedThinking,
    /// A `text` block.
    Text(&'a str),
    /// A `tool_use` block: id, name, input.
    ToolUse(&'a str, &'a str, Value),
}

/// The fake's signing key and rules.
#[derive(Clone, Debug)]
pub struct AnthropicRules {
    key: u64,
}

impl Default for AnthropicRules {
    fn default() -> Self {
        Self::new()
    }
}

impl AnthropicRules {
    /// A fake with a fixed key.
    pub fn new() -> Self {
        Self { key: 0x5eed_1234_abcd_0042 }
    }

    /// The signature of `thinking` at block `index` of the assistant turn at
    /// `turn` (its index in `messages`).
    pub fn sign(&self, thinking: &str, turn: usize, index: usize) -> String {
        let hash = keyed_hash(self.key, &[b"thinking", thinking.as_bytes(), &pos(turn), &pos(index)]);
        format!("EqSig{hash:016x}")
    }

    /// The `data` of a redacted thinking block at block `index` of the
    /// assistant turn at `turn`.
    pub fn redacted_data(&self, turn: usize, index: usize) -> String {
        let hash = keyed_hash(self.key, &[b"redacted", &pos(turn), &pos(index)]);
        format!("EmRed{hash:016x}")
    }

    /// A success body answering `request` (its JSON body) with `blocks`:
    /// the response becomes the assistant turn at `request.messages.len()`,
    /// and its thinking is signed for that place.
    pub fn respond(&self, request: &Value, blocks: &[Block<'_>]) -> Value {
        let turn = request["messages"].as_array().map_or(0, Vec::len);
        let mut has_tool_use = false;
        let content: Vec<Value> = blocks
            .iter()
            .enumerate()
            .map(|(index, block)| match block {
                Block::Thinking(text) => {
                    json!({"type": "thinking", "thinking": text, "signature": self.sign(text, turn, index)})
                }
                Block::RedactedThinking => {
                    json!({"type": "redacted_thinking", "data": self.redacted_data(turn, index)})
                }
                Block::Text(text) => json!({"type": "text", "text": text}),
                Block::ToolUse(id, name, input) => {
                    has_tool_use = true;
                    json!({"type": "tool_use", "id": id, "name": name, "input": input})
                }
            })
            .collect();
        json!({
            "id": format!("msg_fake_{turn}"), "type": "message", "role": "assistant",
            "model": request["model"].as_str().unwrap_or("claude-fake"),
            "content": content,
            "stop_reason": if has_tool_use { "tool_use" } else { "end_turn" }, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 20}
        })
    }

    /// Checks a request body as the API would.
    pub fn check(&self, request: &Value) -> Result<(), Rejection> {
        let thinking_type = request["thinking"]["type"].as_str();
        let thinking_on = matches!(thinking_type, Some("enabled" | "adaptive"));
        if thinking_on {
            check_settings(request)?;
        }
        let messages = request["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
        for (turn, message) in messages.iter().enumerate() {
            if message["role"] != "assistant" {
                continue;
            }
            let blocks = message["content"].as_array().map(Vec::as_slice).unwrap_or_default();
            for (index, block) in blocks.iter().enumerate() {
                let thinking = || block["thinking"].as_str().unwrap_or_default();
                match block["type"].as_str() {
                    Some("thinking")
                        if block["signature"].as_str() != Some(self.sign(thinking(), turn, index).as_str()) =>
                    {
                        return Err(invalid(&format!(
                            "messages.{turn}.content.{index}: Invalid `signature` in `thinking` block"
                        )));
                    }
                    Some("redacted_thinking")
                        if block["data"].as_str() != Some(self.redacted_data(turn, index).as_str()) =>
                    {
                        return Err(invalid(&format!(
                            "messages.{turn}.content.{index}: Invalid `data` in `redacted_thinking` block"
                        )));
                    }
                    _ => {}
                }
            }
        }
        check_final_assistant(messages, thinking_type)
    }
}

fn pos(n: usize) -> [u8; 8] {
    (n as u64).to_le_bytes()
}

/// An `invalid_request_error` body.
fn invalid(message: &str) -> Rejection {
    Rejection {
        status: 400,
        body: json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}, "request_id": "req_fake"}),
    }
}

/// The request settings thinking is incompatible with.
fn check_settings(request: &Value) -> Result<(), Rejection> {
    if let Some(temperature) = request["temperature"].as_f64()
        && (temperature - 1.0).abs() > f64::EPSILON
    {
        return Err(invalid(&format!(
            "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode. Please consult our documentation at {DOCS}"
        )));
    }
    if matches!(request["tool_choice"]["type"].as_str(), Some("any" | "tool")) {
        return Err(invalid("Thinking may not be enabled when tool_choice forces tool use."));
    }
    if request["thinking"]["type"] == "enabled" {
        let budget = request["thinking"]["budget_tokens"].as_u64().unwrap_or(0);
        if budget < 1024 {
            return Err(invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"));
        }
        if budget >= request["max_tokens"].as_u64().unwrap_or(0) {
            return Err(invalid(&format!(
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at {DOCS}#max-tokens-and-context-window-size"
            )));
        }
    }
    Ok(())
}

/// The rules for the last assistant turn.
fn check_final_assistant(messages: &[Value], thinking_type: Option<&str>) -> Result<(), Rejection> {
    let Some((turn, last)) = messages.iter().enumerate().rev().find(|(_, m)| m["role"] == "assistant") else {
        return Ok(());
    };
    let blocks = last["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    let kind = |block: &Value| block["type"].as_str().unwrap_or_default().to_owned();
    let is_thinking = |block: &Value| matches!(block["type"].as_str(), Some("thinking" | "redacted_thinking"));
    match thinking_type {
        // Manual thinking: a tool-use turn must keep the thinking that led to it.
        Some("enabled")
            if blocks.iter().any(|b| b["type"] == "tool_use") && !blocks.first().is_some_and(is_thinking) =>
        {
            let found = blocks.first().map_or_else(|| "nothing".to_owned(), kind);
            Err(invalid(&format!(
                "messages.{turn}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at {DOCS}"
            )))
        }
        None if turn + 1 == messages.len() && blocks.iter().any(is_thinking) => Err(invalid(&format!(
            "messages.{turn}.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
        ))),
        _ => Ok(()),
    }
}
