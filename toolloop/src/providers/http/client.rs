//! The HTTP client of one model: where to POST, with which headers, how
//! long to wait and how to retry.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::de::DeserializeOwned;

use super::ConfigError;
use super::body::WireBody;
use super::error::{self, ErrorBodyParser};
use super::retry::{self, RetryPolicy};
use super::secret::Secret;
use crate::model::{ModelError, ModelErrorKind};

/// The settings of the HTTP client itself.
#[derive(Clone, Debug)]
pub(crate) struct HttpSettings {
    pub(crate) api_key: Option<Secret>,
    pub(crate) base_url: Option<String>,
    pub(crate) timeout: Duration,
    pub(crate) retry: RetryPolicy,
    /// How long a streamed body may send nothing.
    pub(crate) idle_timeout: Duration,
    /// Extra headers for every request (gateways, proxies).
    pub(crate) headers: Vec<(String, Secret)>,
}

/// A configured endpoint of one provider: where to POST, with which headers,
/// how long to wait and how to retry.
#[derive(Clone)]
pub(crate) struct HttpClient {
    provider: &'static str,
    client: reqwest::Client,
    url: String,
    /// `url`, parsed once rather than on every request.
    parsed_url: reqwest::Url,
    headers: HeaderMap,
    timeout: Duration,
    retry: RetryPolicy,
    idle_timeout: Duration,
    parse_error: ErrorBodyParser,
}

impl fmt::Debug for HttpClient {
    // Headers are left out: one of them holds the API key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("url", &self.url)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// One failed attempt and what to do about it.
struct Failure {
    error: ModelError,
    retryable: bool,
    server_wait: Option<Duration>,
}

impl HttpClient {
    /// A client sending `POST` requests to `base_url` + `path`, sending `headers` (the
    /// secret ones marked sensitive) on every request.
    pub(crate) fn new(
        provider: &'static str,
        base_url: &str,
        path: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
        settings: &HttpSettings,
        parse_error: ErrorBodyParser,
    ) -> Result<Self, ConfigError> {
        let url = endpoint_url(base_url, path)?;
        let parsed_url = reqwest::Url::parse(&url)
            .map_err(|error| ConfigError::InvalidBaseUrl { url: base_url.to_owned(), reason: error.to_string() })?;
        let mut map = HeaderMap::new();
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        map.insert(ACCEPT, HeaderValue::from_static("application/json"));
        for (name, value) in headers {
            map.insert(name, value);
        }
        for (name, value) in &settings.headers {
            let invalid = || ConfigError::InvalidHeader { name: name.clone() };
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
            // Extra headers often carry gateway credentials: never printed.
            let mut value = HeaderValue::from_str(value.expose()).map_err(|_| invalid())?;
            value.set_sensitive(true);
            map.insert(header, value);
        }
        Ok(Self {
            provider,
            client: new_client()?,
            url,
            parsed_url,
            headers: map,
            timeout: settings.timeout,
            retry: settings.retry,
            idle_timeout: settings.idle_timeout,
            parse_error,
        })
    }

    /// The full URL requests go to.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// POSTs `body`, a JSON document, retrying as the policy says, and
    /// parses the success response as `T`.
    pub(crate) async fn post_json<T: DeserializeOwned>(&self, body: WireBody) -> Result<T, ModelError> {
        let bytes = self.send(&body).await?;
        serde_json::from_slice(&bytes).map_err(|error| error::malformed(self.provider, &error, &bytes))
    }

    /// The error for a request body that could not be written.
    /// Posts `body` for a streamed response: retries as for
    /// [`post_json`](Self::post_json) until a success status, then hands
    /// over the body's bytes, each wait for the next bounded by the idle
    /// timeout. Failures after the first byte are not retried here: the
    /// consumer has seen events by then.
    pub(crate) async fn post_stream(
        &self,
        body: WireBody,
    ) -> Result<impl futures_util::Stream<Item = Result<Bytes, ModelError>> + Send + Unpin + use<>, ModelError> {
        let response = self.with_retries(|| self.open(body.to_http(), true)).await?;
        let bytes = super::sse::body_bytes(self.provider, response);
        Ok(Box::pin(super::idle::idle_timeout(self.provider, Box::pin(bytes), self.idle_timeout)))
    }

    pub(crate) fn body_error(&self, error: &serde_json::Error) -> ModelError {
        ModelError::new(ModelErrorKind::Other, self.provider, format!("the request could not be serialised: {error}"))
    }

    async fn send(&self, body: &WireBody) -> Result<Bytes, ModelError> {
        // The body's chunks are shared: a retry copies nothing.
        self.with_retries(|| self.attempt(body.to_http())).await
    }

    async fn with_retries<T, F>(&self, mut attempt: impl FnMut() -> F) -> Result<T, ModelError>
    where
        F: Future<Output = Result<T, Failure>>,
    {
        let mut retry = 0;
        loop {
            let failure = match attempt().await {
                Ok(bytes) => return Ok(bytes),
                Err(failure) => failure,
            };
            if !failure.retryable || retry >= self.retry.max_retries() {
                return Err(failure.error.with_attempts(retry + 1));
            }
            let delay = self.retry.delay(retry, failure.server_wait);
            tracing::warn!(
                provider = self.provider,
                attempt = retry + 1,
                error = %failure.error,
                retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                "model call failed; retrying",
            );
            // Dropping the call's future drops this sleep: cancellation interrupts the wait.
            tokio::time::sleep(delay).await;
            retry += 1;
        }
    }

    async fn attempt(&self, body: reqwest::Body) -> Result<Bytes, Failure> {
        let response = self.open(body, false).await?;
        response.bytes().await.map_err(|e| self.transport(&e))
    }

    fn transport(&self, error: &reqwest::Error) -> Failure {
        Failure { error: error::transport_error(self.provider, error), retryable: true, server_wait: None }
    }

    /// Sends `body` and waits for a success status; the body of a failure
    /// is read for its error.
    async fn open(&self, body: reqwest::Body, stream: bool) -> Result<reqwest::Response, Failure> {
        let mut request = self.client.post(self.parsed_url.clone()).headers(self.headers.clone()).body(body);
        if stream {
            request = request.header(ACCEPT, HeaderValue::from_static("text/event-stream, application/x-ndjson"));
        }
        let response = request.timeout(self.timeout).send().await.map_err(|e| self.transport(&e))?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(response);
        }
        let headers = response.headers().clone();
        let bytes = response.bytes().await.map_err(|e| self.transport(&e))?;
        let server_wait = retry::server_wait(&headers);
        let request_id =
            ["request-id", "x-request-id"].iter().find_map(|name| headers.get(*name)?.to_str().ok()).map(str::to_owned);
        let error = error::status_error(self.provider, status, &bytes, self.parse_error)
            .with_retry_after(server_wait)
            .with_request_id(request_id);
        let retryable = retry::should_retry_header(&headers).unwrap_or_else(|| retry::status_is_retryable(status));
        Err(Failure { error, retryable, server_wait })
    }
}

fn endpoint_url(base_url: &str, path: &str) -> Result<String, ConfigError> {
    let invalid = |reason: &str| ConfigError::InvalidBaseUrl { url: base_url.to_owned(), reason: reason.to_owned() };
    let parsed = reqwest::Url::parse(base_url).map_err(|error| invalid(&error.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    Ok(format!("{}{path}", base_url.trim_end_matches('/')))
}

/// A reqwest client speaking HTTP/1.1 over rustls with the `ring` crypto
/// provider and the platform's certificate verifier. The TLS configuration is
/// built once per process; each provider gets its own client (and connection
/// pool), because pooled connections belong to the runtime that opened them.
pub(super) fn new_client() -> Result<reqwest::Client, ConfigError> {
    static TLS: std::sync::OnceLock<Result<rustls::ClientConfig, String>> = std::sync::OnceLock::new();
    let tls = TLS.get_or_init(|| tls_config().map_err(|e| e.to_string())).clone().map_err(ConfigError::Client)?;
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(concat!("toolloop/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| ConfigError::Client(error.to_string()))
}

fn tls_config() -> Result<rustls::ClientConfig, rustls::Error> {
    use rustls_platform_verifier::BuilderVerifierExt as _;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tls)
}

#[cfg(test)]
mod tests {
    use super::{ConfigError, endpoint_url, new_client};

    #[test]
    fn endpoint_urls_join_without_double_slashes() {
        assert_eq!(
            endpoint_url("https://api.openai.com/v1/", "/chat/completions").unwrap(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(endpoint_url("http://127.0.0.1:8080", "/api/chat").unwrap(), "http://127.0.0.1:8080/api/chat");
        assert!(matches!(endpoint_url("ftp://x", "/a"), Err(ConfigError::InvalidBaseUrl { .. })));
        assert!(matches!(endpoint_url("not a url", "/a"), Err(ConfigError::InvalidBaseUrl { .. })));
    }

    #[test]
    fn the_tls_client_builds_without_a_process_wide_crypto_provider() {
        new_client().unwrap();
        assert!(rustls::crypto::CryptoProvider::get_default().is_none());
    }
}
