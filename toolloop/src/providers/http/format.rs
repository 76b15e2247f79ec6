//! What a wire format adds to the shared HTTP model: one API's request and
//! response shapes, and nothing about retries, timeouts, tracing, secrets or
//! caching, which [`HttpModel`](super::HttpModel) does once for every format.
//!
//! How the next capabilities fit, without copying a provider:
//! - Another API (OpenAI Responses): a new format type; its `write_body`
//!   puts the system prompt in its head (`instructions`) and the messages
//!   under another field (`body.messages("input", None)`), its `render_run`
//!   writes items (`function_call`, `function_call_output`). Client, builder,
//!   retries, tracing and the body cache come with `HttpModel<ThatFormat>`.
//! - Streaming: a format gains a decoder from its frames (SSE, NDJSON) to
//!   neutral stream events that accumulate to a `ModelResponse`; the client
//!   gains a streaming post beside `post_json`. `"stream": true` is request
//!   data, written in the head or tail, never in cached message bytes.
//! - Reasoning settings: fields of the format value, set by builder setters
//!   on `HttpModelBuilder<ThatFormat>`. A setting that changes how messages
//!   render (replaying signed reasoning blocks, say) lives there, so the
//!   bytes each model renders into a run's cache are right for it by
//!   construction; a per-request setting
//!   goes in the head or tail.
//! - Prompt-cache breakpoints: on the system prompt and tools, written in the
//!   head or tail; the one that moves with the end of the conversation falls
//!   in the open run, which is rendered for every request. A breakpoint in a
//!   settled run would render that run afresh between two slices of the
//!   shared cached chunk (slicing `Bytes` copies nothing), so breakpoints
//!   never enter the cache.

use std::fmt;

use reqwest::header::{HeaderName, HeaderValue};
use serde::de::DeserializeOwned;

use super::body::Body;
use super::decoder::StreamDecoder;
use super::error::ApiError;
use crate::message::Message;
use crate::model::{ModelError, ModelRequest, ModelResponse, ReasoningConfig, ResponseSchema, ResponseSchemaSupport};

/// One HTTP API's wire format: the `W` of [`HttpModel<W>`](super::HttpModel).
///
/// Sealed: implemented by this crate's formats only, which users never
/// name: they write the model types that fix `W`
/// ([`Anthropic`](crate::providers::anthropic::Anthropic),
/// [`OpenAi`](crate::providers::openai::OpenAi),
/// [`OpenAiResponses`](crate::providers::openai::OpenAiResponses),
/// [`Gemini`](crate::providers::gemini::Gemini),
/// [`Ollama`](crate::providers::ollama::Ollama)). A value of it holds
/// the format's own settings, fixed when the model is built.
// Hidden from the docs only (`cfg(doc)`): the bound of `HttpModel<W>`, which
// users cannot implement and never write, but rustc names it in its messages.
#[cfg_attr(doc, doc(hidden))]
pub trait WireFormat: Format {}

impl<W: Format> WireFormat for W {}

/// What writing a request body gives: it fails only where a value cannot be
/// serialised.
pub(crate) type BodyResult = serde_json::Result<()>;

/// Headers one request adds to the model's.
#[allow(unreachable_pub)] // named by the sealed `Format`
pub type RequestHeaders = Vec<(HeaderName, HeaderValue)>;

/// Whether a format needs an API key, and which environment variable holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub enum ApiKey {
    Required(&'static str),
    /// Not for a server given by base URL (OpenAI-compatible servers).
    RequiredUnlessBaseUrl(&'static str),
    /// Sent when given (a server behind an authenticating proxy); never read
    /// from the environment.
    Optional,
}

/// The settings of one model a request body depends on besides the request:
/// the model's name, and its maximum output tokens, temperature and
/// reasoning setting, each already overridden by the request's.
#[derive(Clone, Copy, Debug)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct CallSettings<'a> {
    pub(crate) model: &'a str,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) temperature: Option<f32>,
    pub(crate) reasoning: Option<&'a ReasoningConfig>,
    /// Whether the response is asked for as a stream of events.
    pub(crate) stream: bool,
}

/// How a streamed response body is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub enum Framing {
    /// Server-sent events (`event:`/`data:` lines).
    Sse,
    /// One JSON object a line.
    Ndjson,
}

/// The format's side of [`WireFormat`], out of users' reach: it names
/// crate-private types, and new wire capabilities (a stream decoder, say)
/// are added here without a breaking change.
///
/// Message rendering ([`render_run`](Self::render_run)) sees the format's
/// own settings and the messages, never the request: whatever changes from
/// request to request (tools, overrides, cache breakpoints) is written
/// around the rendered messages, so that their bytes can be reused.
#[allow(unreachable_pub)] // reachable as the supertrait of `WireFormat`, nameable only here: sealed
pub trait Format: Clone + fmt::Debug + Default + Send + Sync + 'static {
    /// The provider name, as [`Model::provider`](crate::Model::provider) returns it.
    const PROVIDER: &'static str;
    /// The endpoint, appended to the base URL.
    const PATH: &'static str;
    /// Where requests go unless a base URL is set.
    const DEFAULT_BASE_URL: &'static str;
    /// The model used unless another is set.
    const DEFAULT_MODEL: &'static str;
    /// The maximum output tokens sent unless set (for APIs that require one).
    const DEFAULT_MAX_TOKENS: Option<u32> = None;
    /// Whether a key is needed, and where the environment keeps it.
    const API_KEY: ApiKey;
    /// The environment variable holding the base URL.
    const BASE_URL_VARIABLE: &'static str;
    /// Further environment variables that may hold the key, read when the
    /// one [`API_KEY`](Self::API_KEY) names is not set (Gemini's `GOOGLE_API_KEY`).
    const API_KEY_ALIASES: &'static [&'static str] = &[];
    /// The header carrying the key, and the text before the key in it.
    const KEY_HEADER: (&'static str, &'static str) = ("authorization", "Bearer ");
    /// The longest server-requested wait (`retry-after`) obeyed unless the
    /// [`RetryPolicy`](super::RetryPolicy) sets its own cap: the official
    /// SDK's rule (OpenAI's SDK honours up to 120 s).
    const MAX_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(120);

    /// How a streamed body is framed.
    const FRAMING: Framing = Framing::Sse;

    /// The success response body.
    type Response: DeserializeOwned;

    /// Decodes the frames of one streamed response.
    type Decoder: StreamDecoder + 'static;

    /// The base URL an environment variable's `value` stands for.
    fn base_url_from_env(value: &str) -> String {
        value.to_owned()
    }

    /// The endpoint, appended to the base URL: [`PATH`](Self::PATH) unless
    /// the format's settings move it (Gemini on Vertex AI).
    fn path(&self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(Self::PATH)
    }

    /// What one call appends to the endpoint, for APIs that name the model
    /// and the method in the URL (Gemini's `/{model}:generateContent`);
    /// `None` for APIs with one endpoint.
    fn call_path(&self, call: CallSettings<'_>) -> Option<String> {
        let _ = call;
        None
    }

    /// Whether the format's settings carry credentials of their own (a
    /// Vertex AI bearer token, sent by [`prepare`](Self::prepare)), so that
    /// the model needs no API key.
    fn authenticates(&self) -> bool {
        false
    }

    /// Headers sent with every request besides the key, content type and the
    /// user's own (an API version, say).
    fn headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        Vec::new()
    }

    /// Checks the request against the API's rules before anything is sent
    /// (reasoning with a temperature, say), and returns the headers this
    /// request needs besides [`headers`](Self::headers) (a beta flag).
    fn prepare(&self, call: CallSettings<'_>, request: &ModelRequest<'_>) -> Result<RequestHeaders, ModelError> {
        let _ = (call, request);
        Ok(Vec::new())
    }

    /// Whether `model` can be sent `schema` as the native structured output
    /// (see [`Model::response_schema_support`](crate::Model::response_schema_support)).
    fn response_schema_support(&self, model: &str, schema: &ResponseSchema) -> ResponseSchemaSupport {
        let _ = (model, schema);
        ResponseSchemaSupport::Unknown
    }

    /// Writes the request body through `body`, which renders the messages.
    fn write_body(&self, call: CallSettings<'_>, request: &ModelRequest<'_>, body: &mut Body<'_>) -> BodyResult;

    /// Appends to `out` the wire elements, each preceded by a comma, of
    /// `run`: consecutive messages of one role, which APIs merge into one
    /// turn. `through` is every message sent up to the end of `run`, for
    /// formats that look back (Ollama names a tool result after its call).
    fn render_run(&self, run: &[Message], through: &[Message], out: &mut Vec<u8>) -> serde_json::Result<()>;

    /// Checks the prompt tokens a success reported (its usage's input
    /// tokens, 0 when not reported) against the request's size
    /// (`body_bytes`), for servers that answer a prompt they could not take
    /// whole with a success (Ollama truncating to its context window).
    /// Streamed responses are checked when their usage arrives.
    fn check_prompt(&self, _prompt_tokens: u64, _body_bytes: usize) -> Result<(), ModelError> {
        Ok(())
    }

    /// The neutral response for a success body.
    fn response(&self, wire: Self::Response) -> Result<ModelResponse, ModelError>;

    /// Sees each success `response` with the request it answers (the
    /// Responses API remembers a stored response, to continue from it).
    /// Streamed responses are collected for it only when
    /// [`records_answers`](Self::records_answers) says so.
    fn answered(&self, call: CallSettings<'_>, request: &ModelRequest<'_>, response: &ModelResponse) {
        let _ = (call, request, response);
    }

    /// Whether [`answered`](Self::answered) does anything.
    fn records_answers(&self) -> bool {
        false
    }

    /// Whether a call asking for up to `max_tokens` output tokens must be
    /// streamed even when not streamed by the caller (Anthropic refuses
    /// long non-streamed calls); the response is then collected.
    fn must_stream(_max_tokens: Option<u32>) -> bool {
        false
    }

    /// A decoder for one streamed response.
    fn stream_decoder(&self) -> Self::Decoder;

    /// Parses an error body; `None` when it is not in this API's shape.
    fn error_body(body: &[u8]) -> Option<ApiError>;
}
