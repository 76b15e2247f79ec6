//! What a tool returns.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

/// A tool's output: any serialisable value.
///
/// The model sees text: a string output stays the string itself (not a
/// quoted JSON string), anything else is rendered as compact JSON. The
/// structured value stays available to terminal checks and hooks.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ToolOutput {
    value: Value,
}

impl ToolOutput {
    /// Output holding `value`.
    pub fn new(value: Value) -> Self {
        Self { value }
    }

    /// Serialises `output`.
    pub fn from_serialize<T: Serialize + ?Sized>(output: &T) -> Result<Self, serde_json::Error> {
        serde_json::to_value(output).map(Self::new)
    }

    /// The output as a JSON value.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The output as a JSON value, by value.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The text the model sees.
    pub fn text(&self) -> Cow<'_, str> {
        match &self.value {
            Value::String(text) => Cow::Borrowed(text),
            other => Cow::Owned(other.to_string()),
        }
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        Self::new(Value::String(text))
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        Self::new(Value::from(text))
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        Self::new(value)
    }
}
