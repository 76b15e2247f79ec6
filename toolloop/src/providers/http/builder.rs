//! Configuring an [`HttpModel`]: the settings every wire format shares.
//! A provider module adds setters for its format's own settings on
//! `HttpModelBuilder<ItsFormat>`.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};

use super::client::{HttpClient, HttpSettings};
use super::format::{ApiKey, WireFormat};
use super::model::HttpModel;
use super::retry::RetryPolicy;
use super::secret::Secret;
use super::shared::Shared;
use super::transport::Recorder;
use super::{DEFAULT_IDLE_TIMEOUT, DEFAULT_TIMEOUT, EnvLookup, process_env};
use crate::build_error::BuildError;
use crate::reasoning::ReasoningConfig;

/// Configures an [`HttpModel`]; made by [`HttpModel::builder`] (for example
/// `Anthropic::builder()`) or [`HttpModel::builder_from_env`]. Setters for
/// one provider's own settings (`prompt_cache`, `vertex`, `num_ctx`, ...)
/// exist on that provider's builder only.
///
/// `Debug` never shows the API key or header values.
#[derive(Clone, Debug)]
pub struct HttpModelBuilder<W> {
    pub(super) http: HttpSettings,
    model: Option<String>,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    reasoning: Option<ReasoningConfig>,
    /// The wire format's own settings, set by its provider module's setters.
    pub(crate) format: W,
}

impl<W: WireFormat> Default for HttpModelBuilder<W> {
    fn default() -> Self {
        Self {
            http: HttpSettings {
                api_key: None,
                base_url: None,
                timeout: DEFAULT_TIMEOUT,
                retry: RetryPolicy::default(),
                idle_timeout: DEFAULT_IDLE_TIMEOUT,
                headers: Vec::new(),
                max_response_bytes: super::DEFAULT_MAX_RESPONSE_BYTES,
                cassette: None,
            },
            model: None,
            max_tokens: None,
            temperature: None,
            reasoning: None,
            format: W::default(),
        }
    }
}

impl<W: WireFormat> HttpModel<W> {
    /// A builder with the defaults and nothing read from the environment.
    pub fn builder() -> HttpModelBuilder<W> {
        HttpModelBuilder::default()
    }

    /// A builder with the API key and base URL from the provider's
    /// environment variables, when they are set (see
    /// [`providers`](crate::providers) for their names), for settings on
    /// top: `Anthropic::builder_from_env().model("claude-opus-4-1").build()?`.
    pub fn builder_from_env() -> HttpModelBuilder<W> {
        Self::builder_from_lookup(&process_env)
    }

    /// A builder configured from the environment `env` gives.
    pub(crate) fn builder_from_lookup(env: EnvLookup<'_>) -> HttpModelBuilder<W> {
        let mut builder = HttpModelBuilder::default();
        if let ApiKey::Required(variable) | ApiKey::RequiredUnlessBaseUrl(variable) = W::API_KEY
            && let Some(key) = std::iter::once(variable).chain(W::API_KEY_ALIASES.iter().copied()).find_map(env)
        {
            builder = builder.api_key(key);
        }
        if let Some(url) = env(W::BASE_URL_VARIABLE) {
            builder = builder.base_url(W::base_url_from_env(&url));
        }
        builder
    }

    /// A model for the provider's default model configured from its
    /// environment variables ([`builder_from_env`](Self::builder_from_env)):
    /// fails when the API needs a key and none is set.
    pub fn from_env() -> Result<Self, BuildError> {
        Self::builder_from_env().build()
    }
}

impl<W: WireFormat> HttpModelBuilder<W> {
    /// Sets the API key (it is never printed: `Debug` shows `<redacted>`).
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.http.api_key = Some(Secret::new(api_key));
        self
    }

    /// Sets the base URL, for proxies, gateways and compatible servers.
    ///
    /// A user and password in it (`http://user:pass@host`) are sent as an
    /// HTTP Basic `Authorization` header, unless the API key goes in
    /// `Authorization` too (OpenAI, Ollama with a key), in which case the
    /// key's header wins. The password is never shown: `Debug`,
    /// [`HttpModel::endpoint`] and errors print `user:***@host`.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.http.base_url = Some(base_url.into());
        self
    }

    /// Sets the model (default: the provider module's `DEFAULT_MODEL`).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the maximum output tokens (default: the provider module's
    /// `DEFAULT_MAX_TOKENS` where the API requires one, else the server's);
    /// [`ModelRequest::max_tokens`](crate::ModelRequest::max_tokens)
    /// overrides it per request.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the sampling temperature (default: the server's);
    /// [`ModelRequest::temperature`](crate::ModelRequest::temperature)
    /// overrides it per request.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Turns reasoning on (or explicitly off) for every request (default:
    /// the API's own default, nothing sent);
    /// [`ModelRequest::reasoning`](crate::ModelRequest::reasoning) overrides
    /// it per request. Each provider maps the setting to its API (Anthropic
    /// `thinking`, OpenAI `reasoning` / `reasoning_effort`, Ollama `think`)
    /// and a setting its API rules out for the request (thinking with a
    /// temperature other than 1, a budget not below `max_tokens`) fails the
    /// call with a [`ModelErrorKind::InvalidRequest`](crate::model::ModelErrorKind)
    /// error before anything is sent.
    pub fn reasoning(mut self, reasoning: impl Into<ReasoningConfig>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// Sets the timeout: how long one HTTP attempt may take, from connecting
    /// to the last byte of the response (default: [`DEFAULT_TIMEOUT`]). Each
    /// retry gets its own; in this crate a *timeout* always bounds one
    /// operation like this.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.http.timeout = timeout;
        self
    }

    /// Sets the idle timeout of streamed calls ([`Model::stream`](crate::Model::stream)):
    /// how long the body may send nothing once the server answered, before
    /// the call fails with [`ModelErrorKind::Timeout`](crate::model::ModelErrorKind::Timeout)
    /// (default: [`DEFAULT_IDLE_TIMEOUT`](super::DEFAULT_IDLE_TIMEOUT)).
    /// `Duration::MAX` waits forever; zero is rejected by `build()`.
    /// A stall before the stream's first content is retried once at most
    /// (see [`retry_policy`](Self::retry_policy)), so a call that stalls
    /// fails after about twice this.
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.http.idle_timeout = idle;
        self
    }

    /// Sets how failed requests are retried (default: [`RetryPolicy::default`]).
    /// A streamed call is retried until its first content: a failure status,
    /// or an error event, a cut connection or a stall after the server
    /// answered but before any text, reasoning or tool call came (empty
    /// deltas and usage reports are not content), is retried as the policy
    /// says — a stall once at most; a failure after content is not, since
    /// part of the answer has been shown.
    pub fn retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.http.retry = retry;
        self
    }

    /// Sets the largest response body read, in bytes (default:
    /// [`DEFAULT_MAX_RESPONSE_BYTES`](super::DEFAULT_MAX_RESPONSE_BYTES), 32 MiB).
    /// A larger body fails the call with
    /// [`ModelErrorKind::ResponseTooLarge`](crate::model::ModelErrorKind::ResponseTooLarge)
    /// as soon as the limit is passed (or announced), so memory stays bounded.
    /// A streamed response counts all its bytes against it too.
    pub fn max_response_bytes(mut self, max_response_bytes: u64) -> Self {
        self.http.max_response_bytes = max_response_bytes;
        self
    }

    /// Adds a header to every request, for gateways and proxies (for
    /// example the `HTTP-Referer` some gateways ask for). Its value is never
    /// printed. A cassette also keeps the value out of the file wherever it
    /// turns up when the header's name marks a credential (one of its words,
    /// split at `-`, `_` and camel case, is `auth`, `authorization`,
    /// `authentication`, `key`, `apikey`, `token`, `secret`, `password`,
    /// `cookie`, `session`, `credential` or `signature`); other values are
    /// recorded as they are.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http.headers.push((name.into(), Secret::new(value)));
        self
    }

    /// Puts `recorder` between the model and the network (see
    /// [`cassette`](Self::cassette), in the `testing` module).
    pub(crate) fn recorder(mut self, recorder: Arc<dyn Recorder>) -> Self {
        self.http.cassette = Some(recorder);
        self
    }

    /// Builds the model. Fails without an API key when the API needs one
    /// (OpenAI-compatible servers given by [`base_url`](Self::base_url) may
    /// do without, and so does a model replaying a
    /// [`cassette`](Self::cassette)), and on an invalid base URL or header.
    pub fn build(mut self) -> Result<HttpModel<W>, BuildError> {
        for (setting, value) in [("timeout", self.http.timeout), ("idle_timeout", self.http.idle_timeout)] {
            if value.is_zero() {
                return Err(BuildError::ZeroTimeout { setting });
            }
        }
        self.http.retry = self.http.retry.with_default_retry_after_cap(W::MAX_RETRY_AFTER);
        let mut headers = self.format.headers();
        match (&self.http.api_key, W::API_KEY) {
            (Some(key), _) => {
                let (name, prefix) = W::KEY_HEADER;
                headers.push(secret_header(name, &format!("{prefix}{}", key.expose()))?);
            }
            // A replayed call is never sent: no key is needed (CI has none).
            (None, _) if self.http.cassette.as_ref().is_some_and(|tape| tape.is_replaying()) => {}
            (None, _) if self.format.authenticates() => {}
            (None, ApiKey::Required(variable)) => return Err(BuildError::MissingApiKey { variable }),
            (None, ApiKey::RequiredUnlessBaseUrl(variable)) if self.http.base_url.is_none() => {
                return Err(BuildError::MissingApiKey { variable });
            }
            (None, _) => {}
        }
        let base_url = self.http.base_url.as_deref().unwrap_or(W::DEFAULT_BASE_URL);
        let http = HttpClient::new(
            W::PROVIDER,
            (base_url, &self.format.path()),
            headers,
            &self.http,
            W::FRAMING,
            W::error_body,
        )?;
        Ok(HttpModel {
            shared: Arc::new(Shared { http, format: self.format, renderer: crate::model::body_cache::new_renderer() }),
            model: self.model.unwrap_or_else(|| W::DEFAULT_MODEL.to_owned()),
            max_tokens: self.max_tokens.or(W::DEFAULT_MAX_TOKENS),
            temperature: self.temperature,
            reasoning: self.reasoning,
        })
    }
}

/// A header whose value is secret: reqwest will not print it.
fn secret_header(name: &'static str, value: &str) -> Result<(HeaderName, HeaderValue), BuildError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| BuildError::InvalidApiKey)?;
    value.set_sensitive(true);
    Ok((HeaderName::from_static(name), value))
}
