//! Cancellation, and the boxed future that cancellable work returns
//! (futures-util's [`BoxFuture`], re-exported as `toolloop::model::BoxFuture`).

use std::future::Future;
use std::pin::Pin;

pub(crate) use futures_util::future::BoxFuture;
pub(crate) use tokio_util::sync::CancellationToken;

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

#[cfg(test)]
mod tests {
    use std::future::Future as _;
    use std::pin::pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Wake, Waker};

    use super::{CancellationToken, cancelled};

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Waker, Arc<Count>) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (Waker::from(Arc::clone(&count)), count)
    }

    #[test]
    fn the_cancellation_wakes_the_latest_waker_and_resolves() {
        let token = CancellationToken::new();
        let mut future = pin!(cancelled(&token));
        let (first, first_wakes) = waker();
        let (second, second_wakes) = waker();
        assert!(future.as_mut().poll(&mut Context::from_waker(&first)).is_pending());
        assert!(future.as_mut().poll(&mut Context::from_waker(&first)).is_pending());
        // Moved to another task: the new waker is the one registered.
        assert!(future.as_mut().poll(&mut Context::from_waker(&second)).is_pending());
        token.cancel();
        assert_eq!(second_wakes.0.load(Ordering::SeqCst), 1);
        assert_eq!(first_wakes.0.load(Ordering::SeqCst), 0);
        assert!(future.as_mut().poll(&mut Context::from_waker(&second)).is_ready());
    }

    #[test]
    fn a_token_cancelled_before_the_first_poll_resolves_at_once() {
        let token = CancellationToken::new();
        token.cancel();
        let (waker, _) = waker();
        assert!(pin!(cancelled(&token)).poll(&mut Context::from_waker(&waker)).is_ready());
    }
}
