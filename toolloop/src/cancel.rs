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

/// Why [`guarded`] work stopped before it finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Interruption {
    /// The run's token was cancelled.
    Cancelled,
    /// The run's deadline (its `max_duration`) passed.
    Deadline,
}

/// `work`, cut short when `token` (if any) is cancelled or `deadline` (if
/// any) passes: what a
/// `biased` `tokio::select!` on the cancellation, the deadline and the work
/// does, in that order, with one difference in cost only. The token and the
/// clock are checked before every poll of the work, and the waits for them
/// (a waker in the token's list, a timer) are set up only once the work is
/// pending: work that finishes at its first poll (a tool call that does not
/// wait, a governance decision) costs neither, and a run without a
/// `max_duration` never touches the clock.
pub(crate) fn guarded<F: Future + Unpin>(
    token: Option<&CancellationToken>,
    deadline: Option<tokio::time::Instant>,
    work: F,
) -> Guarded<'_, F> {
    Guarded { work, token, deadline, cancellation: None, timer: None }
}

/// The future of [`guarded`].
pub(crate) struct Guarded<'a, F> {
    work: F,
    token: Option<&'a CancellationToken>,
    deadline: Option<tokio::time::Instant>,
    /// Set up at the first poll that leaves the work pending.
    cancellation: Option<Cancellation<'a>>,
    /// The same, when there is a deadline.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<F: Future + Unpin> Future for Guarded<'_, F> {
    type Output = Result<F::Output, Interruption>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        use std::task::Poll;

        let this = &mut *self;
        if this.token.is_some_and(CancellationToken::is_cancelled) {
            return Poll::Ready(Err(Interruption::Cancelled));
        }
        if let Some(deadline) = this.deadline {
            let passed = match &mut this.timer {
                Some(timer) => timer.as_mut().poll(cx).is_ready(),
                None => tokio::time::Instant::now() >= deadline,
            };
            if passed {
                return Poll::Ready(Err(Interruption::Deadline));
            }
        }
        if let Poll::Ready(output) = Pin::new(&mut this.work).poll(cx) {
            return Poll::Ready(Ok(output));
        }
        // The work waits: so do the cancellation and the deadline, to wake
        // this task when either comes first.
        if let Some(token) = this.token
            && Pin::new(this.cancellation.get_or_insert_with(|| cancelled(token))).poll(cx).is_ready()
        {
            return Poll::Ready(Err(Interruption::Cancelled));
        }
        if let (Some(deadline), None) = (this.deadline, &this.timer) {
            let timer = this.timer.insert(Box::pin(tokio::time::sleep_until(deadline)));
            if timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(Interruption::Deadline));
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future as _;
    use std::pin::pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Wake, Waker};

    use super::{CancellationToken, Interruption, cancelled, guarded};

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
    fn guarded_work_that_is_ready_at_once_registers_nothing() {
        let token = CancellationToken::new();
        let (waker, woken) = waker();
        let mut cx = Context::from_waker(&waker);
        let work = pin!(guarded(Some(&token), None, std::future::ready(7)));
        assert_eq!(work.poll(&mut cx), std::task::Poll::Ready(Ok(7)));
        // Nothing waits on the token: cancelling it wakes no one.
        token.cancel();
        assert_eq!(woken.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn guarded_work_stops_when_the_token_is_cancelled_before_or_while_it_waits() {
        let token = CancellationToken::new();
        token.cancel();
        let (waker, woken) = waker();
        let mut cx = Context::from_waker(&waker);
        let ready = pin!(guarded(Some(&token), None, std::future::ready(7)));
        assert_eq!(ready.poll(&mut cx), std::task::Poll::Ready(Err(Interruption::Cancelled)));

        let token = CancellationToken::new();
        let mut waiting = pin!(guarded(Some(&token), None, std::future::pending::<()>()));
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        token.cancel();
        assert_eq!(woken.0.load(Ordering::SeqCst), 1, "the pending work's task is woken");
        assert_eq!(waiting.poll(&mut cx), std::task::Poll::Ready(Err(Interruption::Cancelled)));
    }

    #[tokio::test(start_paused = true)]
    async fn guarded_work_stops_at_the_deadline_and_not_before() {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        let slow = tokio::time::sleep(std::time::Duration::from_secs(10));
        assert_eq!(guarded(None, Some(deadline), Box::pin(slow)).await, Err(Interruption::Deadline));
        assert!(tokio::time::Instant::now() >= deadline);

        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        let quick = async {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            "done"
        };
        assert_eq!(guarded(None, Some(deadline), Box::pin(quick)).await, Ok("done"));
        // A deadline already past stops work that would be ready.
        let past = guarded(None, Some(tokio::time::Instant::now()), std::future::ready(1)).await;
        assert_eq!(past, Err(Interruption::Deadline));
    }

    #[test]
    fn a_token_cancelled_before_the_first_poll_resolves_at_once() {
        let token = CancellationToken::new();
        token.cancel();
        let (waker, _) = waker();
        assert!(pin!(cancelled(&token)).poll(&mut Context::from_waker(&waker)).is_ready());
    }
}
