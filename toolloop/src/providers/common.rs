//! Conversions several wire formats share.

use std::borrow::Cow;

#[cfg(any(feature = "anthropic", feature = "ollama"))]
use serde_json::{Map, Value};

#[cfg(any(feature = "openai", feature = "ollama"))]
use crate::message::ToolResult;

#[cfg(any(feature = "anthropic", feature = "ollama"))]
/// A tool call's input as a JSON object, for wire formats that only take
/// objects (Anthropic `input`, Ollama `arguments`). Arguments another
/// provider kept as raw text are parsed when they are an object, and sent
/// as `{}` otherwise; the call's error result already told the model what
/// was wrong with them.
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

#[cfg(any(feature = "openai", feature = "ollama"))]
/// A tool result as text, for wire formats without an error flag (OpenAI,
/// Ollama): error results are prefixed with `Error: ` so the model can tell.
pub(crate) fn result_text(result: &ToolResult) -> Cow<'_, str> {
    if result.is_error() { Cow::Owned(format!("Error: {}", result.content)) } else { Cow::Borrowed(&result.content) }
}
