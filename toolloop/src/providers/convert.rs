//! The conversions several wire formats share: the function-tool shape OpenAI Chat
//! and Ollama both take, the chat-style split of a turn into tool messages
//! and the rest, and how blocks a turn cannot carry are kept as text.

use std::borrow::Cow;

#[cfg(any(feature = "openai", feature = "ollama"))]
use serde::Serialize;
#[cfg(any(feature = "anthropic", feature = "ollama", feature = "gemini"))]
use serde_json::Map;
use serde_json::Value;

#[cfg(any(feature = "openai", feature = "ollama"))]
use crate::message::{ContentBlock, Message, Role};
use crate::message::{ToolCall, ToolResult};
#[cfg(any(feature = "openai", feature = "ollama"))]
use crate::tool::ToolDefinition;

/// A tool call's input as a JSON object, for wire formats that only take
/// objects (Anthropic `input`, Ollama `arguments`, Gemini `args`). Arguments another
/// provider kept as raw text are parsed when they are an object, and sent
/// as `{}` otherwise; the call's error result already told the model what
/// was wrong with them.
#[cfg(any(feature = "anthropic", feature = "ollama", feature = "gemini"))]
pub(crate) fn object_input(input: &Value) -> Cow<'_, Value> {
    match input {
        Value::Object(_) => Cow::Borrowed(input),
        Value::String(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(parsed @ Value::Object(_)) => Cow::Owned(parsed),
            _ => Cow::Owned(Value::Object(Map::new())),
        },
        _ => Cow::Owned(Value::Object(Map::new())),
    }
}

/// A tool result as text, for wire formats without an error flag (OpenAI,
/// Ollama): error results are prefixed with `Error: ` so the model can tell.
#[cfg(any(feature = "openai", feature = "ollama"))]
pub(crate) fn result_text(result: &ToolResult) -> Cow<'_, str> {
    if result.is_error() { Cow::Owned(format!("Error: {}", result.content)) } else { Cow::Borrowed(&result.content) }
}

/// A tool call in a turn that cannot carry one (a user turn), as text
/// rather than lost.
pub(crate) fn misplaced_call(call: &ToolCall) -> String {
    format!("[called tool `{}` with {}]", call.name, call.input)
}

/// A tool result in a turn that cannot carry one (an assistant turn), as
/// text rather than lost.
pub(crate) fn misplaced_result(result: &ToolResult) -> String {
    format!("[tool result: {}]", result.content)
}

/// A tool as OpenAI Chat Completions and Ollama take it:
/// `{"type":"function","function":{"name","description","parameters"}}`.
#[cfg(any(feature = "openai", feature = "ollama"))]
#[derive(Debug, Serialize)]
pub(crate) struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionDefinition<'a>,
}

#[cfg(any(feature = "openai", feature = "ollama"))]
#[derive(Debug, Serialize)]
struct FunctionDefinition<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

/// `tools` as function tools; with `strict`, those that have a strict
/// schema send it and are marked `strict: true`.
#[cfg(any(feature = "openai", feature = "ollama"))]
pub(crate) fn function_tools(tools: &[ToolDefinition], strict: bool) -> Vec<FunctionTool<'_>> {
    tools
        .iter()
        .map(|tool| FunctionTool {
            kind: "function",
            function: FunctionDefinition {
                name: &tool.name,
                description: &tool.description,
                parameters: tool.schema(strict),
                strict: tool.is_strict(strict).then_some(true),
            },
        })
        .collect()
}

/// One run of same-role messages as chat-style APIs (OpenAI Chat, Ollama)
/// take it, merged into one turn: its text joined by newlines and, in an
/// assistant turn, its tool calls. Tool results are passed to `result` as
/// they come, for the format to send as tool messages before the rest of
/// the turn (so that they directly follow the assistant's calls). Empty text
/// is dropped; blocks out of place are kept as text. The readable text of
/// an assistant turn's reasoning is kept apart, for the formats that take
/// it back (Ollama `thinking`).
#[cfg(any(feature = "openai", feature = "ollama"))]
pub(crate) struct ChatTurn<'a> {
    pub(crate) text: Option<Cow<'a, str>>,
    pub(crate) calls: Vec<&'a ToolCall>,
    // Chat Completions has no field to send it back in; Ollama does.
    #[cfg_attr(not(feature = "ollama"), allow(dead_code))]
    pub(crate) reasoning: Option<Cow<'a, str>>,
}

/// Parts joined by newlines; `None` when there are none.
#[cfg(any(feature = "openai", feature = "ollama"))]
fn joined(mut parts: Vec<Cow<'_, str>>) -> Option<Cow<'_, str>> {
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(Cow::Owned(parts.join("\n"))),
    }
}

#[cfg(any(feature = "openai", feature = "ollama"))]
impl<'a> ChatTurn<'a> {
    pub(crate) fn of(
        run: &'a [Message],
        result: &mut dyn FnMut(&'a ToolResult) -> serde_json::Result<()>,
    ) -> serde_json::Result<Self> {
        let role = run[0].role;
        let mut text: Vec<Cow<'a, str>> = Vec::new();
        let mut calls = Vec::new();
        let mut reasoning: Vec<Cow<'a, str>> = Vec::new();
        for block in run.iter().flat_map(|message| &message.content) {
            match (role, block) {
                (_, ContentBlock::Text { text: t }) if !t.is_empty() => text.push(Cow::Borrowed(t)),
                (Role::Assistant, ContentBlock::Reasoning(r)) => {
                    reasoning.extend(r.text.iter().filter(|t| !t.is_empty()).map(|t| Cow::Borrowed(t.as_str())));
                }
                // Reasoning in a user turn cannot be expressed.
                (_, ContentBlock::Text { .. }) | (Role::User, ContentBlock::Reasoning(_)) => {}
                (Role::Assistant, ContentBlock::ToolCall(call)) => calls.push(call),
                (Role::User, ContentBlock::ToolResult(tool_result)) => result(tool_result)?,
                (_, ContentBlock::ToolCall(call)) => text.push(Cow::Owned(misplaced_call(call))),
                (_, ContentBlock::ToolResult(tool_result)) => text.push(Cow::Owned(misplaced_result(tool_result))),
            }
        }
        Ok(Self { text: joined(text), calls, reasoning: joined(reasoning) })
    }
}

/// A tool call id unique across processes and calls, for a call the
/// provider sent without one: `prefix`, then the clock, a process counter
/// and the call's position, hashed (letters and digits only, which every
/// API's id pattern accepts).
pub(crate) fn synthetic_call_id(prefix: &str, index: usize, name: &str) -> String {
    use std::hash::{DefaultHasher, Hash, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};

    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut hasher = DefaultHasher::new();
    (now.as_nanos(), SEQUENCE.fetch_add(1, Ordering::Relaxed), index, name).hash(&mut hasher);
    format!("{prefix}{:016x}", hasher.finish())
}
