//! Turning HTTP failures into typed [`ModelError`]s.

use super::overflow;
use crate::model::{ModelError, ModelErrorKind};

/// What a provider's error body says, once parsed.
#[derive(Debug, Default, PartialEq, Eq)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct ApiError {
    /// The human-readable message.
    pub(crate) message: String,
    /// The provider's machine name for the error (`overloaded_error`, ...).
    pub(crate) error_type: Option<String>,
    /// How long the body says to wait before trying again (Google's
    /// `RetryInfo.retryDelay`), for APIs that say it there rather than in a
    /// `retry-after` header, which wins when both are given.
    pub(crate) retry_after: Option<std::time::Duration>,
}

impl ApiError {
    pub(crate) fn new(message: String, error_type: Option<String>) -> Self {
        Self { message, error_type, retry_after: None }
    }
}

/// Parses a provider's error body; `None` when it is not in that provider's shape.
pub(crate) type ErrorBodyParser = fn(&[u8]) -> Option<ApiError>;

/// The neutral kind of an HTTP error status, refined by the provider's error type.
pub(crate) fn kind_for_status(status: u16, error_type: Option<&str>) -> ModelErrorKind {
    match error_type {
        Some("overloaded_error") => return ModelErrorKind::Overloaded,
        // Google's reason for a bad key, which comes with 400.
        Some("API_KEY_INVALID") => return ModelErrorKind::Authentication,
        _ => {}
    }
    match status {
        400 | 413 | 422 => ModelErrorKind::InvalidRequest,
        401 => ModelErrorKind::Authentication,
        403 => ModelErrorKind::PermissionDenied,
        404 => ModelErrorKind::NotFound,
        408 => ModelErrorKind::Timeout,
        429 => ModelErrorKind::RateLimited,
        503 | 529 => ModelErrorKind::Overloaded,
        500..=599 => ModelErrorKind::Server,
        _ => ModelErrorKind::Other,
    }
}

/// The error for a response with a failure status and `body`.
pub(crate) fn status_error(provider: &'static str, status: u16, body: &[u8], parse: ErrorBodyParser) -> ModelError {
    let parsed = parse(body).unwrap_or_else(|| ApiError::new(body_excerpt(status, body), None));
    // Servers answer an overflow with 400, 413 or (older llama.cpp) 500; never with 401-404 or 429.
    let overflow = matches!(status, 400 | 413 | 422 | 500)
        .then(|| overflow::recognise(&parsed.message, parsed.error_type.as_deref(), body))
        .flatten();
    let error = ModelError::new(kind_for_status(status, parsed.error_type.as_deref()), provider, parsed.message)
        .with_status(status)
        .with_error_type(parsed.error_type);
    match overflow {
        Some(overflow) => error.with_context_overflow(overflow.prompt_tokens, overflow.limit),
        None => error,
    }
}

/// A short, printable excerpt of a body that is not in the provider's error shape
/// (an HTML page from a proxy, plain text, nothing at all).
fn body_excerpt(status: u16, body: &[u8]) -> String {
    const LIMIT: usize = 500;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return format!("HTTP {status} with an empty body");
    }
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The error an event of a stream reports (its `kind` from the event's
/// type), recognised as a context overflow as a status error's body is:
/// a context policy compacts on it in streamed runs too.
pub(crate) fn stream_error(
    provider: &'static str,
    kind: ModelErrorKind,
    message: String,
    error_type: Option<String>,
) -> ModelError {
    let overflow = overflow::recognise(&message, error_type.as_deref(), message.as_bytes());
    let error = ModelError::new(kind, provider, message).with_error_type(error_type);
    match overflow {
        Some(overflow) => error.with_context_overflow(overflow.prompt_tokens, overflow.limit),
        None => error,
    }
}

/// The error for a transport failure (no complete response).
pub(crate) fn transport_error(provider: &'static str, error: &reqwest::Error) -> ModelError {
    let kind = if error.is_timeout() {
        ModelErrorKind::Timeout
    } else if error.is_redirect() {
        ModelErrorKind::Redirect
    } else {
        ModelErrorKind::Connection
    };
    // reqwest's Display names the URL (shown redacted: a gateway's key may
    // be in its query) but never headers.
    let mut message = error.to_string();
    if let Some(url) = error.url() {
        message = message.replace(url.as_str(), &super::secret::redact_url(url.as_str()));
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    ModelError::new(kind, provider, message)
}

/// The error for a success response whose body could not be understood.
pub(crate) fn malformed(provider: &'static str, error: &serde_json::Error, body: &[u8]) -> ModelError {
    let message = format!("the response body could not be parsed ({error}): {}", body_excerpt(200, body));
    ModelError::new(ModelErrorKind::MalformedResponse, provider, message)
}

#[cfg(test)]
mod tests {
    use super::{ApiError, kind_for_status, status_error, transport_error};
    use crate::model::ModelErrorKind;

    /// reqwest names the URL in its errors: a password and query values in
    /// it (a gateway's key) are redacted in the error the caller sees.
    #[tokio::test]
    async fn a_transport_error_names_its_url_redacted() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("http://user:hunter2-pass@127.0.0.1:{closed}/v1/x?subscription-key=k3y-canary&alt=sse");
        let client = crate::providers::http::client_builder().unwrap().build().unwrap();
        let error = client.post(&url).send().await.unwrap_err();
        assert!(error.to_string().contains("k3y-canary"), "reqwest's own text names it: {error}");
        let error = transport_error("test", &error);
        let text = format!("{error} {error:?}");
        assert!(!text.contains("hunter2-pass") && !text.contains("k3y-canary"), "{text}");
        assert!(text.contains("subscription-key=***&alt=sse"), "{text}");
    }

    #[test]
    fn statuses_map_to_kinds() {
        let cases = [
            (400, ModelErrorKind::InvalidRequest),
            (401, ModelErrorKind::Authentication),
            (403, ModelErrorKind::PermissionDenied),
            (404, ModelErrorKind::NotFound),
            (408, ModelErrorKind::Timeout),
            (413, ModelErrorKind::InvalidRequest),
            (422, ModelErrorKind::InvalidRequest),
            (429, ModelErrorKind::RateLimited),
            (500, ModelErrorKind::Server),
            (502, ModelErrorKind::Server),
            (503, ModelErrorKind::Overloaded),
            (529, ModelErrorKind::Overloaded),
            (402, ModelErrorKind::Other),
        ];
        for (status, kind) in cases {
            assert_eq!(kind_for_status(status, None), kind, "{status}");
        }
        assert_eq!(kind_for_status(500, Some("overloaded_error")), ModelErrorKind::Overloaded);
    }

    #[test]
    fn bodies_in_another_shape_are_quoted() {
        let parse = |_: &[u8]| None::<ApiError>;
        let error = status_error("openai", 502, b"<html>Bad gateway</html>", parse);
        assert_eq!(error.message(), "<html>Bad gateway</html>");
        assert_eq!(error.status(), Some(502));
        let error = status_error("openai", 500, b"", parse);
        assert_eq!(error.message(), "HTTP 500 with an empty body");
        let long = "x".repeat(2000);
        assert_eq!(status_error("openai", 500, long.as_bytes(), parse).message().chars().count(), 501);
    }
}
