//! When and how long to wait before trying a failed request again.

use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// How a provider retries failed requests.
///
/// The defaults follow the official SDKs: 2 retries; connection errors,
/// timeouts, HTTP 408, 409, 429, 5xx (and Anthropic's 529) are retried; a
/// `x-should-retry` header from the server overrides that decision; the wait
/// is the server's `retry-after-ms` or `retry-after` (seconds or an HTTP
/// date) when it is positive and within the cap, else `min(initial * 2^n, max)`
/// shortened by up to 25% of jitter. The cap on a server's wait is the
/// official SDK's unless [`with_max_retry_after`](Self::with_max_retry_after)
/// sets one: any positive value for Anthropic, up to 120 s for OpenAI and
/// Ollama.
///
/// A streamed call is retried until its first content (text, reasoning or a
/// tool call; not an empty delta or a usage report): an error event, a cut
/// connection or a stall before it is retried like a failure status. A stall
/// is retried once at most, so a stalled call fails after about twice the
/// idle timeout. Nothing is retried once content has been shown.
///
/// Dropping the future of a model call interrupts a wait, so a run's
/// [`max_duration`](crate::AgentBuilder::max_duration) and cancellation bound
/// every wait however long the server asks for.
///
/// ```
/// use std::time::Duration;
/// use toolloop::providers::RetryPolicy;
///
/// let policy = RetryPolicy::default().with_max_retries(4).with_initial_backoff(Duration::from_millis(200));
/// assert_eq!(policy.max_retries(), 4);
/// assert_eq!(RetryPolicy::none().max_retries(), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    max_retries: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    /// `None`: the wire format's own cap.
    max_retry_after: Option<Duration>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: None,
        }
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> Self {
        Self::default().with_max_retries(0)
    }

    /// Sets how many times a failed request is tried again (so at most
    /// `max_retries + 1` attempts).
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Sets the wait before the first retry when the server gives none; it
    /// doubles for each further retry.
    pub fn with_initial_backoff(mut self, initial_backoff: Duration) -> Self {
        self.initial_backoff = initial_backoff;
        self
    }

    /// Sets the longest computed wait between attempts.
    pub fn with_max_backoff(mut self, max_backoff: Duration) -> Self {
        self.max_backoff = max_backoff;
        self
    }

    /// Sets the longest server-requested wait that is obeyed, in place of
    /// the provider's default; a longer `retry-after` falls back to the
    /// computed backoff.
    pub fn with_max_retry_after(mut self, max_retry_after: Duration) -> Self {
        self.max_retry_after = Some(max_retry_after);
        self
    }

    /// This policy with `cap` as its server-wait cap unless it has its own.
    pub(crate) fn with_default_retry_after_cap(mut self, cap: Duration) -> Self {
        self.max_retry_after.get_or_insert(cap);
        self
    }

    /// How many times a failed request is tried again.
    pub fn max_retries(&self) -> u32 {
        self.max_retries
    }

    /// The computed wait before retry number `retry` (0 for the first), with jitter.
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let factor = 2f64.powi(i32::try_from(retry.min(30)).unwrap_or(30));
        let base = self.initial_backoff.mul_f64(factor).min(self.max_backoff);
        // Up to 25% shorter, as the SDKs do, so that clients that failed together spread out.
        base.mul_f64(1.0 - 0.25 * random_unit())
    }

    /// The wait before the next attempt: the server's when it gave a usable one.
    pub(crate) fn delay(&self, retry: u32, server_wait: Option<Duration>) -> Duration {
        match server_wait {
            Some(wait) if !wait.is_zero() && wait <= self.max_retry_after.unwrap_or(DEFAULT_MAX_RETRY_AFTER) => wait,
            _ => self.backoff(retry),
        }
    }
}

/// The cap on a server's wait when neither the policy nor a format sets one.
const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// A number in `[0, 1)` from the standard library's randomly keyed hasher,
/// which is random enough for jitter and needs no extra dependency.
fn random_unit() -> f64 {
    let bits = RandomState::new().hash_one(std::time::Instant::now()) >> 11;
    #[allow(clippy::cast_precision_loss)] // 53 bits fit an f64 exactly
    let unit = bits as f64 / (1u64 << 53) as f64;
    unit
}

/// The wait the server asked for: `retry-after-ms`, else `retry-after` in
/// seconds or as an HTTP date.
pub(crate) fn server_wait(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return duration_from_secs(ms / 1000.0);
    }
    let value = text("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return duration_from_secs(seconds);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

fn duration_from_secs(seconds: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(seconds).ok()
}

/// The server's `x-should-retry` verdict, when it gave one.
pub(crate) fn should_retry_header(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()?.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Whether a response with `status` is worth trying again.
pub(crate) fn status_is_retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use reqwest::header::{HeaderMap, HeaderValue};

    use super::{RetryPolicy, server_wait, should_retry_header, status_is_retryable};

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_ms_wins_over_retry_after() {
        let wait = server_wait(&headers(&[("retry-after-ms", "1500"), ("retry-after", "9")]));
        assert_eq!(wait, Some(Duration::from_millis(1500)));
    }

    #[test]
    fn retry_after_accepts_fractional_seconds_and_http_dates() {
        assert_eq!(server_wait(&headers(&[("retry-after", "2.5")])), Some(Duration::from_millis(2500)));
        let later = SystemTime::now() + Duration::from_secs(30);
        let wait = server_wait(&headers(&[("retry-after", &httpdate::fmt_http_date(later))])).unwrap();
        assert!(wait > Duration::from_secs(25) && wait <= Duration::from_secs(30), "{wait:?}");
        let past = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(30));
        assert_eq!(server_wait(&headers(&[("retry-after", &past)])), Some(Duration::ZERO));
        assert_eq!(server_wait(&headers(&[("retry-after", "soon")])), None);
        assert_eq!(server_wait(&HeaderMap::new()), None);
    }

    #[test]
    fn server_wait_is_obeyed_only_within_bounds() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(0, Some(Duration::from_secs(3))), Duration::from_secs(3));
        // Too long or zero: the computed backoff (at most 0.5 s for the first retry).
        assert!(policy.delay(0, Some(Duration::from_secs(600))) <= Duration::from_millis(500));
        assert!(policy.delay(0, Some(Duration::ZERO)) <= Duration::from_millis(500));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_at_most_a_quarter_of_jitter() {
        let policy = RetryPolicy::default();
        for (retry, base_ms) in [(0, 500u64), (1, 1000), (2, 2000), (3, 4000), (4, 8000), (9, 8000), (40, 8000)] {
            let wait = policy.backoff(retry);
            let base = Duration::from_millis(base_ms);
            assert!(wait <= base && wait >= base.mul_f64(0.75), "retry {retry}: {wait:?}");
        }
    }

    #[test]
    fn x_should_retry_and_statuses() {
        assert_eq!(should_retry_header(&headers(&[("x-should-retry", "true")])), Some(true));
        assert_eq!(should_retry_header(&headers(&[("x-should-retry", "false")])), Some(false));
        assert_eq!(should_retry_header(&headers(&[("x-should-retry", "maybe")])), None);
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(status_is_retryable(status), "{status}");
        }
        for status in [400, 401, 403, 404, 413, 422] {
            assert!(!status_is_retryable(status), "{status}");
        }
    }
}
