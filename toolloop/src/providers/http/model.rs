//! The model every HTTP provider is: one client, one wire format.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use futures_util::{Stream, StreamExt as _};

use tracing::Instrument as _;

use super::body::{Body, BodyOut, WireBody};
use super::body_cache;
use super::decoder::decode_frames;
use super::events::{Frames, Opened};
use super::format::{CallSettings, Framing, RequestHeaders, WireFormat};
use super::ndjson::{MAX_LINE_BYTES, ndjson_frames};
use super::shared::Shared;
use super::sse::{MAX_EVENT_BYTES, sse_frames};
use super::trace::CallTrace;
use crate::model::{
    BoxFuture, BoxStream, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, ReasoningConfig,
    ResponseAccumulator, StreamEvent, until_content,
};

/// A model behind an HTTP API speaking wire format `W`:
/// [`Anthropic`](crate::providers::anthropic::Anthropic),
/// [`OpenAi`](crate::providers::openai::OpenAi) and
/// [`Ollama`](crate::providers::ollama::Ollama) are this type for their
/// formats.
///
/// Every call runs in a `model_call` tracing span, retries as its
/// [`RetryPolicy`](crate::providers::RetryPolicy) says, maps the API's error
/// bodies to typed [`ModelError`]s, and, in a run, renders only what is new
/// in the conversation: the wire bytes of the messages the run has already
/// sent are kept for the run's later requests and dropped when it ends.
///
/// Clones share the connection pool. `Debug` never shows the API key.
pub struct HttpModel<W> {
    pub(super) shared: Arc<Shared<W>>,
    pub(crate) model: String,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) temperature: Option<f32>,
    pub(crate) reasoning: Option<ReasoningConfig>,
}

impl<W> Clone for HttpModel<W> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            model: self.model.clone(),
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            reasoning: self.reasoning,
        }
    }
}

impl<W: WireFormat> fmt::Debug for HttpModel<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpModel")
            .field("provider", &W::PROVIDER)
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("reasoning", &self.reasoning)
            .field("format", &self.shared.format)
            .field("http", &self.shared.http)
            .finish()
    }
}

impl<W: WireFormat> HttpModel<W> {
    /// The same client (key, endpoint, connection pool, cache) for another
    /// model, for switching models mid-conversation.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// The same client with another reasoning setting (an effort or a whole
    /// [`ReasoningConfig`]; `ReasoningEffort::Off` turns it off);
    /// [`ModelRequest::reasoning`] overrides it per request.
    pub fn with_reasoning(mut self, reasoning: impl Into<ReasoningConfig>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// The same client with no reasoning setting: requests send no
    /// reasoning field, so the API's default applies.
    pub fn with_default_reasoning(mut self) -> Self {
        self.reasoning = None;
        self
    }

    /// The reasoning setting requests use unless they override it.
    pub fn reasoning(&self) -> Option<&ReasoningConfig> {
        self.reasoning.as_ref()
    }

    /// The URL requests are sent to (for APIs that name the model and the
    /// method in the URL, Gemini's, the URL they are appended to).
    pub fn endpoint(&self) -> &str {
        self.shared.http.url()
    }

    /// The format's checks and per-request headers for a call. A call a
    /// cassette replays sends nothing, so it needs no credentials: a
    /// token source that cannot give one (no `gcloud` where the test
    /// replays) does not fail it.
    fn prepare(&self, call: CallSettings<'_>, request: &ModelRequest<'_>) -> Result<RequestHeaders, ModelError> {
        match self.shared.format.prepare(call, request) {
            Err(error) if error.kind() == ModelErrorKind::Authentication && self.shared.http.replaying() => {
                Ok(RequestHeaders::new())
            }
            prepared => prepared,
        }
    }

    /// The request body for `request`.
    pub(crate) fn body(&self, request: &ModelRequest<'_>, stream: bool) -> serde_json::Result<WireBody> {
        let call = self.call_settings(request, stream);
        let Shared { format, renderer, .. } = &*self.shared;
        let tools_offered = !request.tools.is_empty();
        let mut messages = |out: &mut BodyOut| {
            body_cache::write(request.body_cache, *renderer, format, request.messages, tools_offered, out)
        };
        let mut body = Body::new(&mut messages);
        format.write_body(call, request, &mut body)?;
        Ok(body.finish())
    }

    /// This model's settings, overridden by `request`'s.
    pub(crate) fn call_settings<'s>(&'s self, request: &'s ModelRequest<'_>, stream: bool) -> CallSettings<'s> {
        CallSettings {
            stream,
            model: &self.model,
            max_tokens: request.max_tokens.or(self.max_tokens),
            temperature: request.temperature.or(self.temperature),
            reasoning: request.reasoning.as_ref().or(self.reasoning.as_ref()),
        }
    }

    /// The wire format, with its settings and what it keeps.
    #[cfg(test)]
    pub(crate) fn format(&self) -> &W {
        &self.shared.format
    }

    /// How many runs this model rendered into `cache` for the messages
    /// starting with `first`, and how many messages that covers.
    #[cfg(test)]
    pub(crate) fn cache_stats(
        &self,
        cache: &crate::model::BodyCache,
        first: &crate::message::Message,
    ) -> Option<(usize, usize)> {
        cache.stats(self.shared.renderer, first.stamp()?)
    }

    async fn call(&self, request: ModelRequest<'_>) -> Result<ModelResponse, ModelError> {
        if W::must_stream(request.max_tokens.or(self.max_tokens).or(W::DEFAULT_MAX_TOKENS)) {
            // Boxed: this rare path would otherwise size every call's future
            // (and so the memory of every call in flight).
            return Box::pin(self.call_streamed(request)).await;
        }
        let http = &self.shared.http;
        let call = self.call_settings(&request, false);
        let headers = self.prepare(call, &request)?;
        let url = http.call_url(self.shared.format.call_path(call).as_deref())?;
        let body = self.body(&request, false).map_err(|error| http.body_error(&error))?;
        let body_bytes = body.len();
        dump_request(W::PROVIDER, &url, &body);
        let wire: W::Response = http.post_json(&url, body, &headers).await?;
        let response = self.shared.format.response(wire)?;
        self.shared.format.check_prompt(response.usage.input_tokens, body_bytes)?;
        self.shared.format.answered(self.call_settings(&request, false), &request, &response);
        Ok(response)
    }

    /// A call the API only answers streamed, collected into one response.
    async fn call_streamed(&self, request: ModelRequest<'_>) -> Result<ModelResponse, ModelError> {
        let events = self.open_stream_retrying(request).await?;
        let response = ResponseAccumulator::new().collect(events).await?;
        self.shared.format.answered(self.call_settings(&request, true), &request, &response);
        Ok(response)
    }

    /// Opens a streamed call as [`open_stream`](Self::open_stream) does, and
    /// also retries (as the policy says) a failure the stream reports before
    /// its first content: an `overloaded_error` event right after the 200,
    /// a connection cut before anything was said. Nothing has been shown
    /// then; the events before content (started, usage) are held back until
    /// it comes. A failure after content ends the stream: its consumer has
    /// seen part of an answer.
    ///
    /// A stall before content (nothing for the idle timeout) is retried
    /// once at most, whatever the policy allows: the stalls of one call
    /// share a budget of two idle timeouts, so the caller hears of a dead
    /// server after about twice the idle timeout, not once per retry.
    async fn open_stream_retrying(&self, request: ModelRequest<'_>) -> Result<Opened<W>, ModelError> {
        let policy = self.shared.http.retry_policy();
        let mut retry = 0;
        let mut stalled = false;
        loop {
            let mut events = self.open_stream(request).await?;
            let error = match until_content(&mut events).await {
                Ok(held) => {
                    events.held = held.into();
                    return Ok(events);
                }
                Err(error) => error,
            };
            let stall = error.kind() == ModelErrorKind::Timeout;
            if !error.is_retryable() || retry >= policy.max_retries() || (stall && stalled) {
                return Err(error.with_attempts(retry + 1));
            }
            stalled |= stall;
            let delay = self.shared.http.retry_delay(retry, error.retry_after());
            tracing::warn!(
                provider = W::PROVIDER,
                attempt = retry + 1,
                %error,
                retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                "streamed model call failed before its first content; retrying",
            );
            tokio::time::sleep(delay).await;
            retry += 1;
        }
    }

    /// Opens a streamed call: the body with streaming on, posted with
    /// retries until the server answers with success, then its frames
    /// through the format's decoder.
    async fn open_stream(&self, request: ModelRequest<'_>) -> Result<Opened<W>, ModelError> {
        let http = &self.shared.http;
        let call = self.call_settings(&request, true);
        let headers = self.prepare(call, &request)?;
        let url = http.call_url(self.shared.format.call_path(call).as_deref())?;
        let body = self.body(&request, true).map_err(|error| http.body_error(&error))?;
        let body_bytes = body.len();
        dump_request(W::PROVIDER, &url, &body);
        let bytes = http.post_stream(&url, body, &headers).await?;
        let frames: Frames = match W::FRAMING {
            Framing::Sse => Box::new(sse_frames(W::PROVIDER, bytes, MAX_EVENT_BYTES)),
            Framing::Ndjson => Box::new(ndjson_frames(W::PROVIDER, bytes, MAX_LINE_BYTES)),
        };
        Ok(Opened {
            held: VecDeque::new(),
            events: decode_frames(frames, self.shared.format.stream_decoder()),
            shared: Arc::clone(&self.shared),
            body_bytes,
        })
    }
}

/// The target of the request dumps: see [`dump_request`].
pub(crate) const DUMP_TARGET: &str = "toolloop::dump";

/// At trace level on the `toolloop::dump` target (opt-in: enable it with a
/// filter such as `RUST_LOG=toolloop::dump=trace`), the whole request body:
/// messages with their contents, tools, and the request parameters (model,
/// max tokens, temperature). Never keys: they travel in headers, which are
/// not dumped, and the endpoint's password is redacted.
fn dump_request(provider: &str, url: &reqwest::Url, body: &WireBody) {
    if tracing::enabled!(target: DUMP_TARGET, tracing::Level::TRACE) {
        let endpoint = super::secret::redact_url(url.as_str());
        let endpoint = endpoint.as_str();
        let bytes = body.to_vec();
        let body = String::from_utf8_lossy(&bytes);
        tracing::trace!(target: DUMP_TARGET, provider, endpoint, %body, "request body");
    }
}

// Not listed under "other types implement `Model`": its message names the constructors.
#[diagnostic::do_not_recommend]
impl<W: WireFormat> Model for HttpModel<W> {
    fn provider(&self) -> &str {
        W::PROVIDER
    }

    fn name(&self) -> &str {
        &self.model
    }

    fn response_schema_support(&self, schema: &crate::model::ResponseSchema) -> crate::model::ResponseSchemaSupport {
        self.shared.format.response_schema_support(&self.model, schema)
    }

    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        CallTrace::start(W::PROVIDER, &self.model, &request).run(self.call(request))
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let trace = CallTrace::start(W::PROVIDER, &self.model, &request);
        let opening = Box::pin(self.open_stream_retrying(request).instrument(trace.span()));
        Box::pin(CallEvents {
            model: self,
            request,
            opening: Some(opening),
            events: None,
            trace,
            // The format remembers answers (a Responses chain): the response
            // is collected beside the consumer, and seen once it is whole.
            answer: self.shared.format.records_answers().then(ResponseAccumulator::new),
            ended: false,
        })
    }
}

/// What [`HttpModel::stream`] returns: the call opened on first poll (with
/// retries, in the call's span), then its events, each seen by the trace
/// (and, for a format that remembers answers, collected beside the
/// consumer); a failure is the last item.
struct CallEvents<'a, W: WireFormat> {
    model: &'a HttpModel<W>,
    request: ModelRequest<'a>,
    /// Until the call is open.
    opening: Option<BoxFuture<'a, Result<Opened<W>, ModelError>>>,
    events: Option<Opened<W>>,
    trace: CallTrace,
    /// The response so far, when the format remembers answers.
    answer: Option<ResponseAccumulator>,
    /// After a failure or the end.
    ended: bool,
}

impl<W: WireFormat> Stream for CallEvents<'_, W> {
    type Item = Result<StreamEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(None);
        }
        let item = if let Some(opening) = this.opening.as_mut() {
            let opened = ready!(opening.as_mut().poll(cx));
            this.opening = None;
            match opened {
                Ok(opened) => this.events.insert(opened).poll_next_unpin(cx),
                Err(error) => Poll::Ready(Some(Err(error))),
            }
        } else if let Some(events) = this.events.as_mut() {
            events.poll_next_unpin(cx)
        } else {
            Poll::Ready(None)
        };
        let Some(item) = ready!(item) else {
            this.ended = true;
            this.events = None;
            // Yields once before the end, as a call read whole does while
            // others are in flight (see `HttpClient::send`): the connection
            // goes back to the pool in a task of its own, which then runs
            // before the next request. Always here: one more poll is little
            // beside a stream's events.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        };
        if item.is_err() {
            this.ended = true;
            this.events = None;
        }
        this.trace.observe(&item);
        if let (Ok(event), Some(collected)) = (&item, this.answer.as_mut()) {
            if collected.push(event).is_err() {
                this.answer = None;
            } else if collected.is_finished()
                && let Some(Ok(response)) = this.answer.take().map(ResponseAccumulator::finish)
            {
                let model = this.model;
                model.shared.format.answered(model.call_settings(&this.request, true), &this.request, &response);
            }
        }
        Poll::Ready(Some(item))
    }
}
