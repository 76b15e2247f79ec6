//! Running blocking work inside a tool so that its timeout covers it.

/// Runs `work` (synchronous sleeps, CPU-heavy or blocking I/O code) on
/// tokio's blocking thread pool and waits for it without blocking the
/// runtime.
///
/// A tool that blocks its thread directly cannot be stopped: its timeout,
/// cancellation and the run's deadline all work by dropping the tool's
/// future, which only happens when the future yields. Awaiting this helper
/// yields, so the timeout fires on time and the call is answered with a
/// [`FailureKind::TimedOut`](crate::FailureKind::TimedOut) result.
///
/// What it cannot do, honestly: Rust cannot kill a thread, so work that has
/// started keeps running on its blocking thread until it returns, and its
/// result is thrown away. Keep such work bounded, or check a flag in it.
///
/// # Panics
/// When `work` panics, the panic is resumed in the tool, which the tool set
/// turns into a [`FailureKind::Panicked`](crate::FailureKind::Panicked) result.
///
/// ```
/// # #[allow(clippy::unused_async)]
/// /// Hash a file.
/// #[derive(toolloop::Tool)]
/// #[tool(timeout = "5s")]
/// struct Checksum {
///     /// The file's path.
///     path: String,
/// }
///
/// impl Checksum {
///     async fn run(self) -> Result<u64, String> {
///         toolloop::tool::run_blocking(move || std::fs::read(&self.path).map(|bytes| bytes.len() as u64))
///             .await
///             .map_err(|error| error.to_string())
///     }
/// }
/// ```
pub async fn run_blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    }
}
