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

/// Resolves when `token` is cancelled, as [`CancellationToken::cancelled`]
/// does, for a future that waits beside a long stream of other wake-ups (a
/// streamed model call is polled again for every event it receives).
///
/// Polling the token's own future again locks its waiter list to check the
/// waker; this one checks the flag and re-registers only when the task's
/// waker changed: the registered waker is woken by the cancellation, and the
/// flag says so at the next poll.
pub(crate) fn cancelled(token: &CancellationToken) -> Cancellation<'_> {
    Cancellation { token, waiting: Box::pin(token.cancelled()), registered: None }
}

/// The future of [`cancelled`].
pub(crate) struct Cancellation<'a> {
    token: &'a CancellationToken,
    waiting: Pin<Box<tokio_util::sync::WaitForCancellationFuture<'a>>>,
    /// The waker `waiting` last registered.
    registered: Option<std::task::Waker>,
}

impl Future for Cancellation<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        let this = &mut *self;
        if this.token.is_cancelled() {
            return std::task::Poll::Ready(());
        }
        if this.registered.as_ref().is_some_and(|waker| waker.will_wake(cx.waker())) {
            return std::task::Poll::Pending;
        }
        let poll = this.waiting.as_mut().poll(cx);
        if poll.is_pending() {
            this.registered = Some(cx.waker().clone());
        }
        poll
    }
}
