//! Cancellation, and the boxed future that cancellable work returns.

use std::future::Future;
use std::pin::Pin;

pub use tokio_util::sync::CancellationToken;

/// A boxed, sendable future, as returned by [`Model::complete`](crate::Model::complete)
/// and [`DynTool::call`](crate::DynTool::call).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The work was cancelled through its [`CancellationToken`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;
