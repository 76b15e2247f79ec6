//! Server-sent events from a response body. The framing (lines, `data:`
//! continuation, comments, the blank line that ends an event, a BOM, bytes
//! split anywhere, even inside a UTF-8 character) is the `eventsource-stream`
//! crate's; this adapter adds typed errors and a bound on the size of one
//! event, strips a leading byte order mark itself (the crate's 0.2.3
//! slices one at a byte that is not a character boundary, and panics), and
//! hands the crate whole lines only (it re-reads an unfinished line from its
//! start whenever bytes arrive, quadratic in the length of a long line).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::{Bytes, BytesMut};
use eventsource_stream::{EventStreamError, Eventsource as _};
use futures_util::{Stream, StreamExt as _};

use super::decoder::Frame;
use crate::model::{ModelError, ModelErrorKind};

/// The largest event accepted by default. The final event of an OpenAI
/// Responses stream repeats the whole response, so this is generous; it
/// only stops a broken server from filling memory.
pub(crate) const MAX_EVENT_BYTES: usize = 16 << 20;

/// The most bytes handed to the SSE parser at once (see [`sse_frames`]).
const PARSER_SLICE: usize = 4 << 10;

/// The events of an SSE body. Bytes received without completing an event
/// are bounded by `max_event_bytes` (plus one network chunk); beyond it the
/// stream fails with [`ModelErrorKind::MalformedResponse`]. Transport errors
/// pass through as they are. Callers stop at the first error.
pub(crate) fn sse_frames<S>(
    provider: &'static str,
    bytes: S,
    max_event_bytes: usize,
) -> impl Stream<Item = Result<Frame, ModelError>> + Send
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send,
{
    // Bytes taken in since the last event came out. Shared because the
    // parser sits between the two ends.
    let pending = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&pending);
    let bounded = strip_bom(bytes).map(move |chunk| {
        let chunk = chunk?;
        let total = counter.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len();
        if total > max_event_bytes {
            return Err(ModelError::new(
                ModelErrorKind::MalformedResponse,
                provider,
                format!("a server-sent event exceeded {max_event_bytes} bytes"),
            ));
        }
        Ok(chunk)
    });
    // The parser copies what follows each line it reads, and reads an
    // unfinished line again from its start whenever more bytes come: it
    // gets whole lines only, in slices of about `PARSER_SLICE`, so that
    // both costs stay linear (a 2 MiB event in 16 KiB chunks took seconds).
    LineSlices::new(Box::pin(bounded)).eventsource().map(move |item| match item {
        Ok(event) => {
            pending.store(0, Ordering::Relaxed);
            let name = (event.event != "message").then_some(event.event);
            Ok(Frame { event: name, data: event.data })
        }
        Err(EventStreamError::Transport(error)) => Err(error),
        Err(EventStreamError::Utf8(error)) => Err(ModelError::new(
            ModelErrorKind::MalformedResponse,
            provider,
            format!("the event stream is not UTF-8: {error}"),
        )),
        Err(EventStreamError::Parser(error)) => Err(ModelError::new(
            ModelErrorKind::MalformedResponse,
            provider,
            format!("the event stream could not be parsed: {error}"),
        )),
    })
}

/// A byte stream re-cut into slices that each end at a line break (CR or
/// LF, which the SSE parser joins when split), of about [`PARSER_SLICE`]
/// bytes where lines allow: bytes after a chunk's last line break wait for
/// the next one, and only the new bytes are searched. What is left at the
/// end of the stream goes out last.
struct LineSlices<S> {
    source: Option<S>,
    /// Bytes after the last line break seen (no line break among them).
    unfinished: BytesMut,
    /// Whole lines not yet handed out.
    lines: Bytes,
}

impl<S> LineSlices<S> {
    fn new(source: S) -> Self {
        Self { source: Some(source), unfinished: BytesMut::new(), lines: Bytes::new() }
    }

    /// The next slice of `lines`: at least `PARSER_SLICE` bytes (or all),
    /// ending at a line break.
    fn next_slice(&mut self) -> Option<Bytes> {
        if self.lines.is_empty() {
            return None;
        }
        let from = PARSER_SLICE.min(self.lines.len()) - 1;
        let end = self.lines[from..]
            .iter()
            .position(|&byte| matches!(byte, b'\n' | b'\r'))
            .map_or(self.lines.len(), |at| from + at + 1);
        Some(self.lines.split_to(end))
    }

    /// Takes in `chunk`: the whole lines it completes become `lines`.
    fn take_in(&mut self, mut chunk: Bytes) {
        let Some(last_break) = chunk.iter().rposition(|&byte| matches!(byte, b'\n' | b'\r')) else {
            self.unfinished.extend_from_slice(&chunk);
            return;
        };
        let rest = chunk.split_off(last_break + 1);
        self.lines = if self.unfinished.is_empty() {
            chunk
        } else {
            self.unfinished.extend_from_slice(&chunk);
            self.unfinished.split().freeze()
        };
        self.unfinished.extend_from_slice(&rest);
    }
}

impl<S> Stream for LineSlices<S>
where
    S: Stream<Item = Result<Bytes, ModelError>> + Unpin,
{
    type Item = Result<Bytes, ModelError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;

        let this = &mut *self;
        loop {
            if let Some(slice) = this.next_slice() {
                return Poll::Ready(Some(Ok(slice)));
            }
            let Some(source) = this.source.as_mut() else {
                return Poll::Ready(None);
            };
            match std::task::ready!(source.poll_next_unpin(cx)) {
                // The usual chunk (a server writes an event at a time): whole
                // lines, small, nothing waiting before it: handed on as it is.
                Some(Ok(chunk))
                    if this.unfinished.is_empty()
                        && chunk.len() <= PARSER_SLICE
                        && chunk.last().is_some_and(|&byte| matches!(byte, b'\n' | b'\r')) =>
                {
                    return Poll::Ready(Some(Ok(chunk)));
                }
                Some(Ok(chunk)) => this.take_in(chunk),
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                None => {
                    this.source = None;
                    // An unfinished last line: the parser decides what it is.
                    if !this.unfinished.is_empty() {
                        return Poll::Ready(Some(Ok(this.unfinished.split().freeze())));
                    }
                }
            }
        }
    }
}

/// `bytes` without the byte order marks at its start, however the bytes
/// are split.
fn strip_bom<S>(bytes: S) -> impl Stream<Item = Result<Bytes, ModelError>> + Send
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send,
{
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let mut leading = Some(Vec::new());
    bytes.map(move |chunk| {
        let chunk = chunk?;
        let Some(mut kept) = leading.take() else { return Ok(chunk) };
        if kept.is_empty() && chunk.first().is_some_and(|&byte| byte != BOM[0]) {
            return Ok(chunk);
        }
        kept.extend_from_slice(&chunk);
        let mut rest = kept.as_slice();
        while let Some(after) = rest.strip_prefix(BOM) {
            rest = after;
        }
        if rest.len() < BOM.len() && BOM.starts_with(rest) {
            // Nothing yet, or what may be the start of a mark.
            leading = Some(rest.to_vec());
            return Ok(Bytes::new());
        }
        Ok(Bytes::copy_from_slice(rest))
    })
}

/// The body of `response` as a stream of bytes, transport failures mapped as
/// for non-streamed calls (a timeout is [`ModelErrorKind::Timeout`], anything
/// else [`ModelErrorKind::Connection`]).
pub(crate) fn body_bytes(
    provider: &'static str,
    response: reqwest::Response,
) -> impl Stream<Item = Result<Bytes, ModelError>> + Send {
    response.bytes_stream().map(move |chunk| chunk.map_err(|error| super::error::transport_error(provider, &error)))
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use bytes::Bytes;
    use futures_util::{StreamExt as _, stream};

    use super::{Frame, body_bytes, sse_frames};
    use crate::model::{ModelError, ModelErrorKind};

    fn frame(event: Option<&str>, data: &str) -> Frame {
        Frame { event: event.map(str::to_owned), data: data.to_owned() }
    }

    async fn frames(chunks: &[&[u8]], limit: usize) -> Vec<Result<Frame, ModelError>> {
        let chunks: Vec<Result<Bytes, ModelError>> = chunks.iter().map(|c| Ok(Bytes::copy_from_slice(c))).collect();
        sse_frames("test", stream::iter(chunks), limit).collect().await
    }

    #[tokio::test]
    async fn events_survive_any_split_of_the_bytes() {
        let body = "\u{feff}: comment\r\nevent: content_block_delta\r\ndata: {\"text\":\"h\u{e9}\"}\r\n\r\n\
                    data: line one\ndata: line two\n\nevent: message\ndata: [DONE]\n\n";
        let expected = vec![
            frame(Some("content_block_delta"), "{\"text\":\"h\u{e9}\"}"),
            frame(None, "line one\nline two"),
            frame(None, "[DONE]"),
        ];
        let bytes = body.as_bytes();
        for cut in 0..=bytes.len() {
            for second in cut..=bytes.len() {
                let got = frames(&[&bytes[..cut], &bytes[cut..second], &bytes[second..]], 1 << 20).await;
                let got: Vec<Frame> = got.into_iter().map(Result::unwrap).collect();
                assert_eq!(got, expected, "split at {cut} and {second}");
            }
        }
    }

    #[tokio::test]
    async fn a_large_chunk_of_many_events_is_framed_across_parser_slices() {
        let body = (0..2_000).fold(String::new(), |mut body, i| {
            let _ = write!(body, "event: e{i}\ndata: {{\"n\":{i}}}\n\n");
            body
        });
        assert!(body.len() > 8 * super::PARSER_SLICE);
        let got = frames(&[body.as_bytes()], 1 << 20).await;
        assert_eq!(got.len(), 2_000);
        for (i, frame) in got.into_iter().enumerate() {
            let frame = frame.unwrap();
            assert_eq!((frame.event.unwrap(), frame.data), (format!("e{i}"), format!("{{\"n\":{i}}}")));
        }
    }

    #[tokio::test]
    async fn byte_order_marks_at_the_start_never_panic() {
        let body = "\u{feff}\u{feff}data: a\n\n";
        for cut in 0..=body.len() {
            let got = frames(&[&body.as_bytes()[..cut], &body.as_bytes()[cut..]], 1 << 20).await;
            assert_eq!(got.into_iter().map(Result::unwrap).collect::<Vec<_>>(), [frame(None, "a")], "split at {cut}");
        }
    }

    #[tokio::test]
    async fn an_event_larger_than_the_bound_fails() {
        let big = format!("data: {}\n\n", "x".repeat(100));
        let ok = frames(&[big.as_bytes(), big.as_bytes()], 120).await;
        const { assert!(super::MAX_EVENT_BYTES >= 1 << 20) };
        assert_eq!(ok.len(), 2);
        assert!(ok.iter().all(Result::is_ok));
        let endless = [b"data: ".as_slice(), &[b'x'; 64], &[b'x'; 64], b"\n\n"];
        let failed = frames(&endless, 100).await;
        let error = failed.into_iter().find_map(Result::err).unwrap();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
        assert!(error.message().contains("exceeded 100 bytes"), "{error}");
    }

    #[tokio::test]
    async fn transport_errors_pass_through_and_bad_utf8_is_malformed() {
        let chunks = vec![
            Ok(Bytes::from_static(b"data: a\n\n")),
            Err(ModelError::new(ModelErrorKind::Connection, "test", "reset")),
        ];
        let got: Vec<_> = sse_frames("test", stream::iter(chunks), 1 << 20).collect().await;
        assert_eq!(got[0].as_ref().unwrap(), &frame(None, "a"));
        assert_eq!(got[1].as_ref().unwrap_err().kind(), ModelErrorKind::Connection);
        let got = frames(&[b"data: \xff\xfe\n\n"], 1 << 20).await;
        assert_eq!(got[0].as_ref().unwrap_err().kind(), ModelErrorKind::MalformedResponse);
    }

    /// reqwest's `bytes_stream` (the `stream` feature) feeding the adapter,
    /// from a server on 127.0.0.1 that writes the body in pieces.
    #[tokio::test]
    async fn a_chunked_http_body_streams_event_by_event() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = vec![0; 4096];
            let _ = socket.read(&mut request).await.unwrap();
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            socket.write_all(head.as_bytes()).await.unwrap();
            let chunk = |data: &str| format!("{:x}\r\n{data}\r\n", data.len());
            socket.write_all(chunk("event: ping\ndata: {}\n\ndata: {\"a\":").as_bytes()).await.unwrap();
            // The first event must reach the client before the rest is sent.
            released.await.unwrap();
            socket.write_all(chunk("1}\n\n").as_bytes()).await.unwrap();
            socket.write_all(b"0\r\n\r\n").await.unwrap();
        });
        let client = super::super::client::new_client().unwrap();
        let response = client.get(format!("http://{address}/")).send().await.unwrap();
        let mut events = Box::pin(sse_frames("test", body_bytes("test", response), 1 << 20));
        assert_eq!(events.next().await.unwrap().unwrap(), frame(Some("ping"), "{}"));
        release.send(()).unwrap();
        assert_eq!(events.next().await.unwrap().unwrap(), frame(None, "{\"a\":1}"));
        assert!(events.next().await.is_none());
        server.await.unwrap();
    }

    /// One event of 2 MiB (a Responses `response.completed` repeats the
    /// whole answer) arriving in 16 KiB chunks is one frame; the parser
    /// sees only whole lines, so this is linear (it used to take seconds).
    #[tokio::test]
    async fn a_large_event_in_many_chunks_is_one_frame() {
        let text = "x".repeat(2 << 20);
        let big = format!("event: response.completed\ndata: {{\"text\":\"{text}\"}}\n\n");
        let chunks: Vec<&[u8]> = big.as_bytes().chunks(16 << 10).collect();
        let got = frames(&chunks, 16 << 20).await;
        assert_eq!(got.len(), 1);
        let frame = got.into_iter().next().unwrap().unwrap();
        assert_eq!(frame.event.as_deref(), Some("response.completed"));
        assert_eq!(frame.data.len(), text.len() + 11);
    }
}
