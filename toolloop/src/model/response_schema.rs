//! The JSON schema a model's final text must follow: native structured
//! output, written by each wire format in its own field.

use std::borrow::Cow;

use serde_json::Value;

/// The schema a model's answer must follow, sent as the provider's native
/// structured-output setting: OpenAI Chat Completions `response_format`
/// (`json_schema`), the Responses API `text.format`, Anthropic
/// `output_config.format`, Ollama `format`, Gemini `responseJsonSchema`.
///
/// The model may still call tools; only its final answer, as text, follows
/// the schema. A typed agent in [`OutputMode::Native`](crate::agent::OutputMode::Native)
/// sends its output type's; see [`Model::response_schema_support`](crate::Model::response_schema_support)
/// for what each model can take.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ResponseSchema {
    /// The schema's name (OpenAI requires one: letters, digits, `_` and `-`, up to 64).
    pub name: Cow<'static, str>,
    /// What the answer is, for the model (OpenAI sends it; others leave it out).
    pub description: Option<String>,
    /// The schema as the output type states it.
    pub schema: Value,
    /// The same schema in OpenAI's strict shape (every object closed, every
    /// property required, optional ones nullable), as for strict tools;
    /// `None` when strict mode cannot express it (a map with free keys, a
    /// value of any type), and then the schema is sent with `strict: false`.
    pub strict_schema: Option<Value>,
}

impl ResponseSchema {
    /// A schema named `name`; its strict shape is derived from it.
    pub fn new(name: impl Into<Cow<'static, str>>, schema: Value) -> Self {
        let strict_schema = crate::tool::schema::strict(&schema);
        Self { name: name.into(), description: None, schema, strict_schema }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The schema to send and whether it is strict: the strict shape when
    /// there is one.
    pub fn strict_or_plain(&self) -> (&Value, bool) {
        match &self.strict_schema {
            Some(strict) => (strict, true),
            None => (&self.schema, false),
        }
    }
}

/// Whether a model can be sent a [`ResponseSchema`], as
/// [`Model::response_schema_support`](crate::Model::response_schema_support) says.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseSchemaSupport {
    /// The model follows the schema and may still call tools (OpenAI Chat
    /// Completions and Responses, Anthropic on the models that support it,
    /// Gemini 3 and later).
    WithTools,
    /// The model follows the schema only in requests that offer no tools
    /// (Ollama: the schema's grammar leaves no room for a tool call; Gemini
    /// before 3: the API rejects a JSON answer beside function declarations).
    WithoutTools,
    /// The model cannot take this schema; the reason says why.
    Unsupported(String),
    /// The model does not say (the default for models defined outside this crate).
    Unknown,
}
