//! The Anthropic Messages API (`POST /v1/messages`).
//!
//! ```no_run
//! use toolloop::providers::anthropic::Anthropic;
//!
//! // ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL) from the environment:
//! let model = Anthropic::from_env()?;
//! // or everything from code:
//! let model = Anthropic::builder().api_key("sk-ant-...").model("claude-opus-4-1").max_tokens(8192).build()?;
//! # Ok::<(), toolloop::providers::ConfigError>(())
//! ```

mod convert;
// Used by tests until streaming requests are wired into the model.
#[cfg_attr(not(test), allow(dead_code))]
mod stream;
mod wire;

use super::http::{
    CallTrace, ConfigError, EnvLookup, HttpClient, HttpSettings, http_builder_methods, process_env, secret_header,
    static_header,
};
use crate::model::{BoxFuture, Model, ModelError, ModelRequest, ModelResponse};

/// The provider name, as [`Model::provider`] returns it.
pub const PROVIDER: &str = "anthropic";
/// Where requests go unless a base URL is set.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The model used unless another is set.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// `max_tokens` sent unless another is set (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";

/// A Claude model over the Anthropic Messages API.
///
/// `Debug` never shows the API key.
#[derive(Clone, Debug)]
pub struct Anthropic {
    http: HttpClient,
    model: String,
    max_tokens: u32,
    temperature: Option<f32>,
}

impl Anthropic {
    /// A builder with the defaults and nothing read from the environment.
    pub fn builder() -> AnthropicBuilder {
        AnthropicBuilder::default()
    }

    /// A client for [`DEFAULT_MODEL`] configured from `ANTHROPIC_API_KEY`
    /// (required) and `ANTHROPIC_BASE_URL` (optional). Use
    /// [`AnthropicBuilder::from_env`] to change more settings.
    pub fn from_env() -> Result<Self, ConfigError> {
        AnthropicBuilder::from_env().build()
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
        let body = convert::body(&self.model, self.max_tokens, self.temperature, &request)
            .map_err(|error| self.http.body_error(&error))?;
        let wire: wire::MessagesResponse = self.http.post_json(body).await?;
        ModelResponse::try_from(wire)
    }
}

impl Model for Anthropic {
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

/// Configures an [`Anthropic`] client.
#[derive(Clone, Debug, Default)]
pub struct AnthropicBuilder {
    http: HttpSettings,
    model: Option<String>,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
}

impl AnthropicBuilder {
    /// A builder with the API key from `ANTHROPIC_API_KEY` and the base URL
    /// from `ANTHROPIC_BASE_URL`, when they are set.
    pub fn from_env() -> Self {
        Self::from_lookup(&process_env)
    }

    pub(crate) fn from_lookup(env: EnvLookup<'_>) -> Self {
        let mut builder = Self::default();
        if let Some(key) = env("ANTHROPIC_API_KEY") {
            builder = builder.api_key(key);
        }
        if let Some(url) = env("ANTHROPIC_BASE_URL") {
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

    /// Sets the maximum output tokens (default: [`DEFAULT_MAX_TOKENS`]);
    /// [`ModelRequest::max_tokens`] overrides it per request.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the sampling temperature (default: the API's);
    /// [`ModelRequest::temperature`] overrides it per request.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Builds the client.
    pub fn build(self) -> Result<Anthropic, ConfigError> {
        let key = self.http.api_key.as_ref().ok_or(ConfigError::MissingApiKey { variable: "ANTHROPIC_API_KEY" })?;
        let headers = vec![secret_header("x-api-key", key.expose())?, static_header("anthropic-version", API_VERSION)];
        let base_url = self.http.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let http = HttpClient::new(PROVIDER, base_url, "/v1/messages", headers, &self.http, convert::error_body)?;
        Ok(Anthropic {
            http,
            model: self.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            max_tokens: self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            temperature: self.temperature,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Anthropic, AnthropicBuilder, ConfigError};
    use crate::Model;

    #[test]
    fn configuration_comes_from_the_environment() {
        let env = |name: &str| match name {
            "ANTHROPIC_API_KEY" => Some("sk-ant-secret".to_owned()),
            "ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:9/".to_owned()),
            _ => None,
        };
        let model = AnthropicBuilder::from_lookup(&env).build().unwrap();
        assert_eq!(model.endpoint(), "http://127.0.0.1:9/v1/messages");
        assert_eq!((model.provider(), model.name()), ("anthropic", super::DEFAULT_MODEL));
        assert_eq!(model.with_model("claude-haiku").name(), "claude-haiku");
        let missing = AnthropicBuilder::from_lookup(&|_| None).build().unwrap_err();
        assert!(matches!(missing, ConfigError::MissingApiKey { variable: "ANTHROPIC_API_KEY" }));
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let builder = Anthropic::builder().api_key("sk-ant-secret");
        assert!(!format!("{builder:?}").contains("sk-ant-secret"));
        let model = builder.build().unwrap();
        let debug = format!("{model:?}");
        assert!(!debug.contains("sk-ant-secret"), "{debug}");
        assert!(debug.contains("api.anthropic.com"));
    }
}
