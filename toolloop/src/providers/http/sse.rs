//! Server-sent events from a response body, parsed in one pass over the
//! bytes as they arrive: lines cut where they end (CR, LF or CRLF, split
//! anywhere, even inside a UTF-8 character), `data:` lines joined, comments
//! and unknown fields skipped, the blank line that ends an event, byte order
//! marks at the start, a bound on the size of one event. Each event's name
//! and data are lent to the decoder from two buffers kept for the whole
//! body: nothing is allocated per event, and a line is copied once, when it
//! arrived split across chunks.
//!
//! (This replaced `eventsource-stream` behind three adapters: it copied
//! every chunk into a `String`, then every line's remainder into a new one,
//! and built owned strings for every field; a streamed run's client ran
//! about a third fewer instructions per event without it, BENCHMARKS.md
//! section 9.)

use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};

use super::decoder::{Frame, FrameSource};
use crate::model::{ModelError, ModelErrorKind};

/// The largest event accepted by default. The final event of an OpenAI
/// Responses stream repeats the whole response, so this is generous; it
/// only stops a broken server from filling memory.
pub(crate) const MAX_EVENT_BYTES: usize = 16 << 20;

/// The byte order mark a body may start with.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The events of an SSE body. Bytes received without completing an event
/// are bounded by `max_event_bytes` (plus one network chunk); beyond it the
/// stream fails with [`ModelErrorKind::MalformedResponse`]. Transport errors
/// pass through as they are. Callers stop at the first error.
pub(crate) fn sse_frames<S>(provider: &'static str, bytes: S, max_event_bytes: usize) -> SseFrames<S>
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send + Unpin,
{
    SseFrames {
        provider,
        source: Some(bytes),
        max_event_bytes,
        received: 0,
        chunk: Bytes::new(),
        at: 0,
        unfinished: Vec::new(),
        after_cr: false,
        leading: Some(Vec::new()),
        event: Event::default(),
        lent: false,
    }
}

/// The frames [`sse_frames`] makes.
pub(crate) struct SseFrames<S> {
    provider: &'static str,
    /// `None` once the body ended or failed.
    source: Option<S>,
    max_event_bytes: usize,
    /// Bytes received since the last event was handed out.
    received: usize,
    /// The chunk being parsed, from `at` on.
    chunk: Bytes,
    at: usize,
    /// The start of a line whose end has not arrived yet.
    unfinished: Vec<u8>,
    /// The last line ended with CR: an LF right after it belongs to it.
    after_cr: bool,
    /// Until the first byte that is not a byte order mark: the bytes seen
    /// so far (what may be the start of a mark).
    leading: Option<Vec<u8>>,
    /// The event being read.
    event: Event,
    /// Whether `event` was lent out (it is cleared before the next one).
    lent: bool,
}

/// The fields of one event so far.
#[derive(Default)]
struct Event {
    /// The `event:` field (empty: none).
    name: String,
    /// Every `data:` field, each followed by LF.
    data: String,
}

impl Event {
    /// Takes in one line (without its line break); `true` when it ended an
    /// event that has data (whose last LF is then removed).
    fn line(&mut self, line: &[u8], provider: &'static str) -> Result<bool, ModelError> {
        let line = std::str::from_utf8(line).map_err(|error| {
            ModelError::new(
                ModelErrorKind::MalformedResponse,
                provider,
                format!("the event stream is not UTF-8: {error}"),
            )
        })?;
        if line.is_empty() {
            if self.data.pop().is_some() {
                return Ok(true);
            }
            // No data: no event (its name is forgotten too).
            self.name.clear();
            return Ok(false);
        }
        let (field, value) = match line.split_once(':') {
            // A comment.
            Some(("", _)) => return Ok(false),
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => value.clone_into(&mut self.name),
            // `id` and `retry` are for reconnecting, which a model call never does.
            _ => {}
        }
        Ok(false)
    }

    fn frame(&self) -> Frame<'_> {
        let event = (!self.name.is_empty() && self.name != "message").then_some(self.name.as_str());
        Frame { event, data: &self.data }
    }

    fn clear(&mut self) {
        self.name.clear();
        self.data.clear();
    }
}

impl<S> SseFrames<S> {
    /// Reads the lines of the chunk in hand until one ends an event
    /// (`true`) or the chunk is used up (`false`).
    fn parse(&mut self) -> Result<bool, ModelError> {
        let provider = self.provider;
        let Self { chunk, at, unfinished, after_cr, event, .. } = self;
        while *at < chunk.len() {
            if std::mem::take(after_cr) && chunk[*at] == b'\n' {
                *at += 1;
                continue;
            }
            let rest = &chunk[*at..];
            let Some(end) = memchr::memchr2(b'\n', b'\r', rest) else {
                unfinished.extend_from_slice(rest);
                *at = chunk.len();
                break;
            };
            *after_cr = rest[end] == b'\r';
            *at += end + 1;
            let ended = if unfinished.is_empty() {
                event.line(&rest[..end], provider)?
            } else {
                unfinished.extend_from_slice(&rest[..end]);
                let ended = event.line(unfinished, provider);
                unfinished.clear();
                ended?
            };
            if ended {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Takes in a chunk that arrived (the one in hand is used up).
    fn take_in(&mut self, mut chunk: Bytes) -> Result<(), ModelError> {
        self.received += chunk.len();
        if self.received > self.max_event_bytes {
            return Err(ModelError::new(
                ModelErrorKind::MalformedResponse,
                self.provider,
                format!("a server-sent event exceeded {} bytes", self.max_event_bytes),
            ));
        }
        if let Some(mut leading) = self.leading.take()
            && (!leading.is_empty() || chunk.first().is_none_or(|&byte| byte == BOM[0]))
        {
            leading.extend_from_slice(&chunk);
            let mut rest = leading.as_slice();
            while let Some(after) = rest.strip_prefix(BOM) {
                rest = after;
            }
            if rest.len() < BOM.len() && BOM.starts_with(rest) {
                // Nothing yet, or what may be the start of a mark.
                self.leading = Some(rest.to_vec());
                return Ok(());
            }
            chunk = Bytes::copy_from_slice(rest);
        }
        self.chunk = chunk;
        self.at = 0;
        Ok(())
    }
}

impl<S> FrameSource for SseFrames<S>
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send + Unpin,
{
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<'_>, ModelError>>> {
        if std::mem::take(&mut self.lent) {
            self.event.clear();
        }
        loop {
            match self.parse() {
                Ok(true) => {
                    self.received = 0;
                    self.lent = true;
                    return Poll::Ready(Some(Ok(self.event.frame())));
                }
                Ok(false) => {}
                Err(error) => {
                    self.source = None;
                    return Poll::Ready(Some(Err(error)));
                }
            }
            let Some(source) = self.source.as_mut() else { return Poll::Ready(None) };
            let taken = match ready!(source.poll_next_unpin(cx)) {
                Some(Ok(chunk)) => self.take_in(chunk),
                Some(Err(error)) => Err(error),
                // An unfinished event at the end is dropped, as the standard says.
                None => {
                    self.source = None;
                    return Poll::Ready(None);
                }
            };
            if let Err(error) = taken {
                self.source = None;
                return Poll::Ready(Some(Err(error)));
            }
        }
    }
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
    use futures_util::stream;

    use super::{body_bytes, sse_frames};
    use crate::model::{ModelError, ModelErrorKind};
    use crate::providers::http::decoder::FrameSource as _;
    use crate::providers::http::decoder::testing;

    /// An event's name and data, owned.
    type Frame = (Option<String>, String);

    fn frame(event: Option<&str>, data: &str) -> Frame {
        (event.map(str::to_owned), data.to_owned())
    }

    async fn frames(chunks: &[&[u8]], limit: usize) -> Vec<Result<Frame, ModelError>> {
        let chunks: Vec<Result<Bytes, ModelError>> = chunks.iter().map(|c| Ok(Bytes::copy_from_slice(c))).collect();
        testing::frames(sse_frames("test", stream::iter(chunks), limit)).await
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
    async fn a_large_chunk_of_many_events_gives_every_event() {
        let body = (0..2_000).fold(String::new(), |mut body, i| {
            let _ = write!(body, "event: e{i}\ndata: {{\"n\":{i}}}\n\n");
            body
        });
        assert!(body.len() > 32 << 10);
        let got = frames(&[body.as_bytes()], 1 << 20).await;
        assert_eq!(got.len(), 2_000);
        for (i, frame) in got.into_iter().enumerate() {
            let frame = frame.unwrap();
            assert_eq!(frame, (Some(format!("e{i}")), format!("{{\"n\":{i}}}")));
        }
    }

    /// An event ended by CR line breaks goes out when its blank line
    /// arrives, without waiting for a byte that might be an LF.
    #[test]
    fn an_event_ended_by_carriage_returns_is_not_held_back() {
        use futures_util::StreamExt as _;

        let chunks = stream::iter([Ok(Bytes::from_static(b"event: e\rdata: a\r\r"))]).chain(stream::pending());
        let mut events = sse_frames("test", chunks, 1 << 20);
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let std::task::Poll::Ready(Some(Ok(first))) = events.poll_frame(&mut cx) else { panic!("no event yet") };
        assert_eq!(frame(first.event, first.data), frame(Some("e"), "a"));
        assert!(events.poll_frame(&mut cx).is_pending());
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
        let got = testing::frames(sse_frames("test", stream::iter(chunks), 1 << 20)).await;
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
        let mut events = sse_frames("test", Box::pin(body_bytes("test", response)), 1 << 20);
        let mut next = async || {
            std::future::poll_fn(|cx| {
                events.poll_frame(cx).map(|next| next.map(|lent| lent.map(|f| frame(f.event, f.data))))
            })
            .await
        };
        assert_eq!(next().await.unwrap().unwrap(), frame(Some("ping"), "{}"));
        release.send(()).unwrap();
        assert_eq!(next().await.unwrap().unwrap(), frame(None, "{\"a\":1}"));
        assert!(next().await.is_none());
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
        let (event, data) = got.into_iter().next().unwrap().unwrap();
        assert_eq!(event.as_deref(), Some("response.completed"));
        assert_eq!(data.len(), text.len() + 11);
    }
}
