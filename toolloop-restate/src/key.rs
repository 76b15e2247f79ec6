//! The idempotency key of the tool execution in progress.

tokio::task_local! {
    static IDEMPOTENCY_KEY: String;
}

/// The idempotency key of the tool call being executed in a durable run:
/// `{invocation id}/{call id}`, the same every time the call's step is
/// attempted (after a crash, on another worker). `None` outside a durable
/// tool execution.
///
/// Pass it to the systems a tool changes (an `Idempotency-Key` header, a
/// unique column) so that a step that runs again after a crash does not
/// change them twice: a tool whose step did not complete before a crash
/// runs again (at least once), a completed one never does.
///
/// ```
/// /// Send an email.
/// #[derive(toolloop::Tool)]
/// struct SendEmail {
///     /// To whom.
///     to: String,
/// }
///
/// impl SendEmail {
///     async fn run(self) -> Result<String, String> {
///         let key = toolloop_restate::idempotency_key().unwrap_or_default();
///         // mailer.send(&self.to, ..).idempotency_key(&key).await
///         Ok(format!("sent to {} ({key})", self.to))
///     }
/// }
/// ```
pub fn idempotency_key() -> Option<String> {
    IDEMPOTENCY_KEY.try_with(Clone::clone).ok()
}

/// Runs `work` with `key` as the idempotency key.
pub(crate) async fn with_key<F: Future>(key: String, work: F) -> F::Output {
    IDEMPOTENCY_KEY.scope(key, work).await
}
