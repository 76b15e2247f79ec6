//! Ending a streamed body that stalls, or grows past the size limit.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};
use tokio::time::{Instant, Sleep};

use crate::model::{ModelError, ModelErrorKind};

/// `stream`, the chunks of a streamed body, failing with
/// [`ModelErrorKind::Timeout`] when no chunk arrives for `idle`, and with
/// [`ModelErrorKind::ResponseTooLarge`] once the chunks come to more than
/// `limit` bytes (memory stays bounded whatever the server sends). A
/// server's keep-alive pings count as chunks: a stall means the connection
/// carries nothing. One layer for both bounds: every chunk passes it.
pub(crate) fn bounded_body<S>(
    provider: &'static str,
    stream: S,
    idle: Duration,
    limit: u64,
) -> impl Stream<Item = Result<Bytes, ModelError>> + Send
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send + Unpin,
{
    let last_item = Instant::now();
    BoundedBody {
        provider,
        stream: Some(stream),
        idle,
        last_item,
        timer: Box::pin(tokio::time::sleep_until(deadline(last_item, idle))),
        registered: None,
        limit,
        total: 0,
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
struct BoundedBody<S> {
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
    /// The most bytes the chunks may come to, and what they came to so far.
    limit: u64,
    total: u64,
}

impl<S> Stream for BoundedBody<S>
where
    S: Stream<Item = Result<Bytes, ModelError>> + Unpin,
{
    type Item = Result<Bytes, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(stream) = this.stream.as_mut() else { return Poll::Ready(None) };
        if let Poll::Ready(item) = stream.poll_next_unpin(cx) {
            match &item {
                Some(Ok(chunk)) => {
                    this.last_item = Instant::now();
                    this.total += chunk.len() as u64;
                    if this.total > this.limit {
                        this.stream = None;
                        let message = format!("the streamed response is larger than the limit of {} bytes", this.limit);
                        return Poll::Ready(Some(Err(ModelError::new(
                            ModelErrorKind::ResponseTooLarge,
                            this.provider,
                            message,
                        ))));
                    }
                }
                Some(Err(_)) => this.last_item = Instant::now(),
                None => this.stream = None,
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

    use bytes::Bytes;
    use futures_util::{StreamExt as _, stream};

    use super::bounded_body;
    use crate::model::{ModelError, ModelErrorKind};

    #[tokio::test(start_paused = true)]
    async fn a_stall_longer_than_the_idle_timeout_ends_the_stream() {
        // Items 1 s apart pass a 2 s idle timeout; then the source stalls.
        let source = stream::iter([1u8, 2])
            .then(|item| async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok::<_, ModelError>(Bytes::from(vec![item]))
            })
            .chain(stream::pending());
        let items: Vec<_> = bounded_body("test", Box::pin(source), Duration::from_secs(2), u64::MAX).collect().await;
        assert_eq!(items.len(), 3);
        assert_eq!((&items[0].as_ref().unwrap()[..], &items[1].as_ref().unwrap()[..]), (&[1][..], &[2][..]));
        let error = items[2].as_ref().unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Timeout);
        assert!(error.message().contains("2000 ms"), "{error}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_stream_of_items_closer_than_the_idle_timeout_never_times_out() {
        // 10 items 1.5 s apart: 15 s in all, far past the 2 s timeout that
        // the single timer was first set to.
        let source = stream::iter(0u8..10).then(|item| async move {
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            Ok::<_, ModelError>(Bytes::from(vec![item]))
        });
        let items: Vec<_> = bounded_body("test", Box::pin(source), Duration::from_secs(2), u64::MAX).collect().await;
        assert_eq!(items.into_iter().map(|item| item.unwrap()[0]).collect::<Vec<_>>(), (0..10).collect::<Vec<u8>>());
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_timeout_of_duration_max_never_fires() {
        let source = stream::iter([1u8]).then(|item| async move {
            tokio::time::sleep(Duration::from_secs(3_600)).await;
            Ok::<_, ModelError>(Bytes::from(vec![item]))
        });
        let items: Vec<_> = bounded_body("test", Box::pin(source), Duration::MAX, u64::MAX).collect().await;
        assert_eq!(items.len(), 1);
        assert_eq!(&items[0].as_ref().unwrap()[..], &[1][..]);
    }

    #[tokio::test]
    async fn chunks_past_the_size_limit_end_the_stream_with_a_typed_error() {
        // 4 + 4 bytes pass a limit of 10; the third chunk takes them to 12.
        let chunks = [b"abcd", b"efgh", b"ijkl"].map(|chunk| Ok::<_, ModelError>(Bytes::from_static(chunk)));
        let source = stream::iter(chunks).chain(stream::pending());
        let items: Vec<_> = bounded_body("test", Box::pin(source), Duration::from_secs(60), 10).collect().await;
        assert_eq!(items.len(), 3, "nothing after the error");
        assert_eq!(&items[1].as_ref().unwrap()[..], b"efgh");
        let error = items[2].as_ref().unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::ResponseTooLarge);
        assert!(error.message().contains("limit of 10 bytes"), "{error}");
    }
}
