//! Errors a model call can end with.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use crate::usage::Usage;

/// What went wrong with a model call, for deciding what to do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The API key is missing or wrong (HTTP 401).
    Authentication,
    /// The key may not use this resource (HTTP 403).
    PermissionDenied,
    /// The model or endpoint does not exist (HTTP 404).
    NotFound,
    /// Too many requests (HTTP 429); see [`ModelError::retry_after`].
    RateLimited,
    /// The provider is overloaded (Anthropic 529).
    Overloaded,
    /// The provider rejected the request (HTTP 400, 413, 422, ...).
    InvalidRequest,
    /// The prompt does not fit the model's context window (Anthropic
    /// "prompt is too long", OpenAI `context_length_exceeded`, Ollama and
    /// OpenAI-compatible servers' equivalents, or a prompt Ollama would
    /// have truncated); the numbers, when the provider gave them, are
    /// [`ModelError::prompt_tokens`] and [`ModelError::context_window`]. The
    /// conversation is unchanged: shorten what is sent and call again.
    ContextOverflow,
    /// The provider failed (HTTP 5xx).
    Server,
    /// No complete response arrived in time.
    Timeout,
    /// The connection failed or dropped.
    Connection,
    /// The response could not be understood.
    MalformedResponse,
    /// A test model was asked for more responses than it was given.
    ScriptExhausted,
    /// The server answered with a redirect (HTTP 3xx). Redirects are never
    /// followed, as in the official SDKs, so that the API key and headers
    /// go only to the configured origin; set the base URL to the final
    /// address instead. Not retried.
    Redirect,
    /// The response body was larger than the model's limit
    /// ([`HttpModelBuilder::max_response_bytes`](crate::providers::HttpModelBuilder::max_response_bytes));
    /// reading stopped at the limit. Not retried.
    ResponseTooLarge,
    /// A durable run's journal could not replay the step: its record was
    /// written by an incompatible version of toolloop, or the durable
    /// engine gave up on the step. The model was not called; the error's
    /// provider names the journal (`journal`, `restate`). Not retried.
    Journal,
    /// Anything else.
    Other,
}

impl ModelErrorKind {
    /// A short, stable name (`"rate_limited"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Authentication => "authentication",
            Self::PermissionDenied => "permission_denied",
            Self::NotFound => "not_found",
            Self::RateLimited => "rate_limited",
            Self::Overloaded => "overloaded",
            Self::InvalidRequest => "invalid_request",
            Self::ContextOverflow => "context_overflow",
            Self::Server => "server",
            Self::Timeout => "timeout",
            Self::Connection => "connection",
            Self::MalformedResponse => "malformed_response",
            Self::ScriptExhausted => "script_exhausted",
            Self::Redirect => "redirect",
            Self::ResponseTooLarge => "response_too_large",
            Self::Journal => "journal",
            Self::Other => "other",
        }
    }
}

/// A failed model call.
///
/// It never holds an API key: providers build messages from the API's error
/// body and the status, not from request headers.
#[derive(Debug, Clone)]
pub struct ModelError {
    kind: ModelErrorKind,
    provider: Cow<'static, str>,
    status: Option<u16>,
    message: String,
    retry_after: Option<Duration>,
    attempts: u32,
    /// Rarely set, so boxed: keeps `Result<_, ModelError>` small.
    details: Option<Box<Details>>,
}

/// What a provider's error response said beyond its message.
#[derive(Debug, Clone, Default)]
struct Details {
    error_type: Option<String>,
    request_id: Option<String>,
    context_overflow: Option<ContextOverflow>,
    usage: Option<Usage>,
}

/// The numbers of a prompt that did not fit the context window, as far as
/// the provider gave them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ContextOverflow {
    /// How many tokens the prompt has (or prompt plus requested output, for
    /// servers that count both).
    pub(crate) prompt_tokens: Option<u64>,
    /// The most the model accepts.
    pub(crate) limit: Option<u64>,
}

impl ContextOverflow {
    /// An overflow of `prompt_tokens` over `limit`, either unknown.
    pub(crate) const fn new(prompt_tokens: Option<u64>, limit: Option<u64>) -> Self {
        Self { prompt_tokens, limit }
    }
}

impl ModelError {
    /// An error of `kind` from `provider` saying `message`.
    pub fn new(kind: ModelErrorKind, provider: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self {
            kind,
            provider: provider.into(),
            status: None,
            message: message.into(),
            retry_after: None,
            attempts: 1,
            details: None,
        }
    }

    /// Adds the HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Adds how long the provider asked to wait before trying again.
    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    /// Adds the provider's own name for the error, from its error body
    /// (`"overloaded_error"`, `"insufficient_quota"`, ...).
    pub fn with_error_type(mut self, error_type: Option<String>) -> Self {
        if error_type.is_some() || self.details.is_some() {
            self.details.get_or_insert_default().error_type = error_type;
        }
        self
    }

    /// Adds the provider's id for the failed request (for its support).
    pub fn with_request_id(mut self, request_id: Option<String>) -> Self {
        if request_id.is_some() || self.details.is_some() {
            self.details.get_or_insert_default().request_id = request_id;
        }
        self
    }

    /// The provider's id for the failed request, when it sent one
    /// (`request-id` / `x-request-id` headers): quote it to the provider's support.
    pub fn request_id(&self) -> Option<&str> {
        self.details.as_ref()?.request_id.as_deref()
    }

    /// Makes this a [`ModelErrorKind::ContextOverflow`] with the provider's
    /// numbers, each `None` when it did not give it: the prompt's size and
    /// the model's context window, in tokens.
    ///
    /// ```
    /// use toolloop::ModelError;
    /// use toolloop::model::ModelErrorKind;
    ///
    /// let error = ModelError::new(ModelErrorKind::InvalidRequest, "anthropic", "prompt is too long")
    ///     .with_context_overflow(Some(208_310), Some(200_000));
    /// assert_eq!(error.kind(), ModelErrorKind::ContextOverflow);
    /// assert_eq!((error.prompt_tokens(), error.context_window()), (Some(208_310), Some(200_000)));
    /// ```
    pub fn with_context_overflow(mut self, prompt_tokens: Option<u64>, context_window: Option<u64>) -> Self {
        self.kind = ModelErrorKind::ContextOverflow;
        self.details.get_or_insert_default().context_overflow =
            Some(ContextOverflow::new(prompt_tokens, context_window));
        self
    }

    /// The overflow's numbers, when this is a [`ModelErrorKind::ContextOverflow`].
    fn overflow(&self) -> Option<ContextOverflow> {
        if self.kind != ModelErrorKind::ContextOverflow {
            return None;
        }
        self.details.as_ref()?.context_overflow
    }

    /// How many tokens the prompt that did not fit has (or prompt plus
    /// requested output, for servers that count both), when this is a
    /// [`ModelErrorKind::ContextOverflow`] and the provider said.
    pub fn prompt_tokens(&self) -> Option<u64> {
        self.overflow()?.prompt_tokens
    }

    /// The model's context window in tokens, the most it accepts, when this
    /// is a [`ModelErrorKind::ContextOverflow`] and the provider said.
    pub fn context_window(&self) -> Option<u64> {
        self.overflow()?.limit
    }

    /// Adds the tokens the provider had reported for the call before it
    /// failed (a stream's usage events before its error).
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.details.get_or_insert_default().usage = Some(usage);
        self
    }

    /// The tokens the provider had reported for the call before it failed
    /// (providers may bill them), when it reported any: a stream that sent
    /// usage and then an error or nothing more. The run's
    /// [`metadata`](crate::run::RunMetadata::usage) counts them.
    pub fn usage(&self) -> Option<Usage> {
        self.details.as_ref()?.usage
    }

    /// Records how many HTTP attempts were made before giving up.
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// The provider's own name for the error, when its error body gave one
    /// (Anthropic `error.type`, OpenAI `error.code` or `error.type`).
    pub fn error_type(&self) -> Option<&str> {
        self.details.as_ref()?.error_type.as_deref()
    }

    /// How many attempts were made, retries included (1 when none was retried).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// What went wrong.
    pub fn kind(&self) -> ModelErrorKind {
        self.kind
    }

    /// The provider that failed.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The HTTP status, when there was one.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The provider's message, or a description of the failure.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// How long the provider asked to wait before trying again.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind,
            ModelErrorKind::RateLimited
                | ModelErrorKind::Overloaded
                | ModelErrorKind::Server
                | ModelErrorKind::Timeout
                | ModelErrorKind::Connection
        )
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} error ({}", self.provider, self.kind.as_str())?;
        if let Some(status) = self.status {
            write!(f, ", HTTP {status}")?;
        }
        if self.attempts > 1 {
            write!(f, ", {} attempts", self.attempts)?;
        }
        write!(f, "): {}", self.message)
    }
}

impl std::error::Error for ModelError {}

#[cfg(test)]
mod tests {
    use super::{ModelError, ModelErrorKind};

    #[test]
    fn errors_stay_small_and_keep_their_details() {
        // Results carrying a ModelError are returned through every layer of a run.
        assert!(std::mem::size_of::<ModelError>() <= 96, "{}", std::mem::size_of::<ModelError>());
        let error = ModelError::new(ModelErrorKind::Overloaded, "anthropic", "Overloaded")
            .with_error_type(Some("overloaded_error".into()))
            .with_request_id(Some("req_1".into()))
            .with_attempts(3);
        assert_eq!(
            (error.error_type(), error.request_id(), error.attempts()),
            (Some("overloaded_error"), Some("req_1"), 3)
        );
        let plain = ModelError::new(ModelErrorKind::Other, "x", "y").with_error_type(None).with_request_id(None);
        assert_eq!((plain.error_type(), plain.request_id(), plain.attempts()), (None, None, 1));
        assert_eq!(error.to_string(), "anthropic error (overloaded, 3 attempts): Overloaded");
    }
}

impl crate::reasoning::ReasoningError {
    /// The error as a model call's error: an invalid request from `provider`
    /// that was never sent.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // only the HTTP providers use it
    pub(crate) fn into_model_error(self, provider: &'static str) -> ModelError {
        ModelError::new(ModelErrorKind::InvalidRequest, provider, self.to_string())
    }
}

#[cfg(test)]
mod reasoning_tests {
    use super::ModelErrorKind;
    use crate::reasoning::ReasoningError;

    #[test]
    fn errors_become_invalid_requests_that_say_what_to_do() {
        let error = ReasoningError::MaxTokensTooSmall { max_tokens: 1000, minimum: 1024, needed: 1366 };
        assert_eq!(
            error.to_string(),
            "max_tokens (1000) leaves no room for a thinking budget of 1024 tokens; raise it to at least 1366"
        );
        let model_error = error.into_model_error("anthropic");
        assert_eq!(
            (model_error.kind(), model_error.provider(), model_error.status()),
            (ModelErrorKind::InvalidRequest, "anthropic", None)
        );
    }
}
