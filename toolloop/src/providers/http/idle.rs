//! Ending a streamed body that stalls.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};
use tokio::time::{Instant, Sleep};

use crate::model::{ModelError, ModelErrorKind};

/// `stream`, failing with [`ModelErrorKind::Timeout`] when no item arrives
/// for `idle`. A server's keep-alive pings count as items: put this on the
/// bytes of a body, where a stall means the connection carries nothing.
pub(crate) fn idle_timeout<S, T>(
    provider: &'static str,
    stream: S,
    idle: Duration,
) -> impl Stream<Item = Result<T, ModelError>> + Send
where
    S: Stream<Item = Result<T, ModelError>> + Send + Unpin,
    T: Send,
{
    let last_item = Instant::now();
    IdleTimeout {
        provider,
        stream: Some(stream),
        idle,
        last_item,
        timer: Box::pin(tokio::time::sleep_until(deadline(last_item, idle))),
        registered: None,
    }
}

/// `idle` after `from`; as good as never when that is past what an
/// `Instant` can hold (an idle timeout of `Duration::MAX`).
fn deadline(from: Instant, idle: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);
    from.checked_add(idle).unwrap_or_else(|| from + CENTURY)
}

/// One timer for the whole stream, pushed back lazily: an item only notes
/// the time, and the timer, when it fires early, moves to the new deadline.
/// (A timer per item, as `tokio::time::timeout` around each `next()` makes,
/// cost more than parsing the item.)
struct IdleTimeout<S> {
    provider: &'static str,
    /// `None` once ended.
    stream: Option<S>,
    idle: Duration,
    last_item: Instant,
    timer: Pin<Box<Sleep>>,
    /// The waker the timer last registered. A body is read an event at a
    /// time, so the stream waits after nearly every item; polling the timer
    /// each time only to register the same waker again cost more than the
    /// rest of this layer. `None` forces the next wait to register.
    registered: Option<Waker>,
}

impl<S, T> Stream for IdleTimeout<S>
where
    S: Stream<Item = Result<T, ModelError>> + Unpin,
{
    type Item = Result<T, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(stream) = this.stream.as_mut() else { return Poll::Ready(None) };
        if let Poll::Ready(item) = stream.poll_next_unpin(cx) {
            if item.is_some() {
                this.last_item = Instant::now();
            } else {
                this.stream = None;
            }
            return Poll::Ready(item);
        }
        let same_waker = this.registered.as_ref().is_some_and(|waker| waker.will_wake(cx.waker()));
        if same_waker && !this.timer.is_elapsed() {
            // The timer holds this task's waker: it wakes it when it fires.
            return Poll::Pending;
        }
        while this.timer.as_mut().poll(cx).is_ready() {
            let deadline = deadline(this.last_item, this.idle);
            if Instant::now() >= deadline {
                this.stream = None;
                let message = format!("the stream sent nothing for {} ms", this.idle.as_millis());
                return Poll::Ready(Some(Err(ModelError::new(ModelErrorKind::Timeout, this.provider, message))));
            }
            // Items came since the timer was set: wait for the new deadline.
            this.timer.as_mut().reset(deadline);
        }
        if !same_waker {
            this.registered = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures_util::{StreamExt as _, stream};

    use super::idle_timeout;
    use crate::model::{ModelError, ModelErrorKind};

    #[tokio::test(start_paused = true)]
    async fn a_stall_longer_than_the_idle_timeout_ends_the_stream() {
        // Items 1 s apart pass a 2 s idle timeout; then the source stalls.
        let source = stream::iter([1, 2])
            .then(|item| async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok::<_, ModelError>(item)
            })
            .chain(stream::pending());
        let items: Vec<_> = idle_timeout("test", Box::pin(source), Duration::from_secs(2)).collect().await;
        assert_eq!(items.len(), 3);
        assert_eq!((items[0].as_ref().unwrap(), items[1].as_ref().unwrap()), (&1, &2));
        let error = items[2].as_ref().unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Timeout);
        assert!(error.message().contains("2000 ms"), "{error}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_stream_of_items_closer_than_the_idle_timeout_never_times_out() {
        // 10 items 1.5 s apart: 15 s in all, far past the 2 s timeout that
        // the single timer was first set to.
        let source = stream::iter(0..10).then(|item| async move {
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            Ok::<_, ModelError>(item)
        });
        let items: Vec<_> = idle_timeout("test", Box::pin(source), Duration::from_secs(2)).collect().await;
        assert_eq!(items.into_iter().map(Result::unwrap).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_timeout_of_duration_max_never_fires() {
        let source = stream::iter([1]).then(|item| async move {
            tokio::time::sleep(Duration::from_secs(3_600)).await;
            Ok::<_, ModelError>(item)
        });
        let items: Vec<_> = idle_timeout("test", Box::pin(source), Duration::MAX).collect().await;
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].as_ref().unwrap(), &1);
    }
}
