//! The HTTP client of one model: where to POST, with which headers, how
//! long to wait and how to retry.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::de::DeserializeOwned;

use super::body::WireBody;
use super::error::{self, ErrorBodyParser};
use super::format::Framing;
use super::retry::{self, RetryPolicy};
use super::secret::{Secret, is_credential, redact_url};
use super::transport::{Incoming, Network, Outgoing, Recorder, Transport};
use crate::build_error::BuildError;
use crate::model::{ModelError, ModelErrorKind};

/// The largest response body read by default: far above any real model
/// response (a long answer with tool calls is well under 1 MiB), low enough
/// that a misbehaving server cannot exhaust memory.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 32 * 1024 * 1024;

/// The settings of the HTTP client itself.
#[derive(Clone)]
pub(crate) struct HttpSettings {
    pub(crate) api_key: Option<Secret>,
    pub(crate) base_url: Option<String>,
    pub(crate) timeout: Duration,
    pub(crate) retry: RetryPolicy,
    /// How long a streamed body may send nothing.
    pub(crate) idle_timeout: Duration,
    /// Extra headers for every request (gateways, proxies).
    pub(crate) headers: Vec<(String, Secret)>,
    pub(crate) max_response_bytes: u64,
    /// Records or replays every exchange instead of (only) sending it.
    pub(crate) cassette: Option<Arc<dyn Recorder>>,
}

impl fmt::Debug for HttpSettings {
    // The base URL may hold a password (`http://user:pass@host`): shown redacted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSettings")
            .field("api_key", &self.api_key)
            .field("base_url", &self.base_url.as_deref().map(redact_url))
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("idle_timeout", &self.idle_timeout)
            .field("headers", &self.headers)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("cassette", &self.cassette)
            .finish()
    }
}

/// A configured endpoint of one provider: where to POST, with which headers,
/// how long to wait and how to retry.
#[derive(Clone)]
pub(crate) struct HttpClient {
    provider: &'static str,
    /// Where requests go: the network, or a cassette.
    transport: Arc<dyn Transport>,
    framing: Framing,
    /// The URL with any password redacted: what `Debug` and `endpoint()` show.
    url: String,
    /// `url`, parsed once rather than on every request, without its
    /// userinfo (sent as basic auth: see [`new`](Self::new)).
    parsed_url: reqwest::Url,
    headers: HeaderMap,
    timeout: Duration,
    retry: RetryPolicy,
    /// Whether a cassette replays the exchanges: retries then wait for nothing.
    replaying: bool,
    idle_timeout: Duration,
    max_response_bytes: u64,
    parse_error: ErrorBodyParser,
    /// The last call URL built (see [`call_url`](Self::call_url)) and the
    /// suffix it was built for: a model's calls name the same one.
    last_call_url: Arc<std::sync::Mutex<Option<(String, reqwest::Url)>>>,
    /// How many calls read whole are in flight on this client (and its clones).
    in_flight: Arc<AtomicUsize>,
}

/// One call counted in [`HttpClient::in_flight`] until it leaves (or is dropped).
struct InFlight<'a>(Option<&'a AtomicUsize>);

impl<'a> InFlight<'a> {
    fn enter(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(Some(count))
    }

    /// Stops counting this call; how many others are in flight.
    fn leave(mut self) -> usize {
        self.0.take().map_or(0, |count| count.fetch_sub(1, Ordering::Relaxed) - 1)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(count) = self.0.take() {
            count.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl fmt::Debug for HttpClient {
    // Headers are left out: one of them holds the API key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("url", &self.url)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("max_response_bytes", &self.max_response_bytes)
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
    /// secret ones marked sensitive) on every request; streamed success
    /// bodies are framed as `framing` says.
    pub(crate) fn new(
        provider: &'static str,
        (base_url, path): (&str, &str),
        headers: Vec<(HeaderName, HeaderValue)>,
        settings: &HttpSettings,
        framing: Framing,
        parse_error: ErrorBodyParser,
    ) -> Result<Self, BuildError> {
        let url = endpoint_url(base_url, path)?;
        let parsed_url = reqwest::Url::parse(&url)
            .map_err(|error| BuildError::InvalidBaseUrl { url: redact_url(base_url), reason: error.to_string() })?;
        let mut map = HeaderMap::new();
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        map.insert(ACCEPT, HeaderValue::from_static("application/json"));
        for (name, value) in headers {
            map.insert(name, value);
        }
        for (name, value) in &settings.headers {
            let invalid = || BuildError::InvalidHeader { name: name.clone() };
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
            // Extra headers often carry gateway credentials: never printed.
            let mut value = HeaderValue::from_str(value.expose()).map_err(|_| invalid())?;
            value.set_sensitive(true);
            map.insert(header, value);
        }
        let client = new_client()?;
        // A password in the URL is sent as basic auth (reqwest's `post`
        // takes it out of the URL), unless the headers authorize otherwise:
        // worked out once here, not for every request.
        let template = client
            .post(parsed_url.clone())
            .build()
            .map_err(|error| BuildError::InvalidBaseUrl { url: redact_url(base_url), reason: error.to_string() })?;
        if let Some(basic) = template.headers().get(AUTHORIZATION)
            && !map.contains_key(AUTHORIZATION)
        {
            map.insert(AUTHORIZATION, basic.clone());
        }
        let network = Network::new(client);
        let transport: Arc<dyn Transport> = match &settings.cassette {
            Some(recorder) => Arc::clone(recorder).transport(network, secrets(settings, &parsed_url)),
            None => Arc::new(network),
        };
        let parsed_url = template.url().clone();
        Ok(Self {
            provider,
            transport,
            framing,
            url: redact_url(&url),
            parsed_url,
            headers: map,
            timeout: settings.timeout,
            retry: settings.retry,
            replaying: settings.cassette.as_ref().is_some_and(|recorder| recorder.is_replaying()),
            idle_timeout: settings.idle_timeout,
            max_response_bytes: settings.max_response_bytes,
            parse_error,
            last_call_url: Arc::default(),
            in_flight: Arc::default(),
        })
    }

    /// Whether a cassette replays the exchanges (nothing is sent).
    pub(crate) fn replaying(&self) -> bool {
        self.replaying
    }

    /// How failed calls are retried.
    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// How long to wait before retry number `retry + 1`, as the policy
    /// and the server (`server_wait`) say; nothing when a cassette replays
    /// the exchanges (no server is there to wait for).
    pub(crate) fn retry_delay(&self, retry: u32, server_wait: Option<Duration>) -> Duration {
        if self.replaying { Duration::ZERO } else { self.retry.delay(retry, server_wait) }
    }

    /// The full URL requests go to, its password (if any) redacted.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The URL of one call: the endpoint, followed by `suffix` when the
    /// call names more in its URL (Gemini's `/{model}:generateContent`).
    pub(crate) fn call_url(&self, suffix: Option<&str>) -> Result<Cow<'_, reqwest::Url>, ModelError> {
        let Some(suffix) = suffix else { return Ok(Cow::Borrowed(&self.parsed_url)) };
        let mut last = self.last_call_url.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((built_for, url)) = last.as_ref()
            && built_for == suffix
        {
            return Ok(Cow::Owned(url.clone()));
        }
        let joined = format!("{}{suffix}", self.parsed_url.as_str().trim_end_matches('/'));
        let url = reqwest::Url::parse(&joined).map_err(|error| {
            let message = format!("invalid request URL `{}`: {error}", redact_url(&joined));
            ModelError::new(ModelErrorKind::InvalidRequest, self.provider, message)
        })?;
        *last = Some((suffix.to_owned(), url.clone()));
        Ok(Cow::Owned(url))
    }

    /// POSTs `body`, a JSON document, to `url` (see [`call_url`](Self::call_url)),
    /// retrying as the policy says, and parses the success response as `T`.
    /// `extra` headers go with this request only (a beta flag the request's
    /// settings need, say).
    pub(crate) async fn post_json<T: DeserializeOwned>(
        &self,
        url: &reqwest::Url,
        body: WireBody,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Result<T, ModelError> {
        let bytes = self.send(url, &body, extra).await?;
        serde_json::from_slice(&bytes).map_err(|error| error::malformed(self.provider, &error, &bytes))
    }

    /// Posts `body` for a streamed response: retries as for
    /// [`post_json`](Self::post_json) until a success status, then hands
    /// over the body's bytes, each wait for the next bounded by the idle
    /// timeout. Failures in the body are not retried here: the model
    /// retries those before the first content (`open_stream_retrying`).
    pub(crate) async fn post_stream(
        &self,
        url: &reqwest::Url,
        body: WireBody,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Result<impl futures_util::Stream<Item = Result<Bytes, ModelError>> + Send + Unpin + use<>, ModelError> {
        let response = self.with_retries(|| self.open(url, &body, extra, true)).await?;
        // The response size limit holds for a stream as a whole, as for a
        // body read at once: memory stays bounded whatever the server sends.
        let (idle, limit) = (self.idle_timeout, self.max_response_bytes);
        Ok(Box::pin(super::bounded::bounded_body(self.provider, response.body, idle, limit)))
    }

    /// The error for a request body that could not be written.
    pub(crate) fn body_error(&self, error: &serde_json::Error) -> ModelError {
        ModelError::new(ModelErrorKind::Other, self.provider, format!("the request could not be serialised: {error}"))
    }

    async fn send(
        &self,
        url: &reqwest::Url,
        body: &WireBody,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Result<Bytes, ModelError> {
        let others = InFlight::enter(&self.in_flight);
        // The retry loop of `with_retries`, written out: one layer of
        // futures less on every call. The body's chunks are shared: a
        // retry copies nothing.
        let mut retry = 0;
        let bytes = loop {
            let failure = match self.open(url, body, extra, false).await {
                Ok(response) => match self.read_body(response).await {
                    Ok(bytes) => break bytes,
                    Err(failure) => failure,
                },
                Err(failure) => failure,
            };
            // Boxed: the wait would otherwise size every call's future.
            Box::pin(tokio::time::sleep(self.retry_wait(failure, retry)?)).await;
            retry += 1;
        };
        // The connection goes back to the pool in a task of its own, woken
        // as the body ends. While other calls are in flight, yielding once
        // lets it run before this conversation sends its next request:
        // otherwise a loop whose tools answer at once finds no idle
        // connection (the others hold theirs) and opens another, about two
        // per conversation in flight, each with its buffers. Alone, the
        // next request finds the connection of the one before: no yield.
        if others.leave() > 0 {
            tokio::task::yield_now().await;
        }
        Ok(bytes)
    }

    /// Runs `attempt` until it succeeds or fails for good, waiting between
    /// tries as the retry policy (and the server) says.
    async fn with_retries<T, F>(&self, mut attempt: impl FnMut() -> F) -> Result<T, ModelError>
    where
        F: Future<Output = Result<T, Failure>>,
    {
        let mut retry = 0;
        loop {
            let failure = match attempt().await {
                Ok(success) => return Ok(success),
                Err(failure) => failure,
            };
            // Dropping the call's future drops this sleep: cancellation interrupts the wait.
            tokio::time::sleep(self.retry_wait(failure, retry)?).await;
            retry += 1;
        }
    }

    /// How long to wait before retry number `retry + 1` after `failure`,
    /// or the error to fail with when it is not retried.
    fn retry_wait(&self, failure: Failure, retry: u32) -> Result<Duration, ModelError> {
        if !failure.retryable || retry >= self.retry.max_retries() {
            return Err(failure.error.with_attempts(retry + 1));
        }
        let delay = self.retry_delay(retry, failure.server_wait);
        tracing::warn!(
            provider = self.provider,
            attempt = retry + 1,
            error = %failure.error,
            retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            "model call failed; retrying",
        );
        Ok(delay)
    }

    /// Sends `body` and waits for a success status, whose response (body
    /// unread) it returns; the body of a failure is read for its error.
    /// `stream` asks for an event stream.
    async fn open(
        &self,
        url: &reqwest::Url,
        body: &WireBody,
        extra: &[(HeaderName, HeaderValue)],
        stream: bool,
    ) -> Result<Incoming, Failure> {
        let transport = |error: ModelError| Failure { retryable: error.is_retryable(), error, server_wait: None };
        let mut request_headers = self.headers.clone();
        for (name, value) in extra {
            request_headers.append(name.clone(), value.clone());
        }
        if stream {
            request_headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream, application/x-ndjson"));
        }
        let request = Outgoing {
            provider: self.provider,
            url,
            headers: request_headers,
            body,
            stream,
            framing: self.framing,
            timeout: self.timeout,
        };
        let response = if stream {
            // A stream may rightly run longer than the timeout (Anthropic's
            // long outputs must stream because they do): the timeout bounds
            // the wait for the answer's head, and the idle timeout each wait
            // for more of its body.
            tokio::time::timeout(self.timeout, self.transport.send(request)).await.map_err(|_| self.timed_out())?
        } else {
            // The transport bounds the whole exchange, body included.
            self.transport.send(request).await
        }
        .map_err(transport)?;
        let status = response.status;
        if (300..400).contains(&status) {
            let error = redirect_error(self.provider, status, &response.headers);
            return Err(Failure { error, retryable: false, server_wait: None });
        }
        if (200..300).contains(&status) {
            return Ok(response);
        }
        // Boxed: the error path's state would otherwise size the future of
        // every call (and so the memory of every call in flight).
        Err(Box::pin(self.failure(response, stream)).await)
    }

    /// What a failure status says: the error read from its body, whether
    /// and when to retry (or the failure to read that body).
    async fn failure(&self, response: Incoming, stream: bool) -> Failure {
        let status = response.status;
        let headers = response.headers.clone();
        let bytes = if stream {
            tokio::time::timeout(self.timeout, self.read_body(response)).await.unwrap_or_else(|_| Err(self.timed_out()))
        } else {
            self.read_body(response).await
        };
        let bytes = match bytes {
            Ok(bytes) => bytes,
            Err(failure) => return failure,
        };
        let body_wait = (self.parse_error)(&bytes).and_then(|parsed| parsed.retry_after);
        let server_wait = retry::server_wait(&headers).or(body_wait);
        let request_id =
            ["request-id", "x-request-id"].iter().find_map(|name| headers.get(*name)?.to_str().ok()).map(str::to_owned);
        let error = error::status_error(self.provider, status, &bytes, self.parse_error)
            .with_retry_after(server_wait)
            .with_request_id(request_id);
        let retryable = retry::should_retry_header(&headers).unwrap_or_else(|| retry::status_is_retryable(status));
        Failure { error, retryable, server_wait }
    }
}

impl HttpClient {
    /// A wait past the timeout, retried as a transport timeout is.
    fn timed_out(&self) -> Failure {
        let message = format!("no response within {} ms", self.timeout.as_millis());
        Failure {
            error: ModelError::new(ModelErrorKind::Timeout, self.provider, message),
            retryable: true,
            server_wait: None,
        }
    }

    /// Reads the body chunk by chunk, stopping at the size limit: memory
    /// stays bounded whatever the server sends or announces.
    async fn read_body(&self, mut response: Incoming) -> Result<Bytes, Failure> {
        use futures_util::StreamExt as _;

        let limit = self.max_response_bytes;
        let too_large = || Failure {
            error: ModelError::new(
                ModelErrorKind::ResponseTooLarge,
                self.provider,
                format!("the response body is larger than the limit of {limit} bytes"),
            ),
            retryable: false,
            server_wait: None,
        };
        if response.content_length.is_some_and(|length| length > limit) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        loop {
            let chunk = response.body.next().await.transpose().map_err(|error| Failure {
                retryable: error.is_retryable(),
                error,
                server_wait: None,
            })?;
            let Some(chunk) = chunk else { return Ok(Bytes::from(body)) };
            if (body.len() + chunk.len()) as u64 > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
    }
}

/// Redirects are never followed (as in the official SDKs, whose HTTP
/// clients do not follow them): a redirected request would carry the API key
/// (Anthropic's `x-api-key`) and the user's own headers to wherever the
/// server points, and reqwest strips only `Authorization` and `Cookie` on a
/// cross-origin hop. A 3xx answer fails with [`ModelErrorKind::Redirect`].
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::none()
}

/// The error for a redirect answer: where it pointed (password redacted).
fn redirect_error(provider: &'static str, status: u16, headers: &HeaderMap) -> ModelError {
    let location = headers.get(reqwest::header::LOCATION).and_then(|value| value.to_str().ok()).unwrap_or("nowhere");
    let message = format!(
        "HTTP {status} redirect to {} not followed: the request and its credentials go only to the configured \
         base URL; set it to the final address",
        redact_url(location)
    );
    ModelError::new(ModelErrorKind::Redirect, provider, message).with_status(status)
}

/// The secrets a cassette must never write: the API key, the values of the
/// user's extra headers whose names mark credentials, and the password of
/// the base URL. (Headers and the URL's userinfo are left out of cassettes
/// anyway; these are searched for wherever else they might turn up.) The
/// values of other headers (`HTTP-Referer`, `X-Title`, `anthropic-beta`)
/// are recorded as they are, so that the text they also appear in is not
/// changed and a changed value fails a replay.
fn secrets(settings: &HttpSettings, url: &reqwest::Url) -> Vec<Secret> {
    let mut secrets: Vec<Secret> = settings.api_key.iter().cloned().collect();
    secrets.extend(settings.headers.iter().filter(|(name, _)| is_credential(name)).map(|(_, value)| value.clone()));
    secrets.extend(url.password().map(Secret::new));
    let keys = url.query_pairs().filter(|(name, _)| is_credential(name));
    secrets.extend(keys.map(|(_, value)| Secret::new(value.into_owned())));
    secrets
}

fn endpoint_url(base_url: &str, path: &str) -> Result<String, BuildError> {
    let invalid = |reason: &str| BuildError::InvalidBaseUrl { url: redact_url(base_url), reason: reason.to_owned() };
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
pub(super) fn new_client() -> Result<reqwest::Client, BuildError> {
    client_builder()?.build().map_err(|error| BuildError::HttpClient(error.to_string()))
}

/// The builder of every HTTP client this crate makes (providers, MCP): the
/// shared TLS configuration, toolloop's user agent, and no redirects.
pub(crate) fn client_builder() -> Result<reqwest::ClientBuilder, BuildError> {
    static TLS: std::sync::OnceLock<Result<rustls::ClientConfig, String>> = std::sync::OnceLock::new();
    let tls = TLS.get_or_init(|| tls_config().map_err(|e| e.to_string())).clone().map_err(BuildError::HttpClient)?;
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(concat!("toolloop/", env!("CARGO_PKG_VERSION")))
        .redirect(redirect_policy()))
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
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::{BuildError, InFlight, endpoint_url, new_client};

    #[test]
    fn calls_in_flight_are_counted_until_they_leave_or_drop() {
        let count = AtomicUsize::new(0);
        let first = InFlight::enter(&count);
        let second = InFlight::enter(&count);
        assert_eq!(count.load(Ordering::Relaxed), 2);
        // A call that fails leaves by being dropped.
        drop(second);
        assert_eq!(first.leave(), 0, "alone now");
        let first = InFlight::enter(&count);
        let second = InFlight::enter(&count);
        assert_eq!(second.leave(), 1, "one other in flight");
        assert_eq!(first.leave(), 0);
        assert_eq!(count.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn endpoint_urls_join_without_double_slashes() {
        assert_eq!(
            endpoint_url("https://api.openai.com/v1/", "/chat/completions").unwrap(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(endpoint_url("http://127.0.0.1:8080", "/api/chat").unwrap(), "http://127.0.0.1:8080/api/chat");
        assert!(matches!(endpoint_url("ftp://x", "/a"), Err(BuildError::InvalidBaseUrl { .. })));
        assert!(matches!(endpoint_url("not a url", "/a"), Err(BuildError::InvalidBaseUrl { .. })));
    }

    #[test]
    fn the_tls_client_builds_without_a_process_wide_crypto_provider() {
        new_client().unwrap();
        assert!(rustls::crypto::CryptoProvider::get_default().is_none());
    }
}
