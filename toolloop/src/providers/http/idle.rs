//! Ending a streamed body that stalls.

use std::time::Duration;

use futures_util::{Stream, StreamExt as _};

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
    futures_util::stream::unfold(Some(stream), move |stream| async move {
        let mut stream = stream?;
        match tokio::time::timeout(idle, stream.next()).await {
            Ok(Some(item)) => Some((item, Some(stream))),
            Ok(None) => None,
            Err(_) => {
                let message = format!("the stream sent nothing for {} ms", idle.as_millis());
                Some((Err(ModelError::new(ModelErrorKind::Timeout, provider, message)), None))
            }
        }
    })
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
}
