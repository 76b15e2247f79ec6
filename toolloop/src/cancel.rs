//! Cancellation.

pub use tokio_util::sync::CancellationToken;

/// The work was cancelled through its [`CancellationToken`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;
