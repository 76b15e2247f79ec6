//! What a model is told about a tool.

use std::borrow::Cow;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::schema;

/// A tool as a model sees it: name, description and input schema.
///
/// Derived tools build theirs once per type (see [`Tool::definition`](crate::Tool::definition)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name the model calls the tool by (`[a-zA-Z0-9_-]{1,64}`).
    pub name: Cow<'static, str>,
    /// What the tool does and when to use it.
    pub description: Cow<'static, str>,
    /// JSON schema of the input object, as Anthropic and Ollama take it.
    pub input_schema: Value,
    /// The same schema in OpenAI's strict shape: every object closed with
    /// `additionalProperties: false`, every property required, the ones that
    /// were optional made nullable, and keywords strict mode rejects
    /// (`default`) dropped. `None` when strict mode cannot express the input
    /// (a map with free-form keys, a value of any type): such a tool is sent
    /// without `strict` even when strict tools are asked for.
    pub strict_input_schema: Option<Value>,
    /// How long the tool may run before its call fails with
    /// [`FailureKind::TimedOut`](crate::FailureKind::TimedOut); `None` uses
    /// the tool set's default.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "duration_millis")]
    pub timeout: Option<Duration>,
}

impl ToolDefinition {
    /// A definition whose input schema comes from `T`.
    pub fn for_input<T: JsonSchema>(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::from_schema(name, description, schema::input_schema_for::<T>())
    }

    /// A definition with a hand-written input schema (for tools defined at
    /// run time). The schema should describe a JSON object.
    pub fn from_schema(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
        input_schema: Value,
    ) -> Self {
        let strict_input_schema = schema::strict(&input_schema);
        Self { name: name.into(), description: description.into(), input_schema, strict_input_schema, timeout: None }
    }

    /// Sets how long the tool may run.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The input schema in the requested shape: the strict one when it is
    /// asked for and exists (see [`is_strict`](Self::is_strict)), the plain one otherwise.
    pub fn schema(&self, strict: bool) -> &Value {
        match &self.strict_input_schema {
            Some(strict_schema) if strict => strict_schema,
            _ => &self.input_schema,
        }
    }

    /// Whether the tool is sent in strict mode when strict tools are asked for.
    pub fn is_strict(&self, strict_requested: bool) -> bool {
        strict_requested && self.strict_input_schema.is_some()
    }
}

/// Whether providers accept `name` as a tool name: 1 to 64 ASCII letters,
/// digits, `_` or `-` (the rule `#[derive(Tool)]` checks at compile time).
pub(crate) fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

mod duration_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::ref_option)] // serde's `with` hands us `&Option<_>`
    pub(super) fn serialize<S: Serializer>(value: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => serializer.serialize_some(&u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(deserializer)?.map(Duration::from_millis))
    }
}
