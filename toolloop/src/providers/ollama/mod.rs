//! Ollama's chat API (`POST {host}/api/chat` with `"stream": false`).
//!
//! ```no_run
//! use toolloop::providers::ollama::Ollama;
//!
//! // OLLAMA_HOST from the environment, else http://localhost:11434:
//! let model = Ollama::from_env()?.with_model("qwen3:8b");
//! # Ok::<(), toolloop::providers::ConfigError>(())
//! ```

mod convert;
// Used by tests until streaming requests are wired into the model.
#[cfg_attr(not(test), allow(dead_code))]
mod stream;
mod wire;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::http::{CallTrace, ConfigError, EnvLookup, HttpClient, HttpSettings, http_builder_methods, process_env};
use crate::model::{BoxFuture, Model, ModelError, ModelRequest, ModelResponse};

/// The provider name, as [`Model::provider`] returns it.
pub const PROVIDER: &str = "ollama";
/// Where requests go unless a host is set.
pub const DEFAULT_HOST: &str = "http://localhost:11434";
/// The model used unless another is set.
pub const DEFAULT_MODEL: &str = "llama3.2";

/// A model served by Ollama.
///
/// Tool results that failed are sent as `Error: <message>`, since the wire
/// format has no error flag.
#[derive(Clone, Debug)]
pub struct Ollama {
    http: HttpClient,
    model: String,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    /// Numbers responses, to keep synthesised tool call ids unique.
    sequence: Arc<AtomicU64>,
}

impl Ollama {
    /// A builder with the defaults and nothing read from the environment.
    pub fn builder() -> OllamaBuilder {
        OllamaBuilder::default()
    }

    /// A client for [`DEFAULT_MODEL`] at `OLLAMA_HOST` (default
    /// [`DEFAULT_HOST`]). Use [`OllamaBuilder::from_env`] to change more settings.
    pub fn from_env() -> Result<Self, ConfigError> {
        OllamaBuilder::from_env().build()
    }

    /// The same client (endpoint, connection pool) for another model, for
    /// switching models mid-conversation.
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
        let wire: wire::ChatResponse = self.http.post_json(body).await?;
        Ok(convert::response(wire, self.sequence.fetch_add(1, Ordering::Relaxed)))
    }
}

impl Model for Ollama {
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

/// Configures an [`Ollama`] client. Ollama needs no key, but one can be set
/// for servers behind an authenticating proxy; it is sent as a bearer token.
#[derive(Clone, Debug, Default)]
pub struct OllamaBuilder {
    http: HttpSettings,
    model: Option<String>,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
}

impl OllamaBuilder {
    /// A builder with the host from `OLLAMA_HOST`, when it is set.
    pub fn from_env() -> Self {
        Self::from_lookup(&process_env)
    }

    pub(crate) fn from_lookup(env: EnvLookup<'_>) -> Self {
        match env("OLLAMA_HOST") {
            Some(host) => Self::default().base_url(host_url(&host)),
            None => Self::default(),
        }
    }

    http_builder_methods!();

    /// Sets the model (default: [`DEFAULT_MODEL`]).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the maximum output tokens (`options.num_predict`);
    /// [`ModelRequest::max_tokens`] overrides it per request.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the sampling temperature (`options.temperature`);
    /// [`ModelRequest::temperature`] overrides it per request.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Builds the client.
    pub fn build(self) -> Result<Ollama, ConfigError> {
        let mut headers = Vec::new();
        if let Some(key) = &self.http.api_key {
            headers.push(super::http::secret_header("authorization", &format!("Bearer {}", key.expose()))?);
        }
        let base_url = self.http.base_url.as_deref().unwrap_or(DEFAULT_HOST);
        let http = HttpClient::new(PROVIDER, base_url, "/api/chat", headers, &self.http, convert::error_body)?;
        Ok(Ollama {
            http,
            model: self.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            sequence: Arc::new(AtomicU64::new(0)),
        })
    }
}

/// `OLLAMA_HOST` as a URL: it is often written without a scheme
/// (`127.0.0.1:11434`) or without a port (`http://gpu-box`).
fn host_url(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    let (scheme, rest) = match host.split_once("://") {
        Some((scheme, rest)) => (scheme, rest),
        None => ("http", host),
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    let has_port = authority.rsplit_once(':').is_some_and(|(_, port)| port.parse::<u16>().is_ok());
    if has_port || scheme == "https" { format!("{scheme}://{rest}") } else { format!("{scheme}://{rest}:11434") }
}

#[cfg(test)]
mod tests {
    use super::{Ollama, OllamaBuilder, host_url};

    #[test]
    fn ollama_host_is_completed_to_a_url() {
        assert_eq!(host_url("127.0.0.1:11434"), "http://127.0.0.1:11434");
        assert_eq!(host_url("gpu-box"), "http://gpu-box:11434");
        assert_eq!(host_url("http://gpu-box/"), "http://gpu-box:11434");
        assert_eq!(host_url("https://ollama.example.com"), "https://ollama.example.com");
        assert_eq!(host_url("http://10.0.0.2:8080"), "http://10.0.0.2:8080");
    }

    #[test]
    fn an_optional_key_never_shows_in_debug_output() {
        let builder = Ollama::builder().api_key("proxy-secret");
        assert!(!format!("{builder:?}").contains("proxy-secret"));
        assert!(!format!("{:?}", builder.build().unwrap()).contains("proxy-secret"));
    }

    #[test]
    fn configuration_comes_from_the_environment() {
        let env = |name: &str| (name == "OLLAMA_HOST").then(|| "127.0.0.1:9".to_owned());
        let model = OllamaBuilder::from_lookup(&env).build().unwrap();
        assert_eq!(model.endpoint(), "http://127.0.0.1:9/api/chat");
        let default = OllamaBuilder::from_lookup(&|_| None).build().unwrap();
        assert_eq!(default.endpoint(), "http://localhost:11434/api/chat");
    }
}
