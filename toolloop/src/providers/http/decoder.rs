//! The seam between a streamed body and a wire format: frames (SSE events or
//! NDJSON lines) in, neutral [`StreamEvent`]s out.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_util::Stream;
use tokio::time::Sleep;

use crate::model::ModelError;
use crate::model::StreamEvent;

/// One frame of a streamed body: an SSE event's name (`None` for the
/// default `message`) and data, or one NDJSON line (no name). Lent by its
/// [`FrameSource`] until the next one is asked for: the decoder reads it
/// where the source parsed it, nothing is allocated for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Frame<'a> {
    pub(crate) event: Option<&'a str>,
    pub(crate) data: &'a str,
}

/// The frames of a streamed body (SSE events or NDJSON lines), parsed as
/// its bytes arrive. Callers stop at the first error.
pub(crate) trait FrameSource: Send + Unpin {
    /// The next frame, lent until the next call; `None` at the end of the body.
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<'_>, ModelError>>>;
}

impl<F: FrameSource + ?Sized> FrameSource for Box<F> {
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<'_>, ModelError>>> {
        (**self).poll_frame(cx)
    }
}

/// Turns one wire format's stream into neutral events. Pure: it never does
/// I/O, so every transcript can be tested without a server.
#[allow(unreachable_pub)] // named by the sealed `Format`
pub trait StreamDecoder: Send + Unpin {
    /// Decodes one frame, appending the events it says to `out`. Error
    /// events of the API and data that cannot be understood are errors.
    fn decode(&mut self, event: Option<&str>, data: &str, out: &mut Vec<StreamEvent>) -> Result<(), ModelError>;

    /// Whether the final event has arrived; nothing after it is read.
    fn is_done(&self) -> bool;

    /// The body ended: an error unless the final event arrived (a few
    /// lenient cases may still append the events that close the response).
    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError>;
}

/// How long the rest of a body is read after the final event. A body read
/// to its end lets the connection go back to the pool for the next call (a
/// new TLS handshake otherwise); servers end it right after the final event.
const DRAIN: std::time::Duration = std::time::Duration::from_millis(250);

/// The events `decoder` makes of `frames`. The stream ends after the
/// decoder's final event (what follows is read briefly and ignored, see
/// [`DRAIN`]), at the end of the frames, or with the first error.
pub(crate) fn decode_frames<F, D>(frames: F, decoder: D) -> DecodedFrames<F, D>
where
    F: FrameSource,
    D: StreamDecoder,
{
    DecodedFrames { frames, decoder, ready: VecDeque::new(), scratch: Vec::new(), drain: None, ended: false }
}

/// The stream [`decode_frames`] returns: a plain struct polled in place (an
/// `unfold` moved its whole state in and out of a new future per event).
pub(crate) struct DecodedFrames<F, D> {
    frames: F,
    decoder: D,
    /// Decoded, not yet handed out.
    ready: VecDeque<StreamEvent>,
    /// Where the decoder appends one frame's events.
    scratch: Vec<StreamEvent>,
    /// While the rest of the body is read after the final event: until when.
    drain: Option<Pin<Box<Sleep>>>,
    ended: bool,
}

impl<F, D> Stream for DecodedFrames<F, D>
where
    F: FrameSource,
    D: StreamDecoder + Unpin,
{
    type Item = Result<StreamEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(event) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            if this.decoder.is_done() {
                return this.poll_drain(cx);
            }
            let result = match ready!(this.frames.poll_frame(cx)) {
                Some(Ok(frame)) => this.decoder.decode(frame.event, frame.data, &mut this.scratch),
                Some(Err(error)) => Err(error),
                None => {
                    this.ended = true;
                    this.decoder.finish(&mut this.scratch)
                }
            };
            if let Err(error) = result {
                // `ready` was empty before this frame: only the frame's own
                // events are dropped, never one already handed out.
                this.scratch.clear();
                this.ended = true;
                return Poll::Ready(Some(Err(error)));
            }
            // Most frames make one event: handed out without queueing.
            if this.scratch.len() == 1
                && let Some(event) = this.scratch.pop()
            {
                return Poll::Ready(Some(Ok(event)));
            }
            this.ready.extend(this.scratch.drain(..));
        }
    }
}

impl<F: FrameSource, D> DecodedFrames<F, D> {
    /// Reads what follows the final event, for [`DRAIN`] at most, then ends.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<StreamEvent, ModelError>>> {
        let drain = self.drain.get_or_insert_with(|| Box::pin(tokio::time::sleep(DRAIN)));
        loop {
            match self.frames.poll_frame(cx) {
                Poll::Ready(Some(Ok(_))) => {}
                Poll::Ready(_) => break,
                Poll::Pending if drain.as_mut().poll(cx).is_ready() => break,
                Poll::Pending => return Poll::Pending,
            }
        }
        self.ended = true;
        self.drain = None;
        Poll::Ready(None)
    }
}

/// The error for frame data a decoder could not parse.
pub(crate) fn malformed_frame(provider: &'static str, what: &str, error: &serde_json::Error, data: &str) -> ModelError {
    const LIMIT: usize = 200;
    let excerpt = match data.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &data[..cut]),
        None => data.to_owned(),
    };
    ModelError::new(
        crate::model::ModelErrorKind::MalformedResponse,
        provider,
        format!("{what} could not be parsed ({error}): {excerpt}"),
    )
}

/// The error for a stream that ended before its final event: the
/// connection was cut, so trying again may succeed.
pub(crate) fn ended_early(provider: &'static str, final_event: &str) -> ModelError {
    ModelError::new(
        crate::model::ModelErrorKind::Connection,
        provider,
        format!("the stream ended before its final event ({final_event})"),
    )
}

/// Running whole transcripts through a decoder, as the HTTP layer will.
#[cfg(test)]
pub(crate) mod testing {
    use bytes::Bytes;
    use futures_util::{StreamExt as _, stream};

    use super::{FrameSource, StreamDecoder, decode_frames};
    use crate::model::{ModelError, ModelResponse, ResponseAccumulator, StreamEvent};

    /// What a transcript decoded to.
    #[derive(Debug)]
    pub(crate) struct Decoded {
        pub(crate) events: Vec<StreamEvent>,
        /// The accumulated response, or the first error.
        pub(crate) result: Result<ModelResponse, ModelError>,
    }

    /// Decodes `body` (SSE when `sse`, else NDJSON) fed in pieces of
    /// `chunk` bytes, and accumulates the events.
    pub(crate) async fn decode<D: StreamDecoder>(decoder: D, body: &str, sse: bool, chunk: usize) -> Decoded {
        let pieces: Vec<Result<Bytes, ModelError>> =
            body.as_bytes().chunks(chunk.max(1)).map(|piece| Ok(Bytes::copy_from_slice(piece))).collect();
        let bytes = stream::iter(pieces);
        let frames: Box<dyn super::FrameSource> = if sse {
            Box::new(super::super::sse_frames("test", bytes, 1 << 20))
        } else {
            Box::new(super::super::ndjson_frames("test", bytes, 1 << 20))
        };
        let mut events = Vec::new();
        let mut accumulator = ResponseAccumulator::new();
        let mut stream = Box::pin(decode_frames(frames, decoder));
        while let Some(event) = stream.next().await {
            match event {
                Ok(event) => {
                    if let Err(error) = accumulator.push(&event) {
                        return Decoded { events, result: Err(error) };
                    }
                    events.push(event);
                }
                Err(error) => return Decoded { events, result: Err(error) },
            }
        }
        Decoded { events, result: accumulator.finish() }
    }

    /// Every frame of `source`, owned, up to the end or the first error.
    pub(crate) async fn frames(mut source: impl FrameSource) -> Vec<Result<(Option<String>, String), ModelError>> {
        let mut frames = Vec::new();
        loop {
            let next = std::future::poll_fn(|cx| {
                source.poll_frame(cx).map(|frame| {
                    frame.map(|frame| frame.map(|frame| (frame.event.map(str::to_owned), frame.data.to_owned())))
                })
            })
            .await;
            match next {
                Some(Ok(frame)) => frames.push(Ok(frame)),
                Some(Err(error)) => {
                    frames.push(Err(error));
                    return frames;
                }
                None => return frames,
            }
        }
    }

    /// Decodes `body` at several chunk sizes, checks every size gives the
    /// same events and result, and returns them.
    pub(crate) async fn decode_all_splits<D: StreamDecoder>(new: impl Fn() -> D, body: &str, sse: bool) -> Decoded {
        let whole = decode(new(), body, sse, usize::MAX).await;
        for chunk in [1, 2, 7, 64] {
            let split = decode(new(), body, sse, chunk).await;
            assert_eq!(split.events, whole.events, "chunks of {chunk} bytes");
            match (&split.result, &whole.result) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "chunks of {chunk} bytes"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "chunks of {chunk} bytes"),
                (a, b) => panic!("chunks of {chunk} bytes: {a:?} but whole: {b:?}"),
            }
        }
        whole
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use std::task::{Context, Poll};

    use futures_util::{Stream, StreamExt as _, stream};

    use super::{Frame, FrameSource, StreamDecoder, decode_frames};
    use crate::model::{ModelError, StreamEvent};

    /// Frames of data only, from a stream of them.
    struct Lines<S> {
        source: S,
        current: String,
    }

    impl<S: Stream<Item = &'static str> + Send + Unpin> FrameSource for Lines<S> {
        fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<'_>, ModelError>>> {
            let Some(data) = std::task::ready!(self.source.poll_next_unpin(cx)) else { return Poll::Ready(None) };
            data.clone_into(&mut self.current);
            Poll::Ready(Some(Ok(Frame { event: None, data: &self.current })))
        }
    }

    /// Done after the frame whose data is `end`; every other frame is a text delta.
    struct UntilEnd {
        done: bool,
    }

    impl StreamDecoder for UntilEnd {
        fn decode(&mut self, _event: Option<&str>, data: &str, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
            if data == "end" {
                self.done = true;
            } else {
                out.push(StreamEvent::TextDelta { index: 0, text: data.to_owned() });
            }
            Ok(())
        }

        fn is_done(&self) -> bool {
            self.done
        }

        fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
            Ok(())
        }
    }

    fn frames<S: Stream<Item = &'static str> + Send + Unpin>(source: S) -> Lines<S> {
        Lines { source, current: String::new() }
    }

    fn texts(events: &[Result<StreamEvent, ModelError>]) -> Vec<&str> {
        events
            .iter()
            .map(|event| match event {
                Ok(StreamEvent::TextDelta { text, .. }) => text.as_str(),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn what_follows_the_final_event_is_read_and_ignored() {
        let frames = frames(stream::iter(["a", "b", "end", "late"]));
        let events: Vec<_> = decode_frames(frames, UntilEnd { done: false }).collect().await;
        assert_eq!(texts(&events), ["a", "b"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stays_open_after_the_final_event_ends_after_the_drain() {
        let frames = frames(stream::iter(["a", "end"]).chain(stream::pending()));
        let started = tokio::time::Instant::now();
        let events: Vec<_> = decode_frames(frames, UntilEnd { done: false }).collect().await;
        assert_eq!(texts(&events), ["a"]);
        assert_eq!(started.elapsed(), super::DRAIN);
        assert!(super::DRAIN < Duration::from_secs(1));
    }
}
