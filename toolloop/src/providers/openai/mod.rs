//! OpenAI Chat Completions (`POST {base}/chat/completions`), and any
//! OpenAI-compatible server (vLLM, llama.cpp server, LM Studio, `OpenRouter`,
//! Groq, ...) through its base URL.
//!
//! ```no_run
//! use toolloop::providers::openai::OpenAi;
//!
//! // OPENAI_API_KEY (and optionally OPENAI_BASE_URL) from the environment:
//! let model = OpenAi::from_env()?;
//! // a local compatible server, which needs no key:
//! let local = OpenAi::builder().base_url("http://localhost:8000/v1").model("qwen3").legacy_max_tokens(true).build()?;
//! # Ok::<(), toolloop::providers::ConfigError>(())
//! ```

mod convert;
// Used by tests until streaming requests are wired into the model.
#[cfg_attr(not(test), allow(dead_code))]
mod responses_stream;
#[cfg_attr(not(test), allow(dead_code))]
mod stream;
mod wire;

use super::http::{
    CallTrace, ConfigError, EnvLookup, HttpClient, HttpSettings, http_builder_methods, process_env, secret_header,
};
use crate::model::{BoxFuture, Model, ModelError, ModelRequest, ModelResponse};

/// The provider name, as [`Model::provider`] returns it.
pub const PROVIDER: &str = "openai";
/// Where requests go unless a base URL is set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The model used unless another is set.
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";

/// A model over OpenAI Chat Completions or a compatible server.
///
/// Tool results that failed are sent as `Error: <message>`, since the wire
/// format has no error flag. `Debug` never shows the API key.
#[derive(Clone, Debug)]
pub struct OpenAi {
    http: HttpClient,
    model: String,
    max_tokens: Option<u32>,
    legacy_max_tokens: bool,
    temperature: Option<f32>,
}

impl OpenAi {
    /// A builder with the defaults and nothing read from the environment.
    pub fn builder() -> OpenAiBuilder {
        OpenAiBuilder::default()
    }

    /// A client for [`DEFAULT_MODEL`] configured from `OPENAI_API_KEY` and
    /// `OPENAI_BASE_URL` (the key may be left out when a base URL is set).
    /// Use [`OpenAiBuilder::from_env`] to change more settings.
    pub fn from_env() -> Result<Self, ConfigError> {
        OpenAiBuilder::from_env().build()
    }

    /// The same client (key, endpoint, connection pool) for another model,
    /// for switching models mid-conversation.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// The URL requests are sent to.
    pub fn endpoint(&self) -> &str {
        self.http.url()
    }

    async fn call(&self, request: ModelRequest<'_>) -> Result<ModelResponse, ModelError> {
        let settings = convert::Settings {
            model: &self.model,
            max_tokens: self.max_tokens,
            legacy_max_tokens: self.legacy_max_tokens,
            temperature: self.temperature,
        };
        let body = convert::body(&settings, &request).map_err(|error| self.http.body_error(&error))?;
        let wire: wire::ChatResponse = self.http.post_json(body).await?;
        ModelResponse::try_from(wire)
    }
}

impl Model for OpenAi {
    fn provider(&self) -> &str {
        PROVIDER
    }

    fn name(&self) -> &str {
        &self.model
    }

    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        CallTrace::start(PROVIDER, &self.model, &request).run(self.call(request))
    }
}

/// Configures an [`OpenAi`] client.
#[derive(Clone, Debug, Default)]
pub struct OpenAiBuilder {
    http: HttpSettings,
    model: Option<String>,
    max_tokens: Option<u32>,
    legacy_max_tokens: bool,
    temperature: Option<f32>,
}

impl OpenAiBuilder {
    /// A builder with the API key from `OPENAI_API_KEY` and the base URL
    /// from `OPENAI_BASE_URL`, when they are set.
    pub fn from_env() -> Self {
        Self::from_lookup(&process_env)
    }

    pub(crate) fn from_lookup(env: EnvLookup<'_>) -> Self {
        let mut builder = Self::default();
        if let Some(key) = env("OPENAI_API_KEY") {
            builder = builder.api_key(key);
        }
        if let Some(url) = env("OPENAI_BASE_URL") {
            builder = builder.base_url(url);
        }
        builder
    }

    http_builder_methods!();

    /// Sets the model (default: [`DEFAULT_MODEL`]).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the maximum output tokens, sent as `max_completion_tokens`
    /// (default: none, the server decides); [`ModelRequest::max_tokens`]
    /// overrides it per request.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sends the maximum output tokens as the older `max_tokens` field, for
    /// compatible servers that do not know `max_completion_tokens`.
    pub fn legacy_max_tokens(mut self, legacy: bool) -> Self {
        self.legacy_max_tokens = legacy;
        self
    }

    /// Sets the sampling temperature (default: the server's);
    /// [`ModelRequest::temperature`] overrides it per request.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Builds the client. A key is required for the default base URL; a
    /// compatible server set with [`base_url`](Self::base_url) may do without.
    pub fn build(self) -> Result<OpenAi, ConfigError> {
        let mut headers = Vec::new();
        match (&self.http.api_key, &self.http.base_url) {
            (Some(key), _) => headers.push(secret_header("authorization", &format!("Bearer {}", key.expose()))?),
            (None, None) => return Err(ConfigError::MissingApiKey { variable: "OPENAI_API_KEY" }),
            (None, Some(_)) => {}
        }
        let base_url = self.http.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let http = HttpClient::new(PROVIDER, base_url, "/chat/completions", headers, &self.http, convert::error_body)?;
        Ok(OpenAi {
            http,
            model: self.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            max_tokens: self.max_tokens,
            legacy_max_tokens: self.legacy_max_tokens,
            temperature: self.temperature,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{ConfigError, OpenAi, OpenAiBuilder};
    use crate::Model;

    #[test]
    fn configuration_comes_from_the_environment() {
        let env = |name: &str| match name {
            "OPENAI_API_KEY" => Some("sk-secret".to_owned()),
            "OPENAI_BASE_URL" => Some("http://127.0.0.1:9/v1".to_owned()),
            _ => None,
        };
        let model = OpenAiBuilder::from_lookup(&env).build().unwrap();
        assert_eq!(model.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(model.with_model("gpt-other").name(), "gpt-other");
        let missing = OpenAiBuilder::from_lookup(&|_| None).build().unwrap_err();
        assert!(matches!(missing, ConfigError::MissingApiKey { variable: "OPENAI_API_KEY" }));
        // A compatible server may need no key.
        let local = |name: &str| (name == "OPENAI_BASE_URL").then(|| "http://localhost:8000/v1".to_owned());
        assert!(OpenAiBuilder::from_lookup(&local).build().is_ok());
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let model = OpenAi::builder().api_key("sk-secret").build().unwrap();
        assert!(!format!("{model:?}").contains("sk-secret"));
        assert!(!format!("{:?}", OpenAi::builder().api_key("sk-secret")).contains("sk-secret"));
    }
}
